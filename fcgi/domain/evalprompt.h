/* evalprompt: the prompt that asks an agent to evaluate the knowledge
 * injected into its trace, in English or Chinese: mission, current goal,
 * every pending injection, the two dimensions, the five statuses and the
 * JSON output format. Pure text: the caller reads the injections. */
#ifndef KNOWHUB_EVALPROMPT_H
#define KNOWHUB_EVALPROMPT_H

#include "base/buf.h"

/* One pending injection as the prompt shows it (strings borrowed). */
struct eval_prompt_item {
    const char *knowledge_id;
    const char *task;    /* the entry's scenario */
    const char *content; /* the entry's content as logged */
    long injected_at_sequence;
    const char *goal_id;
};

/* Start the prompt (mission and goal) in language "zh" or "en". */
void eval_prompt_begin(struct buf *out, const char *lang, const char *task, const char *goal);
/* At most this many pending injections go into one prompt, in at most
 * EVAL_PROMPT_ENTRY_BYTES bytes together; the rest are counted as left out,
 * and the prompt says how many (the evaluator asks again after answering). */
#define EVAL_PROMPT_MAX_ENTRIES 100
#define EVAL_PROMPT_ENTRY_BYTES (4 * 1024 * 1024)

/* Add one pending injection to the list: its task on one line (at most
 * 2000 characters), its content indented under it, so stored text cannot
 * start a section of the prompt. 0, or -1 (out unchanged) when it would pass
 * EVAL_PROMPT_ENTRY_BYTES of entries. */
int eval_prompt_entry(struct buf *out, const char *lang, const struct eval_prompt_item *e);
/* Finish with how many pending injections were left out (when any), the
 * dimensions, the statuses and the output format. */
void eval_prompt_end(struct buf *out, const char *lang, long included, long omitted);

#endif
