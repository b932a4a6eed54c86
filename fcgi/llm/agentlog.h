/* agentlog: the reasoning log of LLM calls and agent sessions (docs/llm.md).
 * KNOWHUB_AGENT_LOG=off (default: no I/O at all), on (events without message
 * bodies) or verbose (everything, secrets redacted); any other value is on.
 * One JSON line per event in
 * $KNOWHUB_DATA/agent-logs/<UTC date>/<safe identity>/<safe session>-<agent>.jsonl;
 * date directories older than 30 days are removed at start. */
#ifndef KNOWHUB_AGENTLOG_H
#define KNOWHUB_AGENTLOG_H

#include <json-c/json.h>

#include "base/buf.h"

struct config;

enum agentlog_mode { AGENTLOG_OFF, AGENTLOG_ON, AGENTLOG_VERBOSE };

enum agentlog_mode agentlog_mode(const struct config *cfg);

/* Append one event. fields (taken; may be NULL) come first; step_type, ts,
 * session_id, agent_type and identity_id are set after them and win. */
void agentlog_write(const struct config *cfg, const char *identity, const char *session_id,
                    const char *agent_type, const char *step_type, struct json_object *fields);

/* Replace the values of secret-looking keys by "***", recursively. */
void agentlog_redact(struct json_object *v);

/* werkzeug's secure_filename, roughly: [A-Za-z0-9_.-] kept, blanks to '_',
 * leading and trailing '.' and '_' dropped ("user:alice@example.com" ->
 * "useraliceexample.com"); "anonymous" when nothing is left. */
void agentlog_safe_name(const char *name, struct buf *out);

/* Remove date directories older than `days` days; returns how many. */
int agentlog_cleanup(const struct config *cfg, int days);

#endif
