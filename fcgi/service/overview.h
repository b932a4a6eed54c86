/* overview: what the panel's home screen shows of the caller's space (GET
 * /api/overview): how much knowledge it holds, how busy its agents were this
 * week, what changed last, what agents were given most, what hurt most. */
#ifndef KNOWHUB_OVERVIEW_H
#define KNOWHUB_OVERVIEW_H

#include "base/error.h"
#include "service/ctx.h"

/* The most entries each list of the overview holds. */
#define OVERVIEW_LIST_MAX 5
/* "This week": the traces created in the last this many seconds. */
#define OVERVIEW_WEEK_SECONDS (7L * 24 * 3600)

/* {counts: {rules, experiences, traces, traces_week}, week_since,
 * recent: [...], most_injected: [...], most_harmful: [...]}, each list at
 * most OVERVIEW_LIST_MAX items {id, category, path, title, updated_at}
 * (most_injected with injections, most_harmful with harmful). */
int svc_overview(const struct svc_ctx *c, struct json_object **data, struct error *err);

#endif
