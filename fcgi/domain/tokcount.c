/* tokcount: the token estimator (domain/tokcount.h). */
#include "domain/tokcount.h"
#include "base/util.h"

#include <string.h>

/* The weights, in hundredths of a token (the header says why each). */
enum {
    W_WORD = 115,
    W_LONG_LETTER = 25,
    WORD_SHORT = 8,
    W_DIGITS = 125,
    DIGIT_GROUP = 3,
    W_PUNCT = 50,
    W_PUNCT_RUN = 25,
    W_NEWLINES = 5,
    W_CJK = 90,
    W_WIDE = 150,
    W_OTHER = 50
};

static int is_letter(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static int is_punct(unsigned char c)
{
    return c < 0x80 && c > ' ' && c != 0x7f && !is_letter(c) && !is_digit(c);
}

/* The weight of one character of two or three bytes, by its block. */
static unsigned wide_weight(unsigned cp)
{
    if ((cp >= 0x3000 && cp <= 0x303f) || (cp >= 0xff00 && cp <= 0xffef))
        return 0; /* CJK and full-width punctuation */
    if ((cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
        (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x3040 && cp <= 0x30ff) ||
        (cp >= 0xac00 && cp <= 0xd7af))
        return W_CJK;
    return W_OTHER;
}

size_t tokcount_estimate(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, hundredths = 0;
    while (i < len) {
        size_t j = i, n;
        uint32_t cp = 0;
        if (is_letter(s[i])) {
            while (j < len && is_letter(s[j]))
                j++;
            hundredths += W_WORD;
            if (j - i > WORD_SHORT)
                hundredths += (j - i - WORD_SHORT) * W_LONG_LETTER;
        } else if (is_digit(s[i])) {
            while (j < len && is_digit(s[j]))
                j++;
            hundredths += (j - i + DIGIT_GROUP - 1) / DIGIT_GROUP * W_DIGITS;
        } else if (s[i] == '\n') {
            while (j < len && s[j] == '\n')
                j++;
            hundredths += W_NEWLINES;
        } else if (is_space(s[i])) {
            while (j < len && is_space(s[j]))
                j++;
        } else if (is_punct(s[i])) {
            while (j < len && is_punct(s[j]))
                j++;
            hundredths += (j - i) * W_PUNCT + W_PUNCT_RUN;
        } else if (s[i] >= 0x80 && (n = utf8_decode(s + i, len - i, &cp))) {
            j = i + n;
            hundredths += n == 4 ? W_WIDE : wide_weight(cp);
        } else {
            j = i + 1; /* a control character or an invalid byte */
            hundredths += W_OTHER;
        }
        i = j;
    }
    return (hundredths + 99) / 100;
}

size_t tokcount_str(const char *text)
{
    return text ? tokcount_estimate(text, strlen(text)) : 0;
}
