/* when: the moments an entry carries (expires_at, review_after): UTC text
 * "YYYY-MM-DDTHH:MM:SSZ", which orders as text. A date "YYYY-MM-DD" is its
 * first second. Pure: no clock, no store (service/timing.c reads the clock). */
#ifndef KNOWHUB_WHEN_H
#define KNOWHUB_WHEN_H

#include <stddef.h>

/* "YYYY-MM-DDTHH:MM:SSZ" and its NUL. */
#define WHEN_TEXT 21

/* Parse text[0..len) (a date, or a date and time in UTC with Z; years
 * 1970..9999, a real day of its month) into its canonical form: 0, or -1
 * when it is neither. */
int when_parse(const char *text, size_t len, char out[static WHEN_TEXT]);

#endif
