/* streams: what the live streams need from the knowledge: MCP sessions'
 * resource subscriptions, and the resources a change of an entry touches. */
#ifndef KNOWHUB_STREAMS_H
#define KNOWHUB_STREAMS_H

#include "base/error.h"
#include "service/ctx.h"
#include "store/store.h"

#include <stddef.h>

/* Subscriptions a token may hold (over all its sessions), and the longest URI. */
#define STREAMS_MAX_SUBSCRIPTIONS 1000
#define STREAMS_URI_MAX 1024
/* An MCP session id: 32 lowercase hex digits (what initialize hands out). */
#define STREAMS_SESSION_LEN 32

/* A new session id into out. */
void streams_new_session(char out[static STREAMS_SESSION_LEN + 1]);
/* Whether s is a session id as initialize hands out. */
int streams_session_valid(const char *s);

/* Subscribe the caller's session to uri (a knowhub:// resource of its
 * space), unsubscribe it, end the session (every subscription); 0, or -1
 * with err set (INVALID_ARGUMENT, LIMIT_EXCEEDED, a store error). */
int svc_subscribe(const struct svc_ctx *c, const char *session, const char *uri, struct error *err);
int svc_unsubscribe(const struct svc_ctx *c, const char *session, const char *uri,
                    struct error *err);
int svc_session_end(const struct svc_ctx *c, const char *session, struct error *err);

/* The resources a change touches, each passed to each(arg, uri):
 * knowhub://entries/{id}, knowhub://{category}/{path} (before and after a
 * rename or move) and knowhub://rules when a rule changed. Whether the
 * list of resources changed (created, deleted, renamed or moved). */
int streams_change_uris(const struct store_change *ch, void (*each)(void *, const char *),
                        void *arg);

#endif
