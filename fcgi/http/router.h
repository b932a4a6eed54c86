/* router: the route table and dispatch. A route is a method, a pattern whose
 * {name} segments become req->params, the least role allowed (ROLE_NONE:
 * public) and a handler. The most specific matching pattern wins; a path
 * that matches only with other methods is 405 with Allow. */
#ifndef KNOWHUB_ROUTER_H
#define KNOWHUB_ROUTER_H

#include "http/http.h"

typedef void (*handler_fn)(struct request *req, struct response *res);

struct route {
    const char *method;
    const char *pattern;
    enum role role;
    handler_fn handler;
    int cached; /* a pure read of the space: answers may come from the thread's cache */
};

/* Answer one request: route (404/405), authenticate (401/403), parse the
 * query string (400), run the handler, and make sure a reply was written
 * (500 otherwise). req->store and req->cfg must be set. */
void router_dispatch(struct request *req, struct response *res);

/* Dispatch over table[0..n) from now on (app/routes.c installs KnowHub's
 * before any request; the table is borrowed for the process's life). */
void router_use(const struct route *table, size_t n);
/* The installed route table: *n receives its length. */
const struct route *router_table(size_t *n);

#endif
