/* when: the moments an entry carries (expires_at, review_after): UTC text
 * "YYYY-MM-DDTHH:MM:SSZ", which orders as text. A date "YYYY-MM-DD" is its
 * first second. Pure: no clock, no store (service/timing.c reads the clock). */
#ifndef KNOWHUB_WHEN_H
#define KNOWHUB_WHEN_H

#include <stddef.h>

struct buf;

/* "YYYY-MM-DDTHH:MM:SSZ" and its NUL. */
#define WHEN_TEXT 21

/* Parse text[0..len) (a date, or a date and time in UTC with Z; years
 * 1970..9999, a real day of its month) into its canonical form: 0, or -1
 * when it is neither. */
int when_parse(const char *text, size_t len, char out[static WHEN_TEXT]);

/* document with its front matter's expires_at, review_after (NULL: the
 * key absent) and pinned (0: absent) set to these, into out: the document
 * itself when they already say so (a date there counts as its first
 * second), else its front matter rendered again with them (one made when
 * it has none). */
void when_document(const char *document, const char *expires_at, const char *review_after,
                   int pinned, struct buf *out);

#endif
