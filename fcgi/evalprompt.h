/* evalprompt: the knowledge-evaluation prompt of seed 000, in English or
 * Chinese: mission, current goal, every pending injection, the two
 * dimensions, the five statuses and the JSON output format. */
#ifndef KNOWHUB_EVALPROMPT_H
#define KNOWHUB_EVALPROMPT_H

#include "buf.h"

struct log_entry;

/* Start the prompt (mission and goal) in language "zh" or "en". */
void eval_prompt_begin(struct buf *out, const char *lang, const char *task, const char *goal);
/* Add one pending injection to the list. */
void eval_prompt_entry(struct buf *out, const char *lang, const struct log_entry *e);
/* Finish with the dimensions, the statuses and the output format. */
void eval_prompt_end(struct buf *out, const char *lang, long pending);

#endif
