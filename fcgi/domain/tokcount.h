/* tokcount: an estimate of how many tokens an LLM's tokenizer makes of a
 * text, pure (no I/O, no tables), for the token budgets of /context and
 * /rules (docs/agents.md "Token budgets").
 *
 * The text is cut into runs, each weighed in hundredths of a token:
 *   an ASCII word (a run of letters)       115, +25 per letter past the 8th
 *   a group of up to 3 ASCII digits        125 (tokenizers split numbers so)
 *   an ASCII punctuation character          50, +25 per run of them
 *   a run of newlines                        5 (spaces and tabs: 0, they
 *                                              join the word that follows)
 *   a Han, kana or Hangul character         90
 *   CJK and full-width punctuation           0 (joins its neighbour)
 *   a 4-byte UTF-8 character (emoji ...)   150
 *   any other character, or invalid byte    50
 * and the sum is rounded up. Fitted on o200k_base (GPT-4o's tokenizer):
 * within +-10% of it on English and Chinese prose, Markdown, code and
 * tables (tests/tokens measures it; docs/agents.md gives the figures). */
#ifndef KNOWHUB_TOKCOUNT_H
#define KNOWHUB_TOKCOUNT_H

#include <stddef.h>

/* The estimated tokens of text[0..len) (UTF-8; any bytes are accepted). */
size_t tokcount_estimate(const char *text, size_t len);

/* tokcount_estimate of a NUL-terminated string. */
size_t tokcount_str(const char *text);

#endif
