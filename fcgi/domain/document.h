/* document: a knowledge entry as a Markdown document with YAML front matter
 * (the file view, docs/knowledge-files.md). Reads the fields with their
 * coercion (defaults for what is missing or of another type), applies the
 * write rules (auto header, limits, messages) and builds the
 * document of an entry saved through the entry view. */
#ifndef KNOWHUB_DOCUMENT_H
#define KNOWHUB_DOCUMENT_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/buf.h"
#include "base/error.h"
#include "domain/knowledge.h"

/* Reset the document fields of k (title, tags, description, always_apply,
 * source, scenario, content, types, urls, agent_id, message_id, meta,
 * document) from text, a document at category/path. Front matter that is
 * missing, invalid or not a mapping leaves every field at its default
 * (title = file stem, source = manual, alwaysApply = true). */
void document_fill(struct knowledge *k, const char *category, const char *path, const char *text,
                   size_t len);

/* A write: when text has no usable front matter, prepend the
 * header (title, for rules description and alwaysApply, created, updated,
 * source) rendered with libyaml; then check the rule description (100) and
 * the body (rules 350, experiences 2000 characters, stripped). The final
 * document goes to out; on a limit err is set (its key and parameters,
 * docs/api.md "Errors") and -1 is returned. */
int document_prepare(const char *category, const char *path, const char *text, size_t len,
                     struct buf *out, struct error *err);

/* The document of an entry-view entry: front matter from k's fields
 * (title, tags, scenario, types, urls, agent_id, message_id, rules'
 * description and alwaysApply, created, updated, source) then the content. */
void document_for_entry(const struct knowledge *k, struct buf *out);

/* Replace the body of a document, keeping its front matter, into out. */
void document_with_body(const char *document, const char *body, struct buf *out);

/* The body of a document (what follows the front matter). */
const char *document_body(const char *document);

/* The coercion of alwaysApply: absent -> true; false, "false", "no",
 * "off", "0", 0 -> false. */
int document_always_apply(struct json_object *v);

#endif
