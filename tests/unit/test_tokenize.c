/* test_tokenize: the one tokenizer of KnowHub (fcgi/tokenize.c), used by the
 * FTS5 index and by queries: ASCII folding and full-width folding, words of
 * [a-z0-9_], the reference's 118 English stop words and <=2-character ASCII
 * words dropped, Han runs cut at Chinese stop words and split into bigrams (a
 * lone character a unigram), mixed tokens split by script, other scripts
 * kept as words, byte offsets, early stop, long input, and idempotence (FTS5
 * re-tokenizes every query term, so a produced token must tokenize to itself). */
#include "harness.h"
#include "base/buf.h"
#include "domain/tokenize.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

struct collected {
    struct buf text;    /* tokens joined by single spaces */
    struct buf offsets; /* "token@start-end" joined by spaces */
    size_t count;
    size_t stop_after; /* 0: never stop */
};

static int collect(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct collected *c = ctx;
    if (c->count) {
        buf_addch(&c->text, ' ');
        buf_addch(&c->offsets, ' ');
    }
    buf_add(&c->text, token, n);
    buf_add(&c->offsets, token, n);
    buf_addf(&c->offsets, "@%zu-%zu", start, end);
    c->count++;
    if (c->stop_after && c->count >= c->stop_after)
        return 42;
    return 0;
}

static void collected_init(struct collected *c)
{
    memset(c, 0, sizeof *c);
    buf_init(&c->text, 1 << 22);
    buf_init(&c->offsets, 1 << 22);
}

static void collected_release(struct collected *c)
{
    buf_release(&c->text);
    buf_release(&c->offsets);
}

/* The tokens of s joined by spaces (a static copy, valid until the next call). */
static const char *toks(const char *s)
{
    static char out[8192];
    struct collected c;
    collected_init(&c);
    tokenize(s, strlen(s), collect, &c);
    snprintf(out, sizeof out, "%s", c.text.data);
    collected_release(&c);
    return out;
}

/* The tokens of s with their byte ranges: "tok@start-end ...". */
static const char *offs(const char *s)
{
    static char out[8192];
    struct collected c;
    collected_init(&c);
    tokenize(s, strlen(s), collect, &c);
    snprintf(out, sizeof out, "%s", c.offsets.data);
    collected_release(&c);
    return out;
}

static size_t count_tokens(const char *s, size_t len)
{
    struct collected c;
    size_t n;
    collected_init(&c);
    tokenize(s, len, collect, &c);
    n = c.count;
    collected_release(&c);
    return n;
}

static const char *folded(const char *s)
{
    static char out[4096];
    struct buf b;
    buf_init(&b, 1 << 20);
    tokenize_fold(s, strlen(s), &b);
    snprintf(out, sizeof out, "%s", b.data);
    buf_release(&b);
    return out;
}

/* ---- ASCII ---- */

static void test_ascii(void)
{
    CHECK_STR(toks(""), "");
    CHECK_STR(toks("   \t\r\n  "), "");
    CHECK_STR(toks("Sales Report"), "sales report");
    CHECK_STR(toks("ROI CALCULATION"), "roi calculation");
    /* punctuation separates (the reference keeps "sales," whole: documented difference) */
    CHECK_STR(toks("sales, data-cleaning; ROI! (revenue - cost) / cost"),
              "sales data cleaning roi revenue cost cost");
    CHECK_STR(toks("sales_data_2024 2024 x_1"), "sales_data_2024 2024 x_1");
    CHECK_STR(toks("e-mail foo.bar@baz.com"), "mail foo bar baz com");
    /* no deduplication: FTS5 wants every position */
    CHECK_STR(toks("roi roi ROI"), "roi roi roi");
    /* <= 2 ASCII characters dropped, 3 kept */
    CHECK_STR(toks("ok ab x y7 Q3 abc"), "abc");
    CHECK_STR(toks("a1b"), "a1b");
    CHECK_STR(toks("42 420"), "420");
    CHECK_STR(toks("__ ___"), "___");
}

/* The reference's stop list, verbatim (118 words). */
static const char *const reference_stop[] = {
    "a",     "an",    "the",  "is",    "are",    "was",    "were",    "be",    "been",   "being",
    "have",  "has",   "had",  "do",    "does",   "did",    "will",    "would", "shall",  "should",
    "may",   "might", "must", "can",   "could",  "i",      "me",      "my",    "we",     "our",
    "you",   "your",  "he",   "him",   "his",    "she",    "her",     "it",    "its",    "they",
    "them",  "their", "what", "which", "who",    "whom",   "this",    "that",  "these",  "those",
    "am",    "if",    "or",   "but",   "not",    "no",     "nor",     "so",    "too",    "very",
    "and",   "as",    "at",   "by",    "for",    "from",   "in",      "into",  "of",     "on",
    "to",    "up",    "with", "about", "after",  "before", "between", "down",  "during", "each",
    "few",   "more",  "most", "other", "some",   "such",   "than",    "then",  "how",    "when",
    "where", "why",   "all",  "any",   "both",   "every",  "here",    "there", "just",   "only",
    "also",  "over",  "own",  "same",  "out",    "show",   "find",    "get",   "use",    "make",
    "help",  "let",   "want", "need",  "please", "like",   "using",   "used",
};

static void test_english_stop_words(void)
{
    struct buf all;
    CHECK_INT(sizeof reference_stop / sizeof *reference_stop, 118);
    buf_init(&all, 1 << 16);
    for (size_t i = 0; i < sizeof reference_stop / sizeof *reference_stop; i++) {
        char upper[32];
        size_t n = strlen(reference_stop[i]);
        if (!CHECK_STR(toks(reference_stop[i]), ""))
            fprintf(stderr, "    stop word kept: %s\n", reference_stop[i]);
        for (size_t j = 0; j <= n; j++)
            upper[j] = (char)(reference_stop[i][j] >= 'a' && reference_stop[i][j] <= 'z'
                                  ? reference_stop[i][j] - 32
                                  : reference_stop[i][j]);
        CHECK_STR(toks(upper), ""); /* case-insensitive */
        buf_addf(&all, "%s, ", reference_stop[i]);
    }
    CHECK_STR(toks(all.data), "");
    buf_release(&all);
    /* whole words only: words that contain a stop word survive */
    CHECK_STR(toks("theme another showcase finder helpful usage"),
              "theme another showcase finder helpful usage");
    CHECK_STR(toks("How do I find the ROI of a campaign?"), "roi campaign");
    CHECK_STR(toks("Please show me how to handle missing values"), "handle missing values");
    /* words of the reference's list are the only English stop words */
    CHECK_STR(toks("data report analysis"), "data report analysis");
}

/* ---- full-width ---- */

static void test_full_width(void)
{
    /* ＲＯＩ　Ｃａｌｃｕｌａｔｉｏｎ (U+3000 ideographic space between) */
    CHECK_STR(toks("\xef\xbc\xb2\xef\xbc\xaf\xef\xbc\xa9\xe3\x80\x80"
                   "\xef\xbd\x83\xef\xbd\x81\xef\xbd\x8c\xef\xbd\x83"),
              "roi calc");
    CHECK_STR(offs("\xef\xbc\xb2\xef\xbc\xaf\xef\xbc\xa9"), "roi@0-9");
    /* full-width digits and underscore are word characters: ２０２４＿ｑ */
    CHECK_STR(toks("\xef\xbc\x92\xef\xbc\x90\xef\xbc\x92\xef\xbc\x94\xef\xbc\xbf\xef\xbd\x91"),
              "2024_q");
    /* full-width stop words and short words are dropped like ASCII ones: ＴＨＥ ＯＫ */
    CHECK_STR(toks("\xef\xbc\xb4\xef\xbc\xa8\xef\xbc\xa5 \xef\xbc\xaf\xef\xbc\xab"), "");
    /* full-width punctuation separates: ＲＯＩ，ｃｏｓｔ（ＦＹ２４） */
    CHECK_STR(toks("\xef\xbc\xb2\xef\xbc\xaf\xef\xbc\xa9\xef\xbc\x8c\xef\xbd\x83\xef\xbd\x8f"
                   "\xef\xbd\x93\xef\xbd\x94\xef\xbc\x88\xef\xbc\xa6\xef\xbc\xb9\xef\xbc\x92"
                   "\xef\xbc\x94\xef\xbc\x89"),
              "roi cost fy24");
    /* mixed half- and full-width in one word: ＲOＩ */
    CHECK_STR(toks("\xef\xbc\xb2O\xef\xbc\xa9"), "roi");
}

/* ---- Chinese ---- */

static void test_han_bigrams(void)
{
    CHECK_STR(toks("库"), "库");
    CHECK_STR(toks("库存"), "库存");
    CHECK_STR(toks("库存周转"), "库存 存周 周转");
    CHECK_STR(offs("库存周转"), "库存@0-6 存周@3-9 周转@6-12");
    /* a lone character between separators is a unigram */
    CHECK_STR(toks("库 存"), "库 存");
    /* CJK punctuation separates runs: 库存，周转。 */
    CHECK_STR(toks("库存\xef\xbc\x8c周转\xe3\x80\x82"), "库存 周转");
    /* the example title */
    CHECK_STR(toks("月度库存周转率的计算方法"), "月度 度库 库存 存周 周转 转率 计算 算方 方法");
    CHECK_STR(toks("库存周转分析"), "库存 存周 周转 转分 分析");
    /* CJK compatibility ideographs (U+F900..) and extension B (U+20000..) are Han */
    CHECK_STR(toks("\xef\xa4\x80\xef\xa4\x81"), "\xef\xa4\x80\xef\xa4\x81");
    CHECK_STR(toks("\xf0\xa0\x80\x80\xf0\xa0\x80\x81\xf0\xa0\x80\x82"),
              "\xf0\xa0\x80\x80\xf0\xa0\x80\x81 \xf0\xa0\x80\x81\xf0\xa0\x80\x82");
    CHECK_STR(offs("\xf0\xa0\x80\x80\xf0\xa0\x80\x81"), "\xf0\xa0\x80\x80\xf0\xa0\x80\x81@0-8");
}

static void test_chinese_stop_words(void)
{
    /* each stop word named by the issue, alone, gives nothing */
    const char *stops[] = {"的", "了", "和", "是", "在", "帮我", "请"};
    for (size_t i = 0; i < sizeof stops / sizeof *stops; i++)
        CHECK_STR(toks(stops[i]), "");
    CHECK_STR(toks("的了和是在帮我请"), "");
    /* a run is cut at a stop word; the pieces become bigrams or unigrams */
    CHECK_STR(toks("我的库存"), "库存");
    CHECK_STR(toks("帮我分析"), "分析");
    CHECK_STR(toks("请分析库存和销售"), "分析 析库 库存 销售");
    CHECK_STR(toks("库存的"), "库存");
    CHECK_STR(toks("书的库"), "书 库");
    CHECK_STR(offs("书的库"), "书@0-3 库@6-9");
    /* two-character stop words win over their first character */
    CHECK_STR(toks("帮我"), "");
    CHECK_STR(toks("我们的数据"), "数据");
    CHECK_STR(toks("如何计算"), "计算");
    /* only whole stop words cut: 帮 alone is not one */
    CHECK_STR(toks("帮助"), "帮助");
}

static void test_mixed_scripts(void)
{
    /* the example: 帮我分析ROI -> the Han piece (stop word cut) and "roi" */
    CHECK_STR(toks("帮我分析ROI"), "分析 roi");
    CHECK_STR(offs("帮我分析ROI"), "分析@6-12 roi@12-15");
    CHECK_STR(toks("ROI分析"), "roi 分析");
    CHECK_STR(toks("分析ROI和GMV指标"), "分析 roi gmv 指标");
    /* the ASCII piece obeys the ASCII rules: the, ok are dropped */
    CHECK_STR(toks("the分析ok"), "分析");
    CHECK_STR(toks("库存2024年"), "库存 2024 年");
    /* Han and kana stand apart: 東京タワー */
    CHECK_STR(toks("東京タワー"), "東京 タワー");
}

static void test_other_scripts(void)
{
    /* kept as words, not dropped, at any length, lower-cased where they have case */
    CHECK_STR(toks("café"), "café");
    CHECK_STR(toks("Café CAFÉ"), "café café");
    CHECK_STR(offs("Café au lait"), "café@0-5 lait@9-13");
    CHECK_STR(toks("é ü"), "é ü");
    CHECK_STR(toks("Über Straße"), "über straße");
    CHECK_STR(toks("ŁÓDŹ"), "łódź");
    CHECK_STR(toks("Москва ЁЛКА"), "москва ёлка");
    CHECK_STR(toks("ΑΘΗΝΑ"), "αθηνα");
    CHECK_STR(toks("カタカナ ひらがな"), "カタカナ ひらがな");
    CHECK_STR(toks("한국어 분석"), "한국어 분석");
    CHECK_STR(toks("naïve résumé"), "naïve résumé");
    /* a non-ASCII letter joins ASCII letters into one word (not split like Han) */
    CHECK_STR(toks("cafés123"), "cafés123");
}

static void test_separators(void)
{
    /* symbols, emoji, general punctuation, invalid UTF-8 separate words */
    CHECK_STR(toks("sales\xf0\x9f\x93\x88report"), "sales report");
    CHECK_STR(toks("alpha\xe2\x80\x94omega \xc2\xa9 beta\xc2\xb7gamma"), "alpha omega beta gamma");
    CHECK_STR(toks("abc\xff"
                   "def\xc3"
                   "ghi"),
              "abc def ghi");
    CHECK_STR(offs("abc\xff"
                   "def"),
              "abc@0-3 def@4-7");
    /* an overlong encoding is not a letter */
    CHECK_STR(toks("abc\xc0\xaf"
                   "def"),
              "abc def");
    /* an encoded UTF-16 surrogate (U+D800) is not a character (found by fuzzing) */
    CHECK_STR(toks("abc\xed\xa0\x80"
                   "def"),
              "abc def");
    CHECK_STR(offs("abc\xed\xa0\x80"
                   "def"),
              "abc@0-3 def@6-9");
    /* a truncated multibyte sequence at the end */
    CHECK_STR(toks("abc\xe5\xba"), "abc");
    /* NUL inside the given length is a separator */
    CHECK_INT(count_tokens("abc\0def", 7), 2);
}

static void test_offsets(void)
{
    CHECK_STR(offs("Hello, 世界 ROI"), "hello@0-5 世界@7-13 roi@14-17");
    CHECK_STR(offs("  sales  "), "sales@2-7");
    /* the ranges cover the original bytes, not the folded ones */
    CHECK_STR(offs("ＲＯＩ abc"), "roi@0-9 abc@10-13");
}

static void test_early_stop(void)
{
    struct collected c;
    int rc;
    collected_init(&c);
    c.stop_after = 2;
    rc = tokenize("alpha beta gamma delta", 22, collect, &c);
    CHECK_INT(rc, 42);
    CHECK_STR(c.text.data, "alpha beta");
    collected_release(&c);
    collected_init(&c);
    c.stop_after = 1;
    rc = tokenize("库存周转", strlen("库存周转"), collect, &c);
    CHECK_INT(rc, 42);
    CHECK_STR(c.text.data, "库存");
    collected_release(&c);
}

static void test_long_input(void)
{
    struct buf b;
    struct collected c;
    int ok = 1;
    /* 3000 ten-letter words: none split across the tokenizer's chunks */
    buf_init(&b, 1 << 22);
    for (int i = 0; i < 3000; i++)
        buf_addf(&b, "%sword%05d", i ? " " : "", i);
    collected_init(&c);
    tokenize(b.data, b.len, collect, &c);
    CHECK_INT(c.count, 3000);
    {
        const char *p = c.text.data;
        for (int i = 0; i < 3000 && ok; i++) {
            char want[16];
            snprintf(want, sizeof want, "word%05d", i);
            ok = strncmp(p, want, 9) == 0 && (p[9] == ' ' || p[9] == '\0');
            p += 10;
        }
    }
    CHECK(ok);
    collected_release(&c);
    /* a long mixed text: every token's range points at text that folds to it */
    buf_reset(&b);
    for (int i = 0; i < 400; i++)
        buf_addf(&b, "库存周转 Sales%d 的 café ", i);
    collected_init(&c);
    tokenize(b.data, b.len, collect, &c);
    CHECK(c.count >= 400 * 5);
    collected_release(&c);
    buf_release(&b);
}

/* All-ASCII text is split straight from its bytes; a text with another
 * character goes through decoded pieces. Both give the same tokens and
 * ranges: random ASCII text alone, and with " é" after it (one chunk, so
 * the pieces), tokenize alike up to that last token. */
static void test_ascii_path(void)
{
    static const char *const parts[] = {"the",       "Sales", "ROI", "x",  "ab",   "into",
                                        "data_2024", "42",    "_",   " ",  "  ",   ",",
                                        "-",         "\t",    "\n",  "!?", "WHICH"};
    struct collected a, b;
    struct buf t;
    int same = 1;
    unsigned seed = 7;
    buf_init(&t, 1 << 20);
    for (int round = 0; round < 2000 && same; round++) {
        buf_reset(&t);
        while (t.len < 380) {
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 16) % 50 == 0) { /* now and then a word longer than a token keeps */
                for (int k = 0; k < 300; k++)
                    buf_addch(&t, (char)('a' + k % 26));
            } else {
                const char *w = parts[(seed >> 16) % (sizeof parts / sizeof *parts)];
                buf_adds(&t, w);
            }
        }
        collected_init(&a);
        collected_init(&b);
        tokenize(t.data, t.len, collect, &a);
        buf_adds(&t, " \xc3\xa9");
        tokenize(t.data, t.len, collect, &b);
        same =
            b.count == a.count + 1 && strncmp(a.offsets.data, b.offsets.data, a.offsets.len) == 0;
        collected_release(&a);
        collected_release(&b);
    }
    CHECK(same);
    buf_release(&t);
    /* a word with no separator over a whole chunk (512 characters) is cut
     * there, and keeps its first 253 bytes */
    buf_init(&t, 1 << 20);
    for (int k = 0; k < 600; k++)
        buf_addch(&t, 'a');
    collected_init(&a);
    tokenize(t.data, t.len, collect, &a);
    CHECK_INT(a.count, 2);
    CHECK(strstr(a.offsets.data, "@0-512 ") != NULL);
    CHECK(strstr(a.offsets.data, "@512-600") != NULL);
    CHECK_INT(strchr(a.text.data, ' ') - a.text.data, 253);
    collected_release(&a);
    buf_release(&t);
}

/* Tokens and ranges as separate lists, for the checks below. */
struct spans {
    char *tok[4096];
    size_t start[4096], end[4096];
    size_t n;
};

static int collect_span(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct spans *s = ctx;
    if (s->n < 4096) {
        s->tok[s->n] = xstrndup(token, n);
        s->start[s->n] = start;
        s->end[s->n] = end;
        s->n++;
    }
    return 0;
}

static void spans_release(struct spans *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->tok[i]);
    s->n = 0;
}

static const char *const corpus[] = {
    "月度库存周转率的计算方法：库存周转率 = 销售成本 / 平均库存",
    "帮我分析ROI和GMV，请给出2024年Q3的数据",
    "How do I handle missing values in a DataFrame? Use pandas fillna().",
    "ＲＯＩ　Ｃａｌｃｕｌａｔｉｏｎ for ＦＹ２０２４",
    "Café naïve résumé Über Straße ŁÓDŹ Москва ΑΘΗΝΑ カタカナ 한국어 東京タワー",
    "sales_data_2024, regions; e-mail: foo@bar.com #tag @user $100 50%",
    "我们的客户留存分析在这里，是吗？请帮我看看",
    "\xf0\xa0\x80\x80\xf0\xa0\x80\x81\xf0\xa0\x80\x82 \xef\xa4\x80\xef\xa4\x81 "
    "emoji\xf0\x9f\x98\x80ok",
};

/* tokenize_only: over the corpus and texts that cross chunks, what a filter
 * lets through is tokenize()'s tokens at the same places, in order, and
 * holds every token equal to a term added to it; an empty filter lets
 * nothing through. */
static void test_filter(void)
{
    static struct spans all, only;
    struct buf t;
    size_t missing = 0, strays = 0, kept = 0;
    buf_init(&t, 1 << 20);
    for (size_t c = 0; c <= sizeof corpus / sizeof *corpus; c++) {
        buf_reset(&t);
        if (c < sizeof corpus / sizeof *corpus) {
            buf_adds(&t, corpus[c]);
        } else { /* long: ASCII, Han and Latin-1 across the 512-character chunks */
            for (int k = 0; k < 120; k++)
                buf_addf(&t, "Rollback_%d déjà 回滚方案 数据库 the orders ", k % 7);
        }
        spans_release(&all);
        tokenize(t.data, t.len, collect_span, &all);
        for (size_t every = 1; every <= 3; every++) {
            struct token_filter f;
            size_t j = 0;
            memset(&f, 0, sizeof f);
            for (size_t i = 0; i < all.n; i += every + 1)
                token_filter_add(&f, all.tok[i], strlen(all.tok[i]));
            spans_release(&only);
            tokenize_only(t.data, t.len, &f, collect_span, &only);
            /* a subsequence of all, with the same ranges */
            for (size_t i = 0; i < only.n; i++) {
                while (j < all.n && !(all.start[j] == only.start[i] && all.end[j] == only.end[i] &&
                                      strcmp(all.tok[j], only.tok[i]) == 0))
                    j++;
                strays += j == all.n;
                j += j < all.n;
            }
            /* every token of a term added is there */
            for (size_t i = 0; i < all.n; i += every + 1) {
                size_t k = 0;
                while (k < only.n && !(only.start[k] == all.start[i] && only.end[k] == all.end[i]))
                    k++;
                missing += k == only.n;
            }
            kept += only.n < all.n;
        }
        {
            struct token_filter none;
            memset(&none, 0, sizeof none);
            spans_release(&only);
            tokenize_only(t.data, t.len, &none, collect_span, &only);
            strays += only.n;
        }
    }
    CHECK_INT(strays, 0);
    CHECK_INT(missing, 0);
    CHECK(kept > 0); /* the filters did leave tokens out */
    spans_release(&all);
    spans_release(&only);
    buf_release(&t);
}

/* FTS5 re-tokenizes each query term: tokenizing a produced token must give
 * that same single token (over its whole length). */
static void test_idempotence(void)
{
    for (size_t i = 0; i < sizeof corpus / sizeof *corpus; i++) {
        struct spans s = {0};
        tokenize(corpus[i], strlen(corpus[i]), collect_span, &s);
        CHECK(s.n > 0);
        for (size_t j = 0; j < s.n; j++) {
            struct spans again = {0};
            size_t len = strlen(s.tok[j]);
            tokenize(s.tok[j], len, collect_span, &again);
            if (!CHECK_INT(again.n, 1) || !CHECK_STR(again.tok[0], s.tok[j]) ||
                !CHECK_INT(again.start[0], 0) || !CHECK_INT(again.end[0], len))
                fprintf(stderr, "    token %zu of corpus %zu: %s\n", j, i, s.tok[j]);
            spans_release(&again);
        }
        spans_release(&s);
    }
}

/* Each token is what its source range folds to (Han bigrams included). */
static void test_ranges_fold_to_tokens(void)
{
    for (size_t i = 0; i < sizeof corpus / sizeof *corpus; i++) {
        struct spans s = {0};
        struct buf f;
        buf_init(&f, 1 << 20);
        tokenize(corpus[i], strlen(corpus[i]), collect_span, &s);
        for (size_t j = 0; j < s.n; j++) {
            CHECK(s.start[j] < s.end[j] && s.end[j] <= strlen(corpus[i]));
            tokenize_fold(corpus[i] + s.start[j], s.end[j] - s.start[j], &f);
            if (!CHECK_STR(f.data, s.tok[j]))
                fprintf(stderr, "    corpus %zu token %zu\n", i, j);
            if (j)
                CHECK(s.start[j] >= s.start[j - 1]); /* in text order */
        }
        spans_release(&s);
        buf_release(&f);
    }
}

/* tokenize_terms is tokenize with each token turned into its term
 * (tokenize_term), and a term starts with its token's first byte, which
 * the passage finder relies on to skip words (passage.c). The words are
 * the corpus's and the stemmer's exceptions and irregular endings. */
static void test_term_of_token(void)
{
    static const char *const words =
        "skies skis dying lying tying idly gently ugly early only singly news howe atlas "
        "cosmos bias andes cries ties dies flies yelling yes year youth eed oing aing "
        "agreed feed bled sing sings generous communism arsenal happiness happy recommended "
        "recommendations went going ran runs quarterly whose didn doesn won yes";
    const char *texts[sizeof corpus / sizeof *corpus + 1];
    texts[0] = words;
    for (size_t i = 0; i < sizeof corpus / sizeof *corpus; i++)
        texts[i + 1] = corpus[i];
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        struct spans tokens = {0}, terms = {0};
        size_t k = 0;
        tokenize(texts[i], strlen(texts[i]), collect_span, &tokens);
        tokenize_terms(texts[i], strlen(texts[i]), collect_span, &terms);
        for (size_t j = 0; j < tokens.n; j++) {
            const char *term;
            size_t n;
            if (!tokenize_term(tokens.tok[j], strlen(tokens.tok[j]), &term, &n))
                continue; /* dropped from the terms */
            if (!CHECK(k < terms.n) || !CHECK(n > 0 && term[0] == tokens.tok[j][0]))
                fprintf(stderr, "    token '%s'\n", tokens.tok[j]);
            else if (!CHECK(strlen(terms.tok[k]) == n && memcmp(terms.tok[k], term, n) == 0) ||
                     !CHECK(terms.start[k] == tokens.start[j]))
                fprintf(stderr, "    token '%s' term '%s'\n", tokens.tok[j], terms.tok[k]);
            k++;
        }
        CHECK(k == terms.n);
        spans_release(&tokens);
        spans_release(&terms);
    }
}

/* tokenize_term keeps the thread's last stems: a word met again, after
 * thousands of others have taken the slots, stems as it did the first time
 * (and as the stemmer does). */
static void test_stem_cache(void)
{
    enum { WORDS = 4000 };
    static char stems[WORDS][32];
    char word[32];
    const char *term;
    size_t n;
    unsigned x = 12345;
    for (int pass = 0; pass < 3; pass++) {
        x = 12345;
        for (int i = 0; i < WORDS; i++) {
            /* letters only, 3..20 of them, endings a stemmer cuts */
            static const char *const ends[] = {"ing",  "ed", "s",       "ies",
                                               "ness", "ly", "ational", ""};
            size_t len = 3 + (x = x * 1103515245u + 12345u) % 12, k;
            for (k = 0; k < len; k++)
                word[k] = (char)('a' + (x = x * 1103515245u + 12345u) % 26);
            snprintf(word + k, sizeof word - k, "%s", ends[(x >> 8) % 8]);
            if (!tokenize_term(word, strlen(word), &term, &n))
                n = 0, term = "";
            if (pass == 0)
                snprintf(stems[i], sizeof stems[i], "%.*s", (int)n, term);
            else if (!CHECK(strlen(stems[i]) == n && memcmp(stems[i], term, n) == 0))
                fprintf(stderr, "    word '%s': '%s' then '%.*s'\n", word, stems[i], (int)n, term);
        }
    }
    CHECK(tokenize_term("recommendations", 15, &term, &n) && n == 9 &&
          memcmp(term, "recommend", 9) == 0);
    CHECK(tokenize_term("recommendations", 15, &term, &n) && n == 9 &&
          memcmp(term, "recommend", 9) == 0);
}

static void test_fold(void)
{
    CHECK_STR(folded("ROI Calculation"), "roi calculation");
    /* punctuation and spaces survive folding (it is for substring matching) */
    CHECK_STR(folded("Sales, Data-Cleaning!"), "sales, data-cleaning!");
    CHECK_STR(folded("ＲＯＩ，ＦＹ２４"), "roi,fy24");
    CHECK_STR(folded("Café ÀÉÎ ŁÓDŹ Москва ΑΘΗΝΑ"), "café àéî łódź москва αθηνα");
    CHECK_STR(folded("库存周转"), "库存周转");
    CHECK_STR(folded(""), "");
    /* × and ÷ are not letters and are left alone; ß has no capital here */
    CHECK_STR(folded("×÷ß"), "×÷ß");
    /* folding is idempotent */
    CHECK_STR(folded(folded("ＲＯＩ Café ÀÉÎ ŁÓDŹ Москва")), "roi café àéî łódź москва");
    /* Ÿ (U+0178) is ÿ's capital (U+00FF), not Ź's small letter (fuzz_tokenize) */
    CHECK_STR(folded("ŸVES Ÿ Ź"), "ÿves ÿ ź");
    CHECK_STR(toks("ŸVES Ÿ"), "ÿves ÿ");
}

int main(void)
{
    test_ascii();
    test_english_stop_words();
    test_full_width();
    test_han_bigrams();
    test_chinese_stop_words();
    test_mixed_scripts();
    test_other_scripts();
    test_separators();
    test_offsets();
    test_early_stop();
    test_long_input();
    test_ascii_path();
    test_idempotence();
    test_filter();
    test_ranges_fold_to_tokens();
    test_term_of_token();
    test_stem_cache();
    test_fold();
    return test_summary();
}
