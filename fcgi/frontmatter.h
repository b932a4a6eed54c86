/* frontmatter: YAML front matter of a Markdown document, read and written
 * with libyaml. Splitting follows the reference's regex
 * \A---[ \t]*\r?\n(.*?\r?\n)---[ \t]*\r?\n? exactly; scalars resolve as
 * YAML 1.1 (PyYAML safe_load): null, booleans (true/false/yes/no/on/off),
 * integers; everything else, dates included, stays text. */
#ifndef KNOWHUB_FRONTMATTER_H
#define KNOWHUB_FRONTMATTER_H

#include <stddef.h>
#include <json-c/json.h>

#include "buf.h"

/* Find a front matter block: 1 with the YAML text at [*yaml_off, +*yaml_len)
 * and the body at *body_off, else 0 (*body_off = 0). */
int frontmatter_split(const char *text, size_t len, size_t *yaml_off, size_t *yaml_len,
                      size_t *body_off);

/* The front matter as a JSON object (caller puts it), or NULL when there is
 * none, it is not valid YAML, or it is not a mapping: then the whole text is
 * body, as in the reference. *body_off receives where the body starts. */
struct json_object *frontmatter_parse(const char *text, size_t len, size_t *body_off);

/* Append "---\n<block YAML of fields>---\n" to out. Keys come in the object's
 * order; strings that would read back as another type are quoted; lists are
 * written in flow style ([a, b]). -1 when out's maximum is reached. */
int frontmatter_render(struct json_object *fields, struct buf *out);

#endif
