/* frontmatter: YAML front matter of a Markdown document, read and written
 * with libyaml. Splitting follows the reference's regex
 * \A---[ \t]*\r?\n(.*?\r?\n)---[ \t]*\r?\n? exactly; scalars resolve as
 * YAML 1.1 (PyYAML safe_load): null, booleans (true/false/yes/no/on/off),
 * integers; everything else, dates included, stays text. */
#ifndef KNOWHUB_FRONTMATTER_H
#define KNOWHUB_FRONTMATTER_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/buf.h"

/* Find a front matter block: 1 with the YAML text at [*yaml_off, +*yaml_len)
 * and the body at *body_off, else 0 (*body_off = 0). */
int frontmatter_split(const char *text, size_t len, size_t *yaml_off, size_t *yaml_len,
                      size_t *body_off);

/* The budget of a converted front matter (docs/knowledge-files.md): YAML
 * anchors and aliases are refused outright (an alias bomb of a few hundred
 * bytes expands to millions of values), and the JSON it converts to holds at
 * most FRONTMATTER_MAX_NODES values (containers and scalars; keys are not
 * counted), FRONTMATTER_MAX_BYTES bytes (json-c's plain text), nested at
 * most FRONTMATTER_MAX_DEPTH levels below the root mapping. */
#define FRONTMATTER_MAX_NODES 4096
#define FRONTMATTER_MAX_BYTES 262144
#define FRONTMATTER_MAX_DEPTH 32

enum frontmatter_status {
    FRONTMATTER_NONE,   /* no block, not valid YAML, or not a mapping: all of it is body */
    FRONTMATTER_OK,     /* a mapping within the budget */
    FRONTMATTER_REFUSED /* anchors or aliases, or over the budget */
};

/* Read the front matter of text. FRONTMATTER_OK: *meta is the mapping
 * (caller puts it) and *body_off where the body starts. FRONTMATTER_NONE:
 * *meta NULL, *body_off 0 (the whole text is body, as in the reference).
 * FRONTMATTER_REFUSED: *meta NULL, *body_off after the block, *why the
 * reason (a static string). Work and memory stay within the budget. */
enum frontmatter_status frontmatter_read(const char *text, size_t len, struct json_object **meta,
                                         size_t *body_off, const char **why);

/* The front matter as a JSON object (caller puts it), or NULL when there is
 * none, it is not valid YAML, it is not a mapping, or it is refused: then
 * the whole text is body (*body_off 0), as the reference does with front
 * matter it cannot load. *body_off receives where the body starts. */
struct json_object *frontmatter_parse(const char *text, size_t len, size_t *body_off);

/* 1 when meta is within FRONTMATTER_MAX_NODES and FRONTMATTER_MAX_BYTES. */
int frontmatter_within_budget(struct json_object *meta);

/* The libyaml this binary runs with ("0.2.5"). */
const char *frontmatter_yaml_version(void);

/* Append "---\n<block YAML of fields>---\n" to out. Keys come in the object's
 * order; strings that would read back as another type are quoted; lists are
 * written in flow style ([a, b]). -1 when out's maximum is reached. */
int frontmatter_render(struct json_object *fields, struct buf *out);

#endif
