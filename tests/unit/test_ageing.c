/* test_ageing: the weight of a verdict by its age (domain/ageing.h): UTC
 * time texts in the forms the store writes, halves per half-life, off at
 * 0, never above 1, and stage 2's quality. */
#include "harness.h"

#include "domain/ageing.h"

#include <math.h>

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

int main(void)
{
    int64_t t, u;
    /* the forms the store writes: a space or a T, a fraction, a Z */
    CHECK(ageing_utc_seconds("1970-01-01 00:00:00", &t) == 0 && t == 0);
    CHECK(ageing_utc_seconds("2026-12-07T01:02:03Z", &t) == 0);
    CHECK(ageing_utc_seconds("2026-12-07 01:02:03", &u) == 0 && t == u);
    CHECK(ageing_utc_seconds("2026-12-07T01:02:03.123456", &u) == 0 && t == u);
    CHECK(t == 1796605323);
    CHECK(ageing_utc_seconds("2026-12-07T01", &u) == 0 && u == t - 2 * 60 - 3);
    CHECK(ageing_utc_seconds("2024-03-01", &t) == 0 && ageing_utc_seconds("2024-02-28", &u) == 0 &&
          t - u == 2 * 86400); /* a leap year */
    CHECK(ageing_utc_seconds("1969-12-31 23:59:59", &t) == 0 && t == -1);
    CHECK(ageing_utc_seconds("", &t) == -1);
    CHECK(ageing_utc_seconds(NULL, &t) == -1);
    CHECK(ageing_utc_seconds("2026-13-01", &t) == -1);
    CHECK(ageing_utc_seconds("2026-12-07X", &t) == -1);
    CHECK(ageing_utc_seconds("2026-12-07T2", &t) == -1);
    CHECK(ageing_utc_seconds("yesterday", &t) == -1);

    /* halves per half-life; off at 0; never above 1 */
    CHECK(near(ageing_weight(0, 30), 1.0));
    CHECK(near(ageing_weight(30 * 86400, 30), 0.5));
    CHECK(near(ageing_weight(90 * 86400, 30), 0.125));
    CHECK(near(ageing_weight(300 * 86400, 0), 1.0));
    CHECK(near(ageing_weight(-5000, 30), 1.0));
    CHECK(ageing_weight(3650L * 86400 * 100, 1) >= 0.0);
    CHECK(ageing_weight(86400, AGEING_HALF_LIFE_MAX) < 1.0);

    CHECK(near(ageing_quality(3, 2.0, 1.0), 3.0));
    CHECK(near(ageing_quality(4, 0.5, 0.25), 4.0));
    /* aged counts that cancel leave exactly the score, whatever the age (a
     * tie with an entry of that quality must not depend on the second) */
    for (int64_t age = 1; age < 400000; age += 997) {
        double w = ageing_weight(age, 45);
        CHECK(ageing_quality(3, 2.0 * w, w) == 3.0);
    }
    return test_summary();
}
