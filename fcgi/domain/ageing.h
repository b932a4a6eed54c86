/* ageing: evidence that ages (docs/conflicts.md#evidence-that-ages). A
 * helpful or harmful verdict counts 2^(-age / half-life) at query time;
 * nothing here is written back. Pure: no store, no clock (the caller
 * passes "now"), thread-safe. */
#ifndef KNOWHUB_AGEING_H
#define KNOWHUB_AGEING_H

#include <stdint.h>

/* The largest half-life a space may set, in days (0 = ageing off). */
#define AGEING_HALF_LIFE_MAX 3650

/* Seconds since the epoch of a UTC time text "YYYY-MM-DD[T ]HH[:MM[:SS]]"
 * (anything after the seconds, a fraction or a Z, is ignored; a date alone
 * is its midnight). 0, or -1 when the text is no such time. */
int ageing_utc_seconds(const char *text, int64_t *out);

/* The weight of a verdict age_seconds old: 2^(-age / half_life), 1 when
 * half_life_days <= 0 (ageing off) or the verdict is not in the past. */
double ageing_weight(int64_t age_seconds, long half_life_days);

/* Stage 2's quality: score + helpful - 2 * harmful (counted or aged),
 * rounded to a millionth (equal qualities stay equal). */
double ageing_quality(long score, double helpful, double harmful);

#endif
