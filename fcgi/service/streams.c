/* streams: MCP sessions' resource subscriptions, kept in the store so any
 * node's stream of the session sees them, and the resources a change of an
 * entry touches (app/streams.c sends them out). */
#include "service/streams.h"
#include "base/buf.h"
#include "base/util.h"

#include <sodium.h>
#include <string.h>

#define URI_SCHEME "knowhub://"

void streams_new_session(char out[static STREAMS_SESSION_LEN + 1])
{
    unsigned char rnd[STREAMS_SESSION_LEN / 2];
    randombytes_buf(rnd, sizeof rnd);
    sodium_bin2hex(out, STREAMS_SESSION_LEN + 1, rnd, sizeof rnd);
}

int streams_session_valid(const char *s)
{
    size_t n = 0;
    if (!s)
        return 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return 0;
    return n == STREAMS_SESSION_LEN;
}

/* A subscription's session and URI: a session initialize handed out, a
 * knowhub:// URI of printable ASCII within STREAMS_URI_MAX. What the URI
 * names need not exist (yet): a subscription to a path that is created
 * later is told when it is. */
static int subscription_valid(const char *session, const char *uri, struct error *err)
{
    size_t n = uri ? strlen(uri) : 0;
    if (!streams_session_valid(session)) {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "A subscription needs the session initialize handed out (the Mcp-Session-Id "
                  "header)");
        return -1;
    }
    if (n <= strlen(URI_SCHEME) || n > STREAMS_URI_MAX ||
        strncmp(uri, URI_SCHEME, strlen(URI_SCHEME)) != 0) {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "uri must be a knowhub:// resource of at most %d bytes", STREAMS_URI_MAX);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)uri[i] <= ' ' || (unsigned char)uri[i] >= 0x7f) {
            error_set(err, E_INVALID_REQUEST, NULL,
                      "uri must be printable ASCII (percent-encode the rest)");
            return -1;
        }
    return 0;
}

static int store_result(int rc, struct error *err)
{
    if (rc == STORE_QUOTA) {
        error_set(err, E_LIMIT_EXCEEDED, NULL,
                  "A token holds at most %d subscriptions: unsubscribe from some first",
                  STREAMS_MAX_SUBSCRIPTIONS);
        return -1;
    }
    if (rc) {
        store_status_error(rc, "subscription", err);
        return -1;
    }
    return 0;
}

int svc_subscribe(const struct svc_ctx *c, const char *session, const char *uri, struct error *err)
{
    if (subscription_valid(session, uri, err))
        return -1;
    return store_result(
        store_sub_put(c->st, c->space, c->token_id, session, uri, STREAMS_MAX_SUBSCRIPTIONS), err);
}

int svc_unsubscribe(const struct svc_ctx *c, const char *session, const char *uri,
                    struct error *err)
{
    if (subscription_valid(session, uri, err))
        return -1;
    return store_result(store_sub_delete(c->st, c->token_id, session, uri), err);
}

int svc_session_end(const struct svc_ctx *c, const char *session, struct error *err)
{
    if (!streams_session_valid(session)) {
        error_set(err, E_INVALID_REQUEST, NULL, "No such session");
        return -1;
    }
    return store_result(store_sub_end(c->st, c->token_id, session), err);
}

int streams_change_uris(const struct store_change *ch, void (*each)(void *, const char *),
                        void *arg)
{
    struct buf uri;
    int moved = strcmp(ch->path, ch->old_path) != 0 || strcmp(ch->category, ch->old_category) != 0;
    buf_init(&uri, STREAMS_URI_MAX * 2);
    buf_addf(&uri, URI_SCHEME "entries/%s", ch->id);
    each(arg, uri.data);
    buf_reset(&uri);
    buf_addf(&uri, URI_SCHEME "%s/%s", ch->category, ch->path);
    each(arg, uri.data);
    if (moved) {
        buf_reset(&uri);
        buf_addf(&uri, URI_SCHEME "%s/%s", ch->old_category, ch->old_path);
        each(arg, uri.data);
    }
    if (!strcmp(ch->category, "rules") || !strcmp(ch->old_category, "rules"))
        each(arg, URI_SCHEME "rules");
    buf_release(&uri);
    return moved || strcmp(ch->action, "updated") != 0;
}
