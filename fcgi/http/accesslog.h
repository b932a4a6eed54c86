/* accesslog: knowhub's JSON-lines logs under $KNOWHUB_DATA/logs: access.jsonl
 * (one line per request) and audit.jsonl (one line per committed audit row).
 * One log is shared by every thread: each builds its line in its own buffer
 * and hands it over with one write(2) on an O_APPEND descriptor, so lines
 * never interleave and no lock is taken (but after a short write, which a
 * regular file makes only when it is failing: its rest follows at once).
 * Past max_bytes, the writer that crossed it renames name -> name.1 -> ...
 * name.keep and swaps a fresh file in under the same descriptor (dup2), so
 * the other writers never see a closed one. An external logrotate with
 * copytruncate works too. */
#ifndef KNOWHUB_ACCESSLOG_H
#define KNOWHUB_ACCESSLOG_H

#include <stddef.h>

#include "base/buf.h"

struct accesslog;

/* Open (create, append to) path; rotate past max_bytes (0: never) keeping
 * `keep` old files. NULL, after a message on stderr, when it cannot. */
struct accesslog *accesslog_open(const char *path, long long max_bytes, int keep);
void accesslog_close(struct accesslog *log);

/* Append one complete line (ending in \n), after a short write the rest
 * too. 0, or -1 when the line (or its end) could not be written: the
 * caller counts it (metrics_log_line_lost); the first failure of a run is
 * said on stderr, and so is the first write that works after it. log may
 * be NULL (no log: 0). */
int accesslog_write(struct accesslog *log, const char *line, size_t n);

/* What one access line records. Strings may be NULL (written as null). */
struct access_entry {
    const char *request_id;
    const char *space;
    const char *actor;    /* "token:<id>[:<label>]": never the token */
    const char *token_id; /* the token's id */
    const char *method;
    const char *route; /* the route pattern, "unmatched" when none matched */
    int status;
    double duration_ms;
    size_t bytes; /* the response body */
};

/* The JSON line of a request, or of an audit row, into out (reset first):
 * {"time":"...Z","type":"access",...}\n. */
void accesslog_access_line(struct buf *out, const struct access_entry *e);
/* The access line of a request whose answer the client did not receive in
 * full (the connection closed while knowhub wrote): the same fields, then
 * "delivered":false. */
void accesslog_undelivered_line(struct buf *out, const struct access_entry *e);
void accesslog_audit_line(struct buf *out, const char *request_id, const char *ts,
                          const char *space, const char *actor, const char *action,
                          const char *target);

#endif
