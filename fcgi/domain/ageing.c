/* ageing: the weight of a verdict by its age, and stage 2's quality
 * (domain/ageing.h). */
#include "domain/ageing.h"

#include <math.h>
#include <stddef.h>

/* n digits of s as a number into *out; 0, or -1 when one is no digit. */
static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar. */
static int64_t days_from_civil(int y, int m, int d)
{
    int64_t era, yoe, doy, doe;
    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int ageing_utc_seconds(const char *text, int64_t *out)
{
    int y, mo, d, h = 0, mi = 0, s = 0;
    if (!text || digits(text, 4, &y) || text[4] != '-' || digits(text + 5, 2, &mo) ||
        text[7] != '-' || digits(text + 8, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > 31)
        return -1;
    if (text[10] == 'T' || text[10] == ' ') {
        if (digits(text + 11, 2, &h) || h > 23)
            return -1;
        if (text[13] == ':' && (digits(text + 14, 2, &mi) || mi > 59))
            return -1;
        if (text[13] == ':' && text[16] == ':' && (digits(text + 17, 2, &s) || s > 60))
            return -1;
    } else if (text[10] != '\0') {
        return -1;
    }
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
    return 0;
}

double ageing_weight(int64_t age_seconds, long half_life_days)
{
    if (half_life_days <= 0 || age_seconds <= 0)
        return 1.0;
    return exp2(-(double)age_seconds / ((double)half_life_days * 86400.0));
}

double ageing_quality(long score, double helpful, double harmful)
{
    /* rounded to a millionth: aged counts that cancel (a helpful and a
     * harmful verdict of one hour) leave no rounding noise to break a tie
     * with an entry of the same quality, so the order does not flicker
     * with the second the search runs at */
    return round(((double)score + helpful - 2.0 * harmful) * 1e6) / 1e6;
}
