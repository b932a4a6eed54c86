/* distill: turn an analysis (the experience_context the browser builds from
 * a leaf table's chain of an analysis session) into a reusable experience
 * document — with the LLM when configured, else a deterministic local
 * distillation of the same context. */
#ifndef KNOWHUB_DISTILL_H
#define KNOWHUB_DISTILL_H

#include <json-c/json.h>

#include "base/buf.h"

struct svc_ctx;
struct llm_reply;

/* The language the distilled body is written in: the first Accept-Language
 * tag when it is zh, ja, ko, fr, de, es or pt, else "en" (the
 * distiller's languages; the local distillation itself writes Chinese or English). */
const char *distill_language(const char *accept_language);

/* The context summary the distiller reads (truncated:
 * question 500, interaction items 500, attempts 400, code 800, the last 20
 * dialog messages counted), as text. */
void distill_summary(struct json_object *ctx, struct buf *out);

/* A Markdown document with front matter (title, tags, created, updated,
 * source: distill-local, source_context) built from the context alone, in
 * lang ("zh" or anything else for English). */
void distill_local(struct json_object *ctx, const char *lang, struct buf *out);

/* The distiller's instructions (the LLM's system message): what to
 * extract and the document's shape, the body in lang (distill_language's
 * codes), appended to out. MCP's distill_experience prompt gives a
 * client's own model the same text. */
void distill_instructions(const char *lang, struct buf *out);

/* The longest a distillation may wait for the LLM, all calls together: below
 * nginx's fastcgi_read_timeout (300 s, nginx/knowhub_fastcgi.conf), so the
 * caller gets knowhub's answer (LLM_TIMEOUT), never nginx's 504. */
#define DISTILL_MAX_TIMEOUT_SECONDS 240

/* Ask the LLM for the document (one condensing retry when the body is over
 * 2000 characters); 0 with it in out, else -1 with r's error. model NULL:
 * the server's model; timeout_ms 0: the configured one. Both calls share
 * the one timeout, at most DISTILL_MAX_TIMEOUT_SECONDS. */
int distill_llm(const struct svc_ctx *c, struct json_object *ctx, const char *lang,
                const char *model, long timeout_ms, struct buf *out, struct llm_reply *r);

/* Make a distiller's text a proper document: front matter parsed or, when
 * missing, a fallback header (first line as title, at most 80
 * characters, or "Untitled Knowledge"; tags []); then source, created,
 * updated and source_context set. The result goes to out. */
void distill_finish(const char *text, const char *source, const char *context_id, struct buf *out);

/* The file name: path_slug of the title plus ".md"; without a letter or
 * digit in the title, "<context_id>.md" (a valid id) or
 * "experience-YYYYMMDD.md". */
void distill_file_name(const char *title, const char *context_id, struct buf *out);

#endif
