/* writerate: how many items one token may write a second
 * (KNOWHUB_WRITE_RATE, KNOWHUB_WRITE_BURST; docs/operations.md "Quotas"),
 * counted in this process. */
#ifndef KNOWHUB_WRITERATE_H
#define KNOWHUB_WRITERATE_H

#include "base/error.h"

struct svc_ctx;

/* Admit a write of items (entries created, changed, deleted or restored,
 * feedback reports, evaluations) by c's token, before any of it is done:
 * 0, or -1 with err RATE_LIMITED (retry, params rate, items and
 * retry_after, whole seconds). A caller without a token (the CLI, a job)
 * is not counted. */
int write_admit(const struct svc_ctx *c, long items, struct error *err);

#endif
