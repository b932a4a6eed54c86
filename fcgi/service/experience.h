/* experience: the save-experience flow's end as an operation: check the
 * analysis context, distill it with the LLM or locally (service/distill.c),
 * and save the result as a new experience, never over an existing one
 * (-2, -3 ... appended to its name). */
#ifndef KNOWHUB_EXPERIENCE_H
#define KNOWHUB_EXPERIENCE_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

/* body {experience_context: {user_question, dialog?, interaction?,
 * result_summary, context_id?}, model?, category_hint?, timeout_seconds?}:
 * {path, category, id, title, source} of the new experience (a new object,
 * the caller's) and 0, or -1 with err set. */
int svc_distill_experience(const struct svc_ctx *c, struct json_object *body,
                           struct json_object **data, struct error *err);

#endif
