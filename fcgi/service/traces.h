/* traces: the feedback loop. A trace (an agent's task) has a knowledge log
 * of injections; an evaluator's verdicts update the log and roll up into the
 * entries' counters, which the next search ranks by. Each operation gives
 * its answer's data (a new JSON object, the caller's) and 0, or -1 with err
 * set to the error REST and MCP answer with. */
#ifndef KNOWHUB_TRACES_H
#define KNOWHUB_TRACES_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

/* The log's page size: default and largest ?limit. */
#define TRACE_LOG_PAGE_DEFAULT 100
#define TRACE_LOG_PAGE_MAX 1000

/* 0 when trace_id is a valid trace id (1 to 128 of A-Z a-z 0-9 . _ : -,
 * not . or ..), else -1 with INVALID_REQUEST in err. */
int svc_trace_id_check(const char *trace_id, struct error *err);

/* Create a trace (or find it): body {trace_id?, task?}; a missing trace_id
 * gets a random one. Data: the trace plus "created". */
int svc_trace_create(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err);
/* A page of the space's traces: the items (a new array) and the total. */
int svc_trace_list(const struct svc_ctx *c, long limit, long offset, struct json_object **items,
                   long *total, struct error *err);
/* One trace with its counts. */
int svc_trace_get(const struct svc_ctx *c, const char *trace_id, struct json_object **data,
                  struct error *err);
/* A page of the trace's knowledge log (only the pending injections when
 * pending_only): {trace_id, entries, total, limit, offset}. */
int svc_trace_log(const struct svc_ctx *c, const char *trace_id, int pending_only, long limit,
                  long offset, struct json_object **data, struct error *err);
/* Log an injection, body {knowledge_id, goal_id?, injected_at_sequence?}
 * (REST then answers with the log, svc_trace_log). */
int svc_trace_inject(const struct svc_ctx *c, const char *trace_id, struct json_object *body,
                     struct error *err);
/* The evaluation prompt of the trace's pending injections, in the caller's
 * language; goal (may be NULL) is the current goal. */
int svc_trace_eval_prompt(const struct svc_ctx *c, const char *trace_id, const char *goal,
                          struct json_object **data, struct error *err);
/* Record an evaluator's verdicts, body {trigger, output? | evaluations?}:
 * all or nothing, in one transaction. Data: {trace_id, trigger, strategy,
 * updated, unmatched}. */
int svc_trace_evaluate(const struct svc_ctx *c, const char *trace_id, struct json_object *body,
                       struct json_object **data, struct error *err);

#endif
