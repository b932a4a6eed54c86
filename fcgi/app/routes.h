/* routes: the route table of KnowHub (app/routes.c). */
#ifndef KNOWHUB_ROUTES_H
#define KNOWHUB_ROUTES_H

#include "http/router.h"

/* Hand the route table to the router (router_use): once, before dispatch. */
void routes_install(void);

#endif
