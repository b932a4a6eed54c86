/* test_tokcount: the token estimator's arithmetic (domain/tokcount.h): each
 * kind of run weighs what the header says, and the sum is rounded up. */
#include "harness.h"

#include "domain/tokcount.h"

#include <string.h>

#define EST(s) tokcount_estimate((s), sizeof(s) - 1)

int main(void)
{
    /* nothing */
    CHECK_INT(EST(""), 0);
    CHECK_INT(tokcount_str(NULL), 0);
    CHECK_INT(EST("   \t "), 0);
    /* a word: 1.15 -> 2; two words 2.30 -> 3; spaces join the word */
    CHECK_INT(EST("hello"), 2);
    CHECK_INT(EST("hello world"), 3);
    CHECK_INT(EST("hello     world"), 3);
    /* a long word: 1.15 + 0.25 per letter past the 8th: 12 letters, 2.15 -> 3 */
    CHECK_INT(EST("internalised"), 3);
    CHECK_INT(EST("abcdefgh"), 2); /* 8 letters: 1.15 */
    /* digits by groups of three: 7 digits = 3 groups, 3.75 -> 4 */
    CHECK_INT(EST("1234567"), 4);
    CHECK_INT(EST("123"), 2); /* 1.25 */
    /* punctuation: 0.5 each + 0.25 a run: "```" 1.75 -> 2, "!" 0.75 -> 1 */
    CHECK_INT(EST("```"), 2);
    CHECK_INT(EST("!"), 1);
    CHECK_INT(EST("a, b."), 4); /* 2 words 2.30 + 2 runs 1.50 = 3.80 */
    /* newlines: 0.05 a run, however long */
    CHECK_INT(EST("\n\n\n"), 1);
    CHECK_INT(EST("a\nb"), 3); /* 2.30 + 0.05 */
    /* Han characters 0.9 each; CJK punctuation 0 */
    CHECK_INT(EST("\xe4\xb8\xad\xe6\x96\x87"), 2);             /* 中文: 1.80 */
    CHECK_INT(EST("\xe4\xb8\xad\xe6\x96\x87\xe3\x80\x82"), 2); /* 中文。 */
    CHECK_INT(EST("\xe4\xb8\xad\xef\xbc\x8c\xe6\x96\x87"), 2); /* 中，文 */
    CHECK_INT(EST("\xe3\x81\x82\xea\xb0\x80"), 2);             /* kana, Hangul */
    /* a 4-byte character (an emoji) 1.5; another character 0.5 */
    CHECK_INT(EST("\xf0\x9f\x98\x80"), 2);
    CHECK_INT(EST("\xc3\xa9\xc3\xa9"), 1); /* éé: 1.00 */
    /* invalid or cut UTF-8: 0.5 a byte, never read past the end */
    CHECK_INT(EST("\xff\xfe"), 1);
    CHECK_INT(tokcount_estimate("\xe4\xb8\xad", 2), 1); /* a cut Han character: 2 bytes */
    CHECK_INT(EST("\x01\x02\x03"), 2);                  /* control characters: 1.50 */
    /* additive up to the rounding: a text twice weighs twice, +-1 */
    {
        const char *t = "Always filter partitioned tables by event_date; it costs $40 otherwise.";
        size_t one = tokcount_str(t);
        char twice[256];
        size_t n = strlen(t);
        memcpy(twice, t, n);
        twice[n] = ' ';
        memcpy(twice + n + 1, t, n);
        CHECK(tokcount_estimate(twice, 2 * n + 1) <= 2 * one);
        CHECK(tokcount_estimate(twice, 2 * n + 1) + 1 >= 2 * one);
    }
    return test_summary();
}
