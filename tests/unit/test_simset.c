/* test_simset: texts as sets of hashed tokens (domain/simset.h): the token
 * reading ignores order and stop words, the shingle reading keeps order and
 * "not"; Jaccard of equal, disjoint, overlapping and empty sets. */
#include "harness.h"

#include "domain/simset.h"

/* The finished set of text: its tokens, or its words as shingles of k. */
static void set_of(struct simset *s, const char *text, size_t k)
{
    if (k)
        simset_add_words(s, text);
    else
        simset_add_tokens(s, text);
    if (k)
        simset_shingle(s, k);
    simset_finish(s);
}

static double sim(const char *a, const char *b, size_t k)
{
    struct simset x = {0}, y = {0};
    double j;
    set_of(&x, a, k);
    set_of(&y, b, k);
    j = simset_jaccard(&x, &y);
    simset_release(&x);
    simset_release(&y);
    return j;
}

int main(void)
{
    struct simset s = {0};
    /* repeats are one element; a finished set is sorted */
    set_of(&s, "rotate rotate logs logs daily", 0);
    CHECK_INT(s.n, 3);
    for (size_t i = 1; i < s.n; i++)
        CHECK(s.h[i - 1] < s.h[i]);
    simset_release(&s);
    CHECK_INT(s.n, 0);
    CHECK(s.h == NULL);

    /* equal, disjoint, empty */
    CHECK(sim("rotate the logs daily", "rotate the logs daily", 0) == 1.0);
    CHECK(sim("rotate logs", "compress archives", 0) == 0.0);
    CHECK(sim("", "rotate logs", 0) == 0.0);
    CHECK(sim("", "", 3) == 0.0);
    /* tokens: order and stop words do not count; 2 of 3 shared: 2/4 */
    CHECK(sim("enable compression, disable caching", "disable compression, enable caching", 0) ==
          1.0);
    CHECK(sim("the logs rotate daily", "logs rotate weekly", 0) == 0.5);
    /* shingles: order and every word count */
    CHECK(sim("enable compression and disable caching", "disable compression and enable caching",
              3) == 0.0);
    CHECK(sim("do not rotate the logs", "do rotate the logs", 3) < 0.5);
    /* one word more at the end of 10: 8 of 9 shingles shared */
    CHECK(sim("one two three four five six seven eight nine ten",
              "one two three four five six seven eight nine ten eleven", 3) == 8.0 / 9.0);
    /* a text shorter than a shingle is one shingle of all its words */
    CHECK(sim("two words", "two words", 3) == 1.0);
    CHECK(sim("two words", "words two", 3) == 0.0);
    /* Han characters are words of their own in the shingle reading */
    CHECK(sim("\xe7\xa6\x81\xe7\x94\xa8\xe7\xbc\x93\xe5\xad\x98",
              "\xe5\x90\xaf\xe7\x94\xa8\xe7\xbc\x93\xe5\xad\x98", 3) == 1.0 / 3.0);
    /* the mix is a bijection's worth of spread: distinct inputs, distinct outputs */
    CHECK(simset_mix(1) != simset_mix(2));
    CHECK(simset_mix(0) != 0);
    return test_summary();
}
