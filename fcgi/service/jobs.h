/* jobs: long work (slim, embed) runs as a job in knowhub's job thread, outside any
 * request: a client starts it, then follows GET /api/jobs/{id} (status,
 * progress done/total, result). Jobs live in the jobs table, so several
 * knowhub processes share them and a restart resumes them. */
#ifndef KNOWHUB_JOBS_H
#define KNOWHUB_JOBS_H

#include <json-c/json.h>

struct store;
struct llm;
struct config;

/* Queue a job of kind ("slim", "embed") with its parameters; its id goes to
 * id_out (at least 40 bytes). A space has at most one queued or running job
 * of a kind: when one is, it answers instead (its id, *existing set, its
 * params kept) and nothing is queued, so no tenant fills the queue that
 * every space's jobs share. Returns a store status. */
int jobs_start(struct store *st, const char *space, const char *kind, struct json_object *params,
               const char *actor, char *id_out, int *existing);

/* Run the oldest queued job, if any, to its end. Returns 1 when one ran, 0
 * when none waited, -1 on a store error. */
struct metrics;
/* Its run time goes to m (the job thread's counters; may be NULL). */
int jobs_run_next(struct store *st, struct llm *llm, const struct config *cfg, struct metrics *m);

/* The JSON of a job row. */
struct job_info;
struct json_object *jobs_to_json(const struct job_info *j);

#endif
