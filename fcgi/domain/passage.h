/* passage: the part of a text where a query's terms stand densest
 * (docs/search.md "Passages"), with the offsets of the words that matched,
 * pure: no I/O. Words match as search terms do (tokenize_terms: folded and
 * stemmed), so "recommended" is marked for a query about a recommendation. */
#ifndef KNOWHUB_PASSAGE_H
#define KNOWHUB_PASSAGE_H

#include <stddef.h>

#define PASSAGE_CHARS 300   /* about how long a passage is, in characters */
#define PASSAGE_MAX_HITS 32 /* most marked words in one passage */

/* A matched word: its first character and length, in characters (Unicode
 * code points), from the start of the passage. */
struct passage_hit {
    size_t start, length;
};

struct passage {
    size_t start, end; /* the passage: bytes [start, end) of the text */
    size_t offset;     /* characters of the text before it */
    size_t n;          /* hits */
    size_t terms;      /* distinct query terms in it (0: none matched) */
    struct passage_hit hits[PASSAGE_MAX_HITS];
};

/* The window of about width characters of text[0..len) (valid UTF-8) that
 * holds the most distinct query terms (terms[0..n): tokenize_terms output),
 * then the most matches, the earliest on a tie, cut at spaces where it can;
 * with no term found, the start of the text. */
void passage_find(const char *text, size_t len, char *const *terms, size_t n, size_t width,
                  struct passage *out);

#endif
