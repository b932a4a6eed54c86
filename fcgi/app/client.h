/* client: the content commands' HTTP client for KnowHub's REST API
 * (libcurl; llm/ keeps its own client, which the floors keep away from
 * app/'s code). Where to call: --url, else KNOWHUB_URL, else the local
 * server at http://$KNOWHUB_HOST:$KNOWHUB_PORT. With which token:
 * --token-file, else KNOWHUB_TOKEN (the token itself), else
 * KNOWHUB_TOKEN_FILE, else, in local mode only, $KNOWHUB_DATA/admin.token.
 * Budgets: connect and total timeouts, an answer of at most 16 MiB, no
 * redirects, http and https only. Every failure is said once on stderr as
 * "knowhub: CODE: message" and becomes an exit status (enum client_exit). */
#ifndef KNOWHUB_CLIENT_H
#define KNOWHUB_CLIENT_H

#include <json-c/json.h>

#include "base/buf.h"
#include "base/config.h"

/* The exit statuses of the content commands (docs/cli.md). */
enum client_exit {
    CLIENT_EXIT_OK = 0,
    CLIENT_EXIT_SERVER = 1,    /* network, timeout, 5xx, an answer that is not KnowHub's */
    CLIENT_EXIT_USAGE = 2,     /* the command line is wrong */
    CLIENT_EXIT_NOT_FOUND = 3, /* NOT_FOUND, HTTP 404 */
    CLIENT_EXIT_AUTH = 4,      /* no token, UNAUTHORIZED or FORBIDDEN, HTTP 401/403 */
    CLIENT_EXIT_REFUSED = 5,   /* the request was refused: INVALID_REQUEST, CONFLICT, ... */
};

#define CLIENT_MAX_ANSWER ((size_t)16 << 20)
#define CLIENT_CONNECT_TIMEOUT_MS 10000L
#define CLIENT_TIMEOUT_MS 60000L
/* A token is at most this long (knowhub's are 87 bytes). */
#define CLIENT_MAX_TOKEN 512

struct client;

/* The local server's base URL, http://$KNOWHUB_HOST:$KNOWHUB_PORT (default
 * 127.0.0.1:8080, where ./run.sh serves; an IPv6 host in brackets, no
 * trailing slash), appended to out: what local mode calls and login-link
 * prints. -1 after a message on stderr when KNOWHUB_PORT is not a port or
 * the URL outgrows out. */
int client_local_url(struct buf *out);

/* Resolve the URL and the token (url and token_file: the options, NULL when
 * not given) and make a client. CLIENT_EXIT_OK with *out set (caller frees
 * with client_free), or another status with the reason said on stderr. */
int client_open(const struct config *cfg, const char *url, const char *token_file,
                struct client **out);
void client_free(struct client *c);

/* Append s to b percent-encoded (a path segment or a query value). */
void client_add_escaped(struct client *c, struct buf *b, const char *s);

/* Call METHOD path (the part after the base URL, already encoded, from
 * "/api/") with body (JSON text, or NULL for none). CLIENT_EXIT_OK with
 * *data the answer's "data" (caller puts), or another status with the
 * error said on stderr and *data NULL. */
int client_call(struct client *c, const char *method, const char *path, const char *body,
                struct json_object **data);

/* The exit status of one of the API's error codes (an unknown code: 1). */
int client_exit_of_code(const char *code);
/* The exit status of an HTTP status whose answer is not KnowHub's JSON. */
int client_exit_of_http(long status);

#endif
