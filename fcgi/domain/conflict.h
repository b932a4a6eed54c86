/* conflict: the local contradiction detector, pure (no store, no I/O, no
 * LLM). Given two knowledge entries it says whether the second duplicates,
 * contradicts, refines or is unrelated to the first, with a short English
 * reason naming the evidence (docs/conflicts.md "The local detector").
 *
 * Each entry's text (title, scenario, content) is cut into clauses at
 * sentence punctuation and line breaks; domain/tokenize.h's search terms are
 * its words, and a table of cue words (use/avoid, always/never, not,
 * 必须/不要/禁止 ...) gives each clause's statements: a polarity on an axis
 * and a target (the words it is about). Numbers with a unit are read with
 * the word before them as their key. A contradiction is two statements on
 * the same axis and target with opposite signs, or two different values for
 * the same key and unit, between entries on the same topic. The work is
 * O(n log n) in the words of the inputs, in one allocation of fixed size. */
#ifndef KNOWHUB_CONFLICT_H
#define KNOWHUB_CONFLICT_H

#include <stddef.h>

#include "base/buf.h"

/* The bytes of an entry read (title, scenario and content together, cut on
 * a UTF-8 boundary): a longer entry is judged by its beginning. */
#define CONFLICT_MAX_INPUT (16 * 1024)

enum conflict_verdict {
    CONFLICT_UNRELATED,    /* "unrelated" */
    CONFLICT_DUPLICATE,    /* "duplicate" */
    CONFLICT_REFINEMENT,   /* "refinement" */
    CONFLICT_CONTRADICTION /* "contradiction" */
};

/* One entry as the caller has it: NUL-terminated strings, NULL for empty.
 * Borrowed for the call only. */
struct conflict_entry {
    const char *title;
    const char *scenario;
    const char *content;
};

/* The verdict on a pair and the figures it came from. */
struct conflict_result {
    enum conflict_verdict verdict;
    double jaccard;     /* shared words / all words of both */
    double containment; /* shared words / the words of the smaller entry */
};

/* Judge b against a. Fills out and writes the reason (one line of English,
 * at most a few hundred bytes; quoted evidence is cut short) to reason,
 * which is reset first. Returns 0, or -1 when reason failed (out is still
 * filled). Thread-safe. */
int conflict_check(const struct conflict_entry *a, const struct conflict_entry *b,
                   struct conflict_result *out, struct buf *reason);

/* The stable name of a verdict ("contradiction" ...), or "unknown". */
const char *conflict_verdict_name(enum conflict_verdict v);

/* The verdict named name (one of the four names above) into *v: 0, or -1
 * for any other text (an LLM's answer is checked with it). */
int conflict_verdict_parse(const char *name, enum conflict_verdict *v);

/* The longest reason kept from an LLM's answer, in characters. */
#define CONFLICT_LLM_REASON_MAX 500

/* An LLM's answer text[0..len) to "judge this pair": a JSON object
 * {"verdict": one of the four names, "reason": a string, not empty} found from its
 * first '{' to its last '}' (so a fenced answer or prose around it is
 * read too). 0 with *v and reason (reset, then one line of at most
 * CONFLICT_LLM_REASON_MAX characters), or -1 for anything else (the
 * caller falls back to the local detector). */
int conflict_llm_answer_parse(const char *text, size_t len, enum conflict_verdict *v,
                              struct buf *reason);

/* The cue table (always, never, not, use, avoid, 必须, 不要 ...): its number of
 * rows, and row i's word with its axis ("polarity", "presence", "amount",
 * "order") and sign (+1 or -1); NULL past the end. */
size_t conflict_cue_count(void);
const char *conflict_cue_word(size_t i, const char **axis, int *sign);

#endif
