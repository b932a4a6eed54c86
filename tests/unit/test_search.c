/* test_search: the two searches (fcgi/service/search.c) over the FTS5 index.
 *   - search_match_score against verified scores (docs/search.md),
 *     and where KnowHub's tokenizer differs from the reference's split():
 *     punctuation separates ("sales," -> "sales"), Han runs become bigrams
 *     (so 库存周转分析 scores against 库存周转率 where the reference finds
 *     nothing), a query without tokens still earns the whole-query bonus in
 *     the score but finds no candidates (search returns []).
 *   - search_files / search_entries against store_open(":memory:") with
 *     entries made by document_prepare + document_fill + knowledge_create:
 *     title, tag, filename (and a 3-letter prefix of it), body, case,
 *     max_results, the category bitmask, table_names, manual above distilled,
 *     alwaysApply rules skipped (file view only), empty and stop-word-only
 *     queries, Chinese queries, English queries never matching Chinese text,
 *     FTS5 syntax in queries, deterministic ties (score, updated, path),
 *     space scoping, and the index kept in step after update, rename,
 *     delete, revert and import. */
#include "harness.h"
#include "base/buf.h"
#include "domain/document.h"
#include "domain/knowledge.h"
#include "service/knowledge.h"
#include "service/lindex.h"
#include "service/search.h"
#include "store/store.h"
#include "service/transfer.h"
#include "base/util.h"

#include <sodium.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ACTOR "token:test:search"
#define SPACE "s1"

/* ---- helpers ---- */

/* Create an entry from a document as the file view's write does; returns its id (owned). */
static char *add_doc(struct store *st, const char *space, const char *category, const char *path,
                     const char *text)
{
    struct knowledge k;
    struct buf doc;
    struct error err;
    char *id = NULL;
    buf_init(&doc, 1 << 20);
    error_init(&err);
    if (!CHECK_INT(document_prepare(category, path, text, strlen(text), &doc, &err), 0)) {
        fprintf(stderr, "    %s/%s: %s\n", category, path, err.message.data);
        goto out;
    }
    knowledge_init(&k);
    k.space = xstrdup(space);
    k.category = xstrdup(category);
    k.path = xstrdup(path);
    k.score = 3;
    document_fill(&k, category, path, doc.data, doc.len);
    if (CHECK_INT(knowledge_create(st, &k, ACTOR), STORE_OK))
        id = xstrdup(k.id);
    knowledge_release(&k);
out:
    buf_release(&doc);
    error_release(&err);
    return id;
}

/* A document with front matter. */
static char *add(struct store *st, const char *category, const char *path, const char *title,
                 const char *tags, const char *source, const char *body)
{
    struct buf text;
    char *id;
    buf_init(&text, 1 << 20);
    buf_addf(&text, "---\ntitle: %s\ntags: %s\n", title, tags ? tags : "[]");
    if (strcmp(category, "rules") == 0)
        buf_adds(&text, "alwaysApply: false\n");
    buf_addf(&text, "source: %s\n---\n\n%s\n", source ? source : "manual", body ? body : "");
    id = add_doc(st, SPACE, category, path, text.data);
    buf_release(&text);
    return id;
}

#define MAX_HITS 64
struct hits {
    char *title[MAX_HITS];
    char *path[MAX_HITS];
    char *category[MAX_HITS];
    char *id[MAX_HITS];
    double score[MAX_HITS];
    size_t n;
};

static void hits_release(struct hits *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->title[i]);
        free(h->path[i]);
        free(h->category[i]);
        free(h->id[i]);
    }
    memset(h, 0, sizeof *h);
}

static void take_hit(const struct search_hit *hit, void *ctx)
{
    struct hits *h = ctx;
    if (h->n == MAX_HITS)
        return;
    h->title[h->n] = xstrdup(hit->k->title);
    h->path[h->n] = xstrdup(hit->k->path);
    h->category[h->n] = xstrdup(hit->k->category);
    h->id[h->n] = xstrdup(hit->k->id);
    h->score[h->n] = hit->score;
    h->n++;
}

/* The ranking of the searches below: the reference score where a test
 * checks the reference's numbers (the file view's contract), else fused. */
static struct search_opts ranking = {RANKING_FUSED, 0};

/* search_files into h (released first); returns the store status. */
static int files(struct store *st, const char *space, const char *q, unsigned categories,
                 size_t max, struct json_object *tables, struct hits *h)
{
    hits_release(h);
    return search_files(st, space, q, categories, max, tables, &ranking, take_hit, h);
}

static int entries(struct store *st, const char *q, unsigned types, const char *category, size_t n,
                   struct hits *h)
{
    struct knowledge_filter f = {types, category, 0, 0};
    hits_release(h);
    return search_entries(st, SPACE, q, &f, n, &ranking, take_hit, h);
}

/* Titles of the hits joined by " | " (static). */
static const char *titles(const struct hits *h)
{
    static char out[8192];
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < h->n && len < sizeof out - 1; i++)
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? " | " : "", h->title[i]);
    return out;
}

/* Paths of the hits joined by " " (static). */
static const char *paths(const struct hits *h)
{
    static char out[8192];
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < h->n && len < sizeof out - 1; i++)
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? " " : "", h->path[i]);
    return out;
}

static int has_title(const struct hits *h, const char *title)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->title[i], title) == 0)
            return 1;
    return 0;
}

static int has_id(const struct hits *h, const char *id)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->id[i], id) == 0)
            return 1;
    return 0;
}

static int near(double a, double b)
{
    return a - b < 1e-6 && b - a < 1e-6;
}

/* search_match_score with the fields given as C strings (tags, tables: JSON text). */
static double score_of(const char *query, const char *title, const char *tags, const char *stem,
                       const char *body, const char *source, const char *tables)
{
    struct search_query q;
    struct json_object *t = tags ? json_tokener_parse(tags) : NULL;
    struct json_object *tn = tables ? json_tokener_parse(tables) : NULL;
    double s;
    search_query_init(&q, query);
    s = search_match_score(&q, title, t, stem, body, source, tn);
    search_query_release(&q);
    json_object_put(t);
    json_object_put(tn);
    return s;
}

#define CHECK_SCORE(got, want)                                                                     \
    do {                                                                                           \
        double got_ = (got), want_ = (want);                                                       \
        if (!CHECK(near(got_, want_)))                                                             \
            fprintf(stderr, "    score %.6f, expected %.6f\n", got_, want_);                       \
    } while (0)

/* ---- the query and the score ---- */

static void test_query_tokens(void)
{
    struct search_query q;
    search_query_init(&q, "  How to find the ROI of 帮我分析ROI, roi  ");
    /* distinct folded tokens, whole query stripped and folded */
    CHECK_INT(q.n, 2);
    CHECK_STR(q.tokens[0], "roi");
    CHECK_STR(q.tokens[1], "分析");
    CHECK_STR(q.whole, "how to find the roi of 帮我分析roi, roi");
    search_query_release(&q);
    search_query_init(&q, NULL);
    CHECK_INT(q.n, 0);
    CHECK_STR(q.whole, "");
    search_query_release(&q);
    search_query_init(&q, "the of and 的 了");
    CHECK_INT(q.n, 0);
    search_query_release(&q);
    /* a query of many words keeps at most 64 distinct tokens */
    {
        struct buf b;
        buf_init(&b, 1 << 20);
        for (int i = 0; i < 200; i++)
            buf_addf(&b, "word%03d ", i);
        search_query_init(&q, b.data);
        CHECK_INT(q.n, 64);
        search_query_release(&q);
        buf_release(&b);
    }
}

static void test_verified_scores(void)
{
    /* Verified scores of the scoring rules (docs/search.md) */
    CHECK_SCORE(score_of("ROI", "ROI Calculation", "[\"finance\"]", "roi", "", "manual", NULL),
                180);
    CHECK_SCORE(score_of("ROI", "Something", "[]", "roi", "", "manual", NULL), 30);
    /* "ok" is dropped (<= 2 characters) but the whole-query bonus applies with n = 0 */
    CHECK_SCORE(score_of("ok", "Book Club", "[]", "", "", "manual", NULL), 50);
    CHECK_SCORE(score_of("zzz", "Title", "[\"sales_data_2024\"]", "x", "", "manual",
                         "[\"sales_data\", \"SALES\"]"),
                60);
    /* Handle Missing Values (source agent_summarized): title 100 + whole query 50 +
     * stem "missing" 30/3 = 160, x0.9 = 144 */
    CHECK_SCORE(score_of("Handle Missing Values", "Handle Missing Values",
                         "[\"data-cleaning\", \"pandas\"]", "missing", "", "agent_summarized",
                         NULL),
                144);
    /* ...and with the reference sample's body ("missing", "values" in it: +20/3) */
    CHECK_SCORE(score_of("Handle Missing Values", "Handle Missing Values",
                         "[\"data-cleaning\", \"pandas\"]", "missing",
                         "\nWhen encountering missing values in a DataFrame, consider:\n"
                         "1. Drop rows if < 5% missing\n2. Fill with median for numeric columns\n",
                         "agent_summarized", NULL),
                (100.0 + 10.0 + 20.0 / 3 + 50) * 0.9);
}

static void test_score_rules(void)
{
    /* per token: title 100/N, tag 50/N, stem 30/N, body 10/N */
    CHECK_SCORE(score_of("alpha beta", "alpha", "[]", "", "", "manual", NULL), 50);
    CHECK_SCORE(score_of("alpha beta", "", "[\"x-beta\"]", "", "", "manual", NULL), 25);
    CHECK_SCORE(score_of("alpha beta", "", "[]", "alpha-beta", "", "manual", NULL), 30);
    CHECK_SCORE(score_of("alpha beta gamma", "", "[]", "", "gamma", "manual", NULL), 10.0 / 3);
    /* substring matching, as the reference: "roi" inside "heroic" */
    CHECK_SCORE(score_of("roi", "Heroic", "[]", "", "", "manual", NULL), 150);
    /* whole query in a tag: +50 (once, however many tags hold it) */
    CHECK_SCORE(score_of("pandas", "x", "[\"pandas\", \"pandas-tips\"]", "", "", "manual", NULL),
                50 + 50);
    /* case-insensitive, full-width folded */
    CHECK_SCORE(score_of("rOi", "ROI Calculation", "[]", "", "", "manual", NULL), 150);
    CHECK_SCORE(score_of("\xef\xbc\xb2\xef\xbc\xaf\xef\xbc\xa9", "ROI Calculation", "[]", "", "",
                         "manual", NULL),
                150);
    /* only the first 200 characters of the body count (characters, not bytes) */
    {
        char *b1 = xmalloc(1024), *b2 = xmalloc(1024);
        b1[0] = b2[0] = '\0';
        for (int i = 0; i < 196; i++)
            strcat(b1, "库");
        strcat(b1, "roi"); /* characters 197..199 */
        for (int i = 0; i < 198; i++)
            strcat(b2, "库");
        strcat(b2, "roi"); /* characters 199..201: cut */
        CHECK_SCORE(score_of("roi", "", "[]", "", b1, "manual", NULL), 10);
        CHECK_SCORE(score_of("roi", "", "[]", "", b2, "manual", NULL), 0);
        free(b1);
        free(b2);
    }
    /* x0.9 for any source but manual; a missing source counts as manual */
    CHECK_SCORE(score_of("roi", "ROI", "[]", "", "", "agent", NULL), 135);
    CHECK_SCORE(score_of("roi", "ROI", "[]", "", "", "distill", NULL), 135);
    CHECK_SCORE(score_of("roi", "ROI", "[]", "", "", NULL, NULL), 150);
    CHECK_SCORE(score_of("roi", "x", "[]", "", "", "agent", NULL), 0);
    /* table names: +30 each found in a tag, case-insensitively; no query match needed */
    CHECK_SCORE(score_of("zzz", "", "[\"Sales_Data_2024\", \"regions\"]", "", "", "manual",
                         "[\"sales_data\", \"REGIONS\", \"missing_table\", \"\"]"),
                60);
    CHECK_SCORE(score_of("zzz", "", "[\"sales_data_2024\"]", "", "", "agent", "[\"sales_data\"]"),
                27);
    /* a token counts once however often the query repeats it */
    CHECK_SCORE(score_of("roi roi ROI", "ROI", "[]", "", "", "manual", NULL), 100);
    /* non-string tags are ignored, not a crash */
    CHECK_SCORE(score_of("roi", "", "[1, null, \"roi\"]", "", "", "manual", NULL), 100);
    CHECK_SCORE(score_of("roi", "", NULL, "", "", "manual", "[\"roi\"]"), 0);
}

/* Where the tokenizer makes KnowHub differ from the reference's split(). */
static void test_score_differences(void)
{
    /* the reference keeps "sales," as a token and so misses "sales"; KnowHub does not */
    CHECK_SCORE(score_of("sales, trend", "Sales trend", "[]", "", "", "manual", NULL), 100);
    /* the reference's token 库存周转分析 is not in the title (0); KnowHub's bigrams
     * 库存 存周 周转 are: 3/5 of 100 */
    CHECK_SCORE(score_of("库存周转分析", "月度库存周转率的计算方法", "[]", "", "", "manual", NULL),
                60);
    /* the reference: ["帮我分析", "roi"], only roi in "ROI 分析" (50); KnowHub: 分析, roi (100) */
    CHECK_SCORE(score_of("帮我分析ROI", "ROI 分析", "[]", "", "", "manual", NULL), 100);
    /* a 2-character Chinese query is one bigram */
    CHECK_SCORE(score_of("库存", "库存管理", "[]", "", "", "manual", NULL), 150);
    /* "café" stays a word (the reference's mixed split would give "caf") */
    CHECK_SCORE(score_of("café", "Café Sales", "[]", "", "", "manual", NULL), 150);
}

/* ---- the searches ---- */

static const char *const sample_md =
    "---\ntitle: ROI Calculation\ntags: [finance, computation]\ncreated: 2026-04-26\n"
    "updated: 2026-04-26\nsource: manual\nalwaysApply: false\n---\n\nROI = (revenue - cost) / "
    "cost\n";
static const char *const sample_md_skill =
    "---\ntitle: Handle Missing Values\ntags: [data-cleaning, pandas]\ncreated: 2026-04-26\n"
    "updated: 2026-04-26\nsource: agent_summarized\nsource_session: sess-abc\n---\n\n"
    "When encountering missing values in a DataFrame, consider:\n1. Drop rows if < 5% missing\n"
    "2. Fill with median for numeric columns\n";

struct ids {
    char *roi, *missing, *always, *trend, *stock, *roi_zh, *noise1, *noise2, *noise3;
};

static void seed(struct store *st, struct ids *ids)
{
    ids->roi = add_doc(st, SPACE, "rules", "roi.md", sample_md);
    ids->missing = add_doc(st, SPACE, "experiences", "cleaning/missing.md", sample_md_skill);
    /* an always-apply rule (the default): the rules block's, never the search's */
    ids->always = add_doc(st, SPACE, "rules", "always-roi.md",
                          "---\ntitle: ROI Always Rule\ntags: [finance]\n---\nAlways show ROI.\n");
    ids->trend = add(st, "experiences", "sales/quarterly-trend.md", "Sales trend", "[sales]", NULL,
                     "Compare each period with the same period last year.");
    ids->stock =
        add(st, "experiences", "库存/周转率.md", "月度库存周转率的计算方法", "[库存, 财务]", NULL,
            "库存周转率 = 销售成本 / 平均库存余额。按月计算，取期初与期末的平均值。");
    ids->roi_zh = add(st, "experiences", "finance/roi-guide.md", "投资回报率分析指南", "[财务]",
                      NULL, "ROI 用于衡量投资回报：(收益 - 成本) / 成本。");
    /* Chinese noise: no ASCII anywhere, Chinese path */
    ids->noise1 = add(st, "experiences", "杂项/客户.md", "客户留存分析", "[客户]", NULL,
                      "按月统计新老客户的留存情况，并比较各渠道。");
    ids->noise2 = add(st, "experiences", "杂项/渠道.md", "渠道销售对比", "[渠道, 销售]", NULL,
                      "对比线上与线下渠道的销售额与毛利。");
    ids->noise3 = add(st, "rules", "日期格式.md", "日期格式规范", "[格式]", NULL,
                      "所有日期一律使用年月日格式。");
}

static void ids_release(struct ids *ids)
{
    char **all[] = {&ids->roi,    &ids->missing, &ids->always, &ids->trend, &ids->stock,
                    &ids->roi_zh, &ids->noise1,  &ids->noise2, &ids->noise3};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(*all[i]);
}

static void test_reference_cases(struct store *st)
{
    struct hits h = {0};
    /* by title */
    CHECK_INT(files(st, SPACE, "ROI", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n >= 1 && strcmp(h.title[0], "ROI Calculation") == 0);
    /* title 100 + stem 30 + body 10 + whole query in title 50 */
    CHECK(h.n >= 1 && near(h.score[0], 190));
    /* by tag */
    CHECK_INT(files(st, SPACE, "pandas", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n >= 1 && strcmp(h.title[0], "Handle Missing Values") == 0);
    CHECK(h.n >= 1 && near(h.score[0], (50 + 50) * 0.9));
    /* by filename (stem only) */
    CHECK_INT(files(st, SPACE, "quarterly", 0, 10, NULL, &h), STORE_OK);
    CHECK_STR(titles(&h), "Sales trend");
    CHECK(h.n == 1 && near(h.score[0], 30));
    /* a 3-letter prefix of a word in the filename finds it (the reference's substring) */
    CHECK_INT(files(st, SPACE, "qua", 0, 10, NULL, &h), STORE_OK);
    CHECK_STR(titles(&h), "Sales trend");
    CHECK_INT(files(st, SPACE, "mis", 0, 10, NULL, &h), STORE_OK);
    CHECK(has_title(&h, "Handle Missing Values"));
    /* by body */
    CHECK_INT(files(st, SPACE, "revenue", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n >= 1 && strcmp(h.title[0], "ROI Calculation") == 0);
    CHECK(h.n >= 1 && near(h.score[0], 10));
    /* case-insensitive, full-width folded */
    const char *spellings[] = {"roi", "Roi", "ROI", "\xef\xbc\xb2\xef\xbc\xaf\xef\xbc\xa9"};
    for (size_t i = 0; i < sizeof spellings / sizeof *spellings; i++) {
        CHECK_INT(files(st, SPACE, spellings[i], 0, 10, NULL, &h), STORE_OK);
        CHECK(h.n >= 1 && strcmp(h.title[0], "ROI Calculation") == 0);
    }
    /* no match */
    CHECK_INT(files(st, SPACE, "xyznonexistent", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    /* category filter: the bitmask */
    CHECK_INT(files(st, SPACE, "ROI", SEARCH_EXPERIENCES, 10, NULL, &h), STORE_OK);
    CHECK(h.n >= 1);
    for (size_t i = 0; i < h.n; i++)
        CHECK_STR(h.category[i], "experiences");
    CHECK(!has_title(&h, "ROI Calculation"));
    CHECK_INT(files(st, SPACE, "ROI", SEARCH_RULES, 10, NULL, &h), STORE_OK);
    CHECK_STR(titles(&h), "ROI Calculation");
    CHECK_INT(files(st, SPACE, "ROI", SEARCH_RULES | SEARCH_EXPERIENCES, 10, NULL, &h), STORE_OK);
    CHECK(has_title(&h, "ROI Calculation") && has_title(&h, "投资回报率分析指南"));
    /* alwaysApply rules are skipped by the file view's search */
    CHECK_INT(files(st, SPACE, "ROI Always Rule", 0, 10, NULL, &h), STORE_OK);
    CHECK(!has_title(&h, "ROI Always Rule"));
    CHECK_INT(files(st, SPACE, "always", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    /* empty, blank and stop-word-only queries find nothing */
    const char *empty[] = {"",
                           "   ",
                           "\t\n",
                           "the",
                           "the of and to",
                           "How do I find it?",
                           "ok",
                           "a b c",
                           "的",
                           "的 了 和 是 在 帮我 请",
                           "帮我",
                           NULL};
    for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
        CHECK_INT(files(st, SPACE, empty[i], 0, 10, NULL, &h), STORE_OK);
        if (!CHECK_INT(h.n, 0))
            fprintf(stderr, "    query \"%s\" found %s\n", empty[i] ? empty[i] : "(null)",
                    titles(&h));
        CHECK_INT(entries(st, empty[i], 0, NULL, 10, &h), STORE_OK);
        CHECK_INT(h.n, 0);
    }
    /* another space sees none of it */
    CHECK_INT(files(st, "other-space", "ROI", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    hits_release(&h);
}

static void test_chinese(struct store *st, const struct ids *ids)
{
    struct hits h = {0};
    CHECK_INT(files(st, SPACE, "库存周转分析", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n >= 1 && strcmp(h.title[0], "月度库存周转率的计算方法") == 0);
    CHECK_INT(files(st, SPACE, "帮我分析ROI", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n >= 1 && (has_id(&h, ids->roi_zh) || has_id(&h, ids->roi)));
    CHECK(h.n >= 1 && (strcmp(h.id[0], ids->roi_zh) == 0 || strcmp(h.id[0], ids->roi) == 0));
    /* a 2-character query */
    CHECK_INT(files(st, SPACE, "库存", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n >= 1 && strcmp(h.id[0], ids->stock) == 0);
    /* a lone character is a prefix of the bigrams that start with it */
    CHECK_INT(files(st, SPACE, "库", 0, 10, NULL, &h), STORE_OK);
    CHECK(has_id(&h, ids->stock));
    /* a Chinese tag */
    CHECK_INT(files(st, SPACE, "财务", 0, 10, NULL, &h), STORE_OK);
    CHECK(has_id(&h, ids->stock) && has_id(&h, ids->roi_zh));
    /* English queries never match the Chinese-only documents */
    const char *english[] = {
        "analysis", "sales",  "customer retention",         "channel", "date format", "roi",
        "data",     "report", "monthly inventory turnover", "zzz"};
    for (size_t i = 0; i < sizeof english / sizeof *english; i++) {
        CHECK_INT(files(st, SPACE, english[i], 0, 50, NULL, &h), STORE_OK);
        if (!CHECK(!has_id(&h, ids->noise1) && !has_id(&h, ids->noise2) &&
                   !has_id(&h, ids->noise3) && !has_id(&h, ids->stock)))
            fprintf(stderr, "    \"%s\" found %s\n", english[i], titles(&h));
        CHECK_INT(entries(st, english[i], 0, NULL, 50, &h), STORE_OK);
        CHECK(!has_id(&h, ids->noise1) && !has_id(&h, ids->noise2) && !has_id(&h, ids->noise3));
    }
    /* a Chinese query does not pull English-only documents */
    CHECK_INT(files(st, SPACE, "客户留存", 0, 50, NULL, &h), STORE_OK);
    CHECK(h.n >= 1 && strcmp(h.id[0], ids->noise1) == 0);
    CHECK(!has_id(&h, ids->roi) && !has_id(&h, ids->missing) && !has_id(&h, ids->trend));
    hits_release(&h);
}

/* FTS5 syntax in a query is text: results or nothing, never an error. */
static void test_injection(struct store *st)
{
    static const char *const nasty[] = {
        "\" OR 1=1",
        "\" OR \"\"=\"",
        "NEAR(",
        "NEAR(roi cost, 2)",
        "*",
        "roi*",
        "{title}:",
        "{title}: roi",
        "title:roi",
        "title : roi",
        "\"unbalanced",
        "unbalanced\"",
        "\"\"\"",
        "(",
        ")",
        "roi AND",
        "AND OR NOT",
        "-roi",
        "^roi",
        "roi + cost",
        "'; DROP TABLE knowledge; --",
        "roi\" OR \"cost",
        "{",
        "}",
        ":",
        "\\",
        "\"roi\"*",
        "\xe2\x80\x9croi\xe2\x80\x9d",
        "NOT roi",
        "roi NOT cost",
        "col:umn roi",
        "knowledge_fts MATCH 'x'",
        "%_%",
        "\x01\x02roi",
    };
    struct hits h = {0};
    for (size_t i = 0; i < sizeof nasty / sizeof *nasty; i++) {
        int rc = files(st, SPACE, nasty[i], 0, 10, NULL, &h);
        if (!CHECK_INT(rc, STORE_OK))
            fprintf(stderr, "    query: %s\n", nasty[i]);
        rc = entries(st, nasty[i], 0, NULL, 10, &h);
        if (!CHECK_INT(rc, STORE_OK))
            fprintf(stderr, "    query: %s\n", nasty[i]);
    }
    /* the words in them still count as words */
    CHECK_INT(files(st, SPACE, "\" OR roi \"", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n >= 1 && strcmp(h.title[0], "ROI Calculation") == 0);
    CHECK_INT(files(st, SPACE, "{title}: revenue*", 0, 10, NULL, &h), STORE_OK);
    CHECK(has_title(&h, "ROI Calculation"));
    /* a table name with FTS5 syntax is text too */
    {
        struct json_object *t =
            json_tokener_parse("[\"\\\" OR 1=1\", \"NEAR(\", \"*\", \"{tags}:\"]");
        CHECK_INT(files(st, SPACE, "roi", 0, 10, t, &h), STORE_OK);
        json_object_put(t);
    }
    hits_release(&h);
}

static void test_max_results_and_ties(struct store *st)
{
    struct hits h = {0};
    char *ids[15];
    /* 15 equally scored rules (the reference's max_results test) created out of path order */
    static const int order[15] = {7, 3, 12, 0, 9, 14, 1, 5, 11, 2, 8, 13, 4, 10, 6};
    for (int i = 0; i < 15; i++) {
        char path[32], title[32];
        snprintf(path, sizeof path, "test-rule-%02d.md", order[i]);
        snprintf(title, sizeof title, "Test %d", order[i]);
        ids[i] = add(st, "rules", path, title, "[common]", NULL, "Body about common topic.");
    }
    CHECK_INT(files(st, SPACE, "common", 0, 5, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 5);
    CHECK_INT(files(st, SPACE, "common", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 10);
    CHECK_INT(files(st, SPACE, "common", 0, 50, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 15);
    /* equal score: newest updated_at first (one-second resolution: the 15 were
     * most likely made in the same second), then by path */
    {
        char *updated[MAX_HITS] = {0};
        for (size_t i = 0; i < h.n; i++) {
            struct knowledge k;
            CHECK_INT(store_knowledge_get(st, SPACE, h.id[i], 0, &k), STORE_OK);
            updated[i] = xstrdup(k.updated_at ? k.updated_at : "");
            knowledge_release(&k);
            CHECK(near(h.score[i], h.score[0]));
        }
        for (size_t i = 1; i < h.n; i++) {
            int c = strcmp(updated[i - 1], updated[i]);
            if (!CHECK(c > 0 || (c == 0 && strcmp(h.path[i - 1], h.path[i]) < 0)))
                fprintf(stderr, "    %s (%s) before %s (%s)\n", h.path[i - 1], updated[i - 1],
                        h.path[i], updated[i]);
        }
        if (h.n == 15 && strcmp(updated[0], updated[h.n - 1]) == 0)
            CHECK_STR(paths(&h), "test-rule-00.md test-rule-01.md test-rule-02.md test-rule-03.md "
                                 "test-rule-04.md test-rule-05.md test-rule-06.md test-rule-07.md "
                                 "test-rule-08.md test-rule-09.md test-rule-10.md test-rule-11.md "
                                 "test-rule-12.md test-rule-13.md test-rule-14.md");
        for (size_t i = 0; i < h.n; i++)
            free(updated[i]);
    }
    /* and the same answer every time */
    {
        char first5[512];
        struct hits again = {0};
        CHECK_INT(files(st, SPACE, "common", 0, 5, NULL, &again), STORE_OK);
        snprintf(first5, sizeof first5, "%s", paths(&again));
        for (int rep = 0; rep < 3; rep++) {
            CHECK_INT(files(st, SPACE, "common", 0, 5, NULL, &again), STORE_OK);
            CHECK_STR(paths(&again), first5);
        }
        CHECK_INT(files(st, SPACE, "common", 0, 50, NULL, &again), STORE_OK);
        CHECK(strncmp(paths(&again), first5, strlen(first5)) == 0);
        hits_release(&again);
    }
    /* scores descending */
    CHECK_INT(files(st, SPACE, "ROI", 0, 10, NULL, &h), STORE_OK);
    for (size_t i = 1; i < h.n; i++)
        CHECK(h.score[i - 1] >= h.score[i]);
    /* a max_results of 0 returns nothing */
    CHECK_INT(files(st, SPACE, "common", 0, 0, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    for (int i = 0; i < 15; i++) {
        struct knowledge k;
        CHECK_INT(store_knowledge_get(st, SPACE, ids[i], 0, &k), STORE_OK);
        knowledge_release(&k);
        CHECK_INT(store_knowledge_delete(st, SPACE, ids[i], ACTOR), STORE_OK);
        free(ids[i]);
    }
    CHECK_INT(files(st, SPACE, "common", 0, 50, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    hits_release(&h);
}

static void test_boosts(struct store *st)
{
    struct hits h = {0};
    struct json_object *tables;
    /* manual above distilled: the same document, x0.9 for the agent's */
    char *a = add(st, "experiences", "boost/widget-agent.md", "Widget pricing", "[pricing]",
                  "agent_summarized", "How widgets are priced.");
    char *m = add(st, "experiences", "boost/widget-manual.md", "Widget pricing", "[pricing]",
                  "manual", "How widgets are priced.");
    CHECK_INT(files(st, SPACE, "widget pricing", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 2);
    CHECK(h.n == 2 && strcmp(h.id[0], m) == 0 && strcmp(h.id[1], a) == 0);
    CHECK(h.n == 2 && near(h.score[1], h.score[0] * 0.9));

    /* table names: +30 per name in a tag lifts an otherwise equal entry */
    char *t1 =
        add(st, "experiences", "boost/gadget-a.md", "Gadget returns", "[gadgets]", NULL, "x");
    char *t2 = add(st, "experiences", "boost/gadget-b.md", "Gadget returns",
                   "[gadgets, orders_2024]", NULL, "x");
    CHECK_INT(files(st, SPACE, "gadget returns", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n == 2 && near(h.score[0], h.score[1])); /* equal without tables */
    tables = json_tokener_parse("[\"orders\"]");
    CHECK_INT(files(st, SPACE, "gadget returns", 0, 10, tables, &h), STORE_OK);
    CHECK(h.n == 2 && strcmp(h.id[0], t2) == 0);
    CHECK(h.n == 2 && near(h.score[0], h.score[1] + 30));
    json_object_put(tables);
    /* two table names in tags: +60; an entry tagged with a table name is found
     * even when the query matches nothing in it */
    tables = json_tokener_parse("[\"orders\", \"GADGETS\"]");
    CHECK_INT(files(st, SPACE, "zzzunmatched", 0, 10, tables, &h), STORE_OK);
    CHECK(has_id(&h, t2) && has_id(&h, t1));
    CHECK(h.n >= 1 && strcmp(h.id[0], t2) == 0 && near(h.score[0], 60));
    json_object_put(tables);
    /* ...but an empty query still finds nothing (the reference's blank query) */
    tables = json_tokener_parse("[\"orders\"]");
    CHECK_INT(files(st, SPACE, "  ", 0, 10, tables, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    json_object_put(tables);

    const char *ids[] = {a, m, t1, t2};
    for (size_t i = 0; i < 4; i++) {
        CHECK_INT(store_knowledge_delete(st, SPACE, ids[i], ACTOR), STORE_OK);
        free((char *)ids[i]);
    }
    hits_release(&h);
}

static void test_entries(struct store *st, const struct ids *ids)
{
    struct hits h = {0};
    /* stage 1 has no always-apply exclusion: it is the entry view */
    CHECK_INT(entries(st, "ROI Always Rule", 0, NULL, 10, &h), STORE_OK);
    CHECK(h.n >= 1 && strcmp(h.id[0], ids->always) == 0);
    /* at most n, best first */
    CHECK_INT(entries(st, "ROI", 0, NULL, 2, &h), STORE_OK);
    CHECK_INT(h.n, 2);
    CHECK(h.n == 2 && h.score[0] >= h.score[1]);
    /* the category filter */
    CHECK_INT(entries(st, "ROI", 0, "experiences", 10, &h), STORE_OK);
    for (size_t i = 0; i < h.n; i++)
        CHECK_STR(h.category[i], "experiences");
    CHECK(h.n >= 1);
    /* the types filter: entries with any of the types */
    {
        char *typed = add_doc(st, SPACE, "experiences", "typed/sprocket.md",
                              "---\ntitle: Sprocket tool guide\ntypes: [tool, plan]\n---\nbody\n");
        char *plain = add_doc(st, SPACE, "experiences", "typed/sprocket-notes.md",
                              "---\ntitle: Sprocket notes\ntypes: [usecase]\n---\nbody\n");
        CHECK_INT(entries(st, "sprocket", KTYPE_TOOL, NULL, 10, &h), STORE_OK);
        CHECK(h.n == 1 && strcmp(h.id[0], typed) == 0);
        CHECK_INT(entries(st, "sprocket", KTYPE_STRATEGY, NULL, 10, &h), STORE_OK);
        CHECK_INT(h.n, 0);
        CHECK_INT(entries(st, "sprocket", KTYPE_PLAN | KTYPE_USECASE, NULL, 10, &h), STORE_OK);
        CHECK_INT(h.n, 2);
        CHECK_INT(entries(st, "sprocket", 0, NULL, 10, &h), STORE_OK);
        CHECK_INT(h.n, 2);
        CHECK_INT(store_knowledge_delete(st, SPACE, typed, ACTOR), STORE_OK);
        CHECK_INT(store_knowledge_delete(st, SPACE, plain, ACTOR), STORE_OK);
        free(typed);
        free(plain);
    }
    /* an entry saved through the entry view (no document, no path) */
    {
        struct knowledge k;
        knowledge_init(&k);
        k.space = xstrdup(SPACE);
        k.category = xstrdup("experiences");
        k.title = xstrdup("Flange torque settings");
        k.scenario = xstrdup("Flange torque settings");
        k.content = xstrdup("Tighten in a star pattern.");
        k.tags = xstrdup("[]");
        k.urls = xstrdup("[]");
        k.agent_id = xstrdup("research_agent");
        k.source = xstrdup("agent");
        k.types = KTYPE_STRATEGY;
        k.score = 4;
        CHECK_INT(knowledge_create(st, &k, ACTOR), STORE_OK);
        CHECK_INT(entries(st, "flange torque", KTYPE_STRATEGY, NULL, 10, &h), STORE_OK);
        CHECK(h.n == 1 && strcmp(h.id[0], k.id) == 0);
        CHECK_INT(files(st, SPACE, "star pattern", 0, 10, NULL, &h), STORE_OK);
        CHECK(h.n == 1 && strcmp(h.id[0], k.id) == 0);
        CHECK_INT(store_knowledge_delete(st, SPACE, k.id, ACTOR), STORE_OK);
        knowledge_release(&k);
    }
    hits_release(&h);
}

/* The index follows every write: update, rename, delete, revert, import. */
static void test_index_in_step(struct store *st)
{
    struct hits h = {0};
    struct knowledge k;
    char *id = add(st, "experiences", "step/zebra-notes.md", "Zebra crossing", "[traffic]", NULL,
                   "Pedestrians first.");
    CHECK_INT(files(st, SPACE, "zebra", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n == 1 && strcmp(h.id[0], id) == 0);

    /* a write (new document): the old words go, the new ones come */
    CHECK_INT(store_knowledge_get(st, SPACE, id, 0, &k), STORE_OK);
    document_fill(&k, "experiences", "step/zebra-notes.md",
                  "---\ntitle: Giraffe feeding\ntags: [zoo]\n---\nAcacia leaves.\n",
                  strlen("---\ntitle: Giraffe feeding\ntags: [zoo]\n---\nAcacia leaves.\n"));
    CHECK_INT(store_knowledge_update(st, SPACE, id, &k, 0, ACTOR, "write"), STORE_OK);
    knowledge_release(&k);
    CHECK_INT(files(st, SPACE, "crossing", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    CHECK_INT(files(st, SPACE, "pedestrians", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    CHECK_INT(files(st, SPACE, "traffic", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    CHECK_INT(files(st, SPACE, "giraffe acacia", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n == 1 && strcmp(h.id[0], id) == 0);
    /* the old stem still finds it (the path did not change) */
    CHECK_INT(files(st, SPACE, "zebra", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n == 1 && near(h.score[0], 30));

    /* a rename: the stem follows the path */
    CHECK_INT(store_knowledge_get(st, SPACE, id, 0, &k), STORE_OK);
    {
        char *doc = xstrdup(k.document);
        free(k.path);
        k.path = xstrdup("step/okapi-notes.md");
        document_fill(&k, "experiences", "step/okapi-notes.md", doc, strlen(doc));
        free(doc);
    }
    CHECK_INT(store_knowledge_update(st, SPACE, id, &k, 0, ACTOR, "rename"), STORE_OK);
    knowledge_release(&k);
    CHECK_INT(files(st, SPACE, "zebra", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    CHECK_INT(files(st, SPACE, "okapi", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n == 1 && strcmp(h.path[0], "step/okapi-notes.md") == 0);

    /* counters and score do not disturb the index */
    {
        struct knowledge_case c = {"helpful", "case-1", "s", "r", "", "", "", NULL};
        int added = 0;
        CHECK_INT(store_knowledge_add_case(st, SPACE, id, &c, ACTOR, &added), STORE_OK);
        CHECK_INT(store_knowledge_set_score(st, SPACE, id, 5, ACTOR), STORE_OK);
        CHECK_INT(files(st, SPACE, "okapi giraffe", 0, 10, NULL, &h), STORE_OK);
        CHECK(h.n == 1 && strcmp(h.id[0], id) == 0);
    }

    /* a delete: gone from both searches */
    CHECK_INT(store_knowledge_delete(st, SPACE, id, ACTOR), STORE_OK);
    CHECK_INT(files(st, SPACE, "giraffe", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    CHECK_INT(entries(st, "giraffe", 0, NULL, 10, &h), STORE_OK);
    CHECK_INT(h.n, 0);

    /* a revert to version 1 brings back the first document, path and all */
    CHECK_INT(store_knowledge_revert(st, SPACE, id, 1, ACTOR), STORE_OK);
    CHECK_INT(files(st, SPACE, "zebra crossing", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n == 1 && strcmp(h.id[0], id) == 0 && strcmp(h.path[0], "step/zebra-notes.md") == 0);
    CHECK_INT(files(st, SPACE, "giraffe", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    CHECK_INT(files(st, SPACE, "okapi", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    /* a revert of a live entry to a later version */
    CHECK_INT(store_knowledge_revert(st, SPACE, id, 3, ACTOR), STORE_OK);
    CHECK_INT(files(st, SPACE, "okapi giraffe", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n == 1 && strcmp(h.id[0], id) == 0);
    CHECK_INT(files(st, SPACE, "crossing", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 0);
    CHECK_INT(store_knowledge_delete(st, SPACE, id, ACTOR), STORE_OK);
    free(id);

    /* an import: new files are found, updated files are found by their new words */
    {
        char dir[] = "/tmp/knowhub-test-search-XXXXXX", path[512];
        FILE *f, *report = fopen("/dev/null", "w");
        struct transfer_counts counts = {0};
        struct import_options opt = {SPACE, ON_CONFLICT_OVERWRITE, 0, NULL, 0};
        int source_errno;
        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/rules", dir);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/experiences", dir);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/experiences/narwhal-facts.md", dir);
        f = fopen(path, "w");
        fputs("---\ntitle: Narwhal facts\ntags: [arctic]\n---\n\nTusks are teeth.\n", f);
        fclose(f);
        snprintf(path, sizeof path, "%s/rules/walrus.md", dir);
        f = fopen(path, "w");
        fputs("Walrus rule without front matter.\n", f);
        fclose(f);
        CHECK_INT(transfer_import(st, &opt, dir, IMPORT_TREE, report, &counts, &source_errno),
                  TRANSFER_OK);
        CHECK_INT(counts.imported, 2);
        CHECK_INT(files(st, SPACE, "narwhal tusks", 0, 10, NULL, &h), STORE_OK);
        CHECK(h.n == 1 && strcmp(h.title[0], "Narwhal facts") == 0);
        /* the imported rule got the auto header: alwaysApply true, so only the entry view */
        CHECK_INT(files(st, SPACE, "walrus", 0, 10, NULL, &h), STORE_OK);
        CHECK_INT(h.n, 0);
        CHECK_INT(entries(st, "walrus", 0, NULL, 10, &h), STORE_OK);
        CHECK(h.n == 1 && strcmp(h.title[0], "walrus") == 0);
        /* import again with a changed file: updated in place, index follows */
        snprintf(path, sizeof path, "%s/experiences/narwhal-facts.md", dir);
        f = fopen(path, "w");
        fputs("---\ntitle: Narwhal migration\ntags: [arctic]\n---\n\nThey winter under ice.\n", f);
        fclose(f);
        memset(&counts, 0, sizeof counts);
        CHECK_INT(transfer_import(st, &opt, dir, IMPORT_TREE, report, &counts, &source_errno),
                  TRANSFER_OK);
        CHECK_INT(counts.updated, 1);
        CHECK_INT(files(st, SPACE, "tusks", 0, 10, NULL, &h), STORE_OK);
        CHECK_INT(h.n, 0);
        CHECK_INT(files(st, SPACE, "narwhal winter", 0, 10, NULL, &h), STORE_OK);
        CHECK(h.n == 1 && strcmp(h.title[0], "Narwhal migration") == 0);
        for (size_t i = 0; i < h.n; i++)
            CHECK_INT(store_knowledge_delete(st, SPACE, h.id[i], ACTOR), STORE_OK);
        CHECK_INT(entries(st, "walrus", 0, NULL, 10, &h), STORE_OK);
        for (size_t i = 0; i < h.n; i++)
            CHECK_INT(store_knowledge_delete(st, SPACE, h.id[i], ACTOR), STORE_OK);
        snprintf(path, sizeof path, "%s/experiences/narwhal-facts.md", dir);
        unlink(path);
        snprintf(path, sizeof path, "%s/rules/walrus.md", dir);
        unlink(path);
        snprintf(path, sizeof path, "%s/experiences", dir);
        rmdir(path);
        snprintf(path, sizeof path, "%s/rules", dir);
        rmdir(path);
        rmdir(dir);
        fclose(report);
    }
    hits_release(&h);
}

/* Ties on score go to the most recently updated, then by path: needs distinct
 * updated_at values, set directly in a file database. */
static void test_tie_updated(void)
{
    char path[] = "/tmp/knowhub-test-search-XXXXXX";
    char dbpath[600];
    struct store *st = NULL;
    sqlite3 *db = NULL;
    struct hits h = {0};
    char *old_a, *new_z, *mid_m;
    CHECK(mkdtemp(path) != NULL);
    snprintf(dbpath, sizeof dbpath, "%s/k.db", path);
    if (!CHECK_INT(store_open(dbpath, &st), STORE_OK))
        return;
    old_a = add_doc(st, SPACE, "experiences", "a-tie.md", "---\ntitle: Tie breaker\n---\nx\n");
    new_z = add_doc(st, SPACE, "experiences", "z-tie.md", "---\ntitle: Tie breaker\n---\nx\n");
    mid_m = add_doc(st, SPACE, "experiences", "m-tie.md", "---\ntitle: Tie breaker\n---\nx\n");
    CHECK_INT(sqlite3_open(dbpath, &db), SQLITE_OK);
    {
        char sql[512];
        snprintf(sql, sizeof sql,
                 "UPDATE knowledge SET updated_at = '2020-01-01 00:00:00' WHERE id = '%s';"
                 "UPDATE knowledge SET updated_at = '2030-01-01 00:00:00' WHERE id = '%s';"
                 "UPDATE knowledge SET updated_at = '2025-01-01 00:00:00' WHERE id = '%s';",
                 old_a, new_z, mid_m);
        CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    }
    sqlite3_close(db);
    /* written behind knowhub's back: its next commit brings the search rows
     * (search_index.c) up to date */
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK_INT(files(st, SPACE, "tie breaker", 0, 10, NULL, &h), STORE_OK);
    CHECK_STR(paths(&h), "z-tie.md m-tie.md a-tie.md");
    CHECK_INT(entries(st, "tie breaker", 0, NULL, 10, &h), STORE_OK);
    CHECK_STR(paths(&h), "z-tie.md m-tie.md a-tie.md");
    hits_release(&h);
    store_close(st);
    free(old_a);
    free(new_z);
    free(mid_m);
    unlink(dbpath);
    snprintf(dbpath, sizeof dbpath, "%s/k.db-wal", path);
    unlink(dbpath);
    snprintf(dbpath, sizeof dbpath, "%s/k.db-shm", path);
    unlink(dbpath);
    rmdir(path);
}

/* More matching entries than one candidate pass takes: the best must still win. */
/* Word forms meet (stemmed search terms), and a query's terms reach FTS5 as
 * the terms they are: not stemmed a second time ("conversions" ->
 * "convers", which the stemmer would make "conver"), nor dropped when the
 * stem is short ("going" -> "go"). */
static void test_word_forms(struct store *st)
{
    struct hits h = {0};
    char *a = add(st, "experiences", "forms/funnel.md", "Checkout funnels", "[]", NULL,
                  "We watched the conversion of every step and kept going.");
    CHECK_INT(files(st, SPACE, "conversions", 0, 10, NULL, &h), STORE_OK);
    CHECK(has_id(&h, a));
    CHECK_INT(files(st, SPACE, "conversion", 0, 10, NULL, &h), STORE_OK);
    CHECK(has_id(&h, a));
    CHECK_INT(files(st, SPACE, "funnel going", 0, 10, NULL, &h), STORE_OK);
    CHECK(h.n >= 1 && strcmp(h.id[0], a) == 0);
    /* a word whose stem is two letters: the query's term "go" itself */
    CHECK_INT(files(st, SPACE, "going", 0, 10, NULL, &h), STORE_OK);
    CHECK(has_id(&h, a));
    hits_release(&h);
    free(a);
}

static void test_many_candidates(struct store *st)
{
    struct hits h = {0};
    char *best;
    struct buf text;
    buf_init(&text, 1 << 20);
    /* the best match first (oldest), then 400 weaker title matches */
    best = add_doc(st, "bulk", "experiences", "bulk/quokka.md",
                   "---\ntitle: Quokka\ntags: [quokka]\n---\nQuokka care.\n");
    CHECK_INT(store_begin(st), STORE_OK);
    for (int i = 0; i < 400; i++) {
        char p[64];
        snprintf(p, sizeof p, "bulk/guide-%03d.md", i);
        buf_reset(&text);
        buf_addf(&text, "---\ntitle: Quokka guide %d\n---\nNotes %d.\n", i, i);
        free(add_doc(st, "bulk", "experiences", p, text.data));
    }
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK_INT(files(st, "bulk", "quokka", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT(h.n, 10);
    if (!CHECK(h.n >= 1 && strcmp(h.id[0], best) == 0))
        fprintf(stderr, "    first: %s (%.1f); the best (title, tag, stem, body) scores 290\n",
                h.n ? h.title[0] : "-", h.n ? h.score[0] : 0.0);
    hits_release(&h);
    free(best);
    buf_release(&text);
}

/* A query whose words are held by more entries than the index ranks in
 * memory (MEMORY_POSTINGS) takes the passes with the index's statistics:
 * the same hits, order and scores as with no index at all; a rare word of
 * the same space is ranked in memory, the same again. */
static void test_memory_common_words(struct store *st)
{
    static const char *const queries[] = {"wombat", "wombat burrow", "numbat", "wombat numbat"};
    struct hits mem = {0}, passes = {0};
    struct buf text;
    size_t budget = lindex_budget();
    buf_init(&text, 1 << 20);
    CHECK_INT(store_begin(st), STORE_OK);
    for (int i = 0; i < 8300; i++) {
        char p[64];
        snprintf(p, sizeof p, "common/w-%04d.md", i);
        buf_reset(&text);
        buf_addf(&text, "---\ntitle: Wombat %s %d\n---\nA wombat burrow, note %d%s.\n",
                 i % 7 ? "guide" : "burrow", i, i, i % 1000 ? "" : " numbat");
        free(add_doc(st, "common", "experiences", p, text.data));
    }
    CHECK_INT(store_commit(st), STORE_OK);
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        CHECK_INT(files(st, "common", queries[q], 0, 10, NULL, &mem), STORE_OK);
        lindex_configure(0);
        CHECK_INT(files(st, "common", queries[q], 0, 10, NULL, &passes), STORE_OK);
        lindex_configure(budget);
        CHECK_INT((long)mem.n, (long)passes.n);
        for (size_t i = 0; i < mem.n && i < passes.n; i++)
            if (!CHECK(strcmp(mem.id[i], passes.id[i]) == 0 && mem.score[i] == passes.score[i]))
                fprintf(stderr, "    '%s' hit %zu: %s %.6f, the passes %s %.6f\n", queries[q], i,
                        mem.title[i], mem.score[i], passes.title[i], passes.score[i]);
    }
    /* a prefix every entry's word begins: the candidates the words it
     * begins give are bounded (lindex.c PREFIX_*), the hits still found */
    CHECK_INT(files(st, "common", "wom", 0, 10, NULL, &mem), STORE_OK);
    CHECK_INT((long)mem.n, 10);
    for (size_t i = 0; i < mem.n; i++)
        CHECK(strncmp(mem.title[i], "Wombat ", 7) == 0);
    hits_release(&mem);
    hits_release(&passes);
    buf_release(&text);
}

/* The index in memory follows the search log (service/lindex.c): a process
 * behind the log's floor (rows pruned, or emptied by a rebuild) loads the
 * space anew instead of applying the rows left, which would miss what the
 * pruned rows said; a process within it applies only the new rows. */
static void test_memory_log_floor(void)
{
    char path[] = "/tmp/knowhub-lindex-XXXXXX";
    char dbpath[600];
    struct store *st = NULL;
    sqlite3 *db = NULL;
    struct hits h = {0};
    char *a, *b, *c;
    CHECK(mkdtemp(path) != NULL);
    snprintf(dbpath, sizeof dbpath, "%s/k.db", path);
    if (!CHECK_INT(store_open(dbpath, &st), STORE_OK))
        return;
    a = add_doc(st, SPACE, "experiences", "a-floor.md", "---\ntitle: Okapi floor a\n---\nx\n");
    CHECK_INT(files(st, SPACE, "okapi", 0, 10, NULL, &h), STORE_OK); /* loads the space */
    CHECK_STR(paths(&h), "a-floor.md");
    b = add_doc(st, SPACE, "experiences", "b-floor.md", "---\ntitle: Okapi floor b\n---\nx\n");
    CHECK_INT(files(st, SPACE, "okapi", 0, 10, NULL, &h), STORE_OK); /* applies b's row */
    CHECK_INT((long)h.n, 2);
    /* the rows after this process's stamp pruned, as every 256 stamps */
    c = add_doc(st, SPACE, "experiences", "c-floor.md", "---\ntitle: Okapi floor c\n---\nx\n");
    CHECK_INT(sqlite3_open(dbpath, &db), SQLITE_OK);
    CHECK_INT(sqlite3_exec(db,
                           "UPDATE search_stamps SET log_floor = stamp;"
                           "DELETE FROM search_log;",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
    free(add_doc(st, SPACE, "experiences", "d-floor.md", "---\ntitle: Okapi floor d\n---\nx\n"));
    CHECK_INT(files(st, SPACE, "okapi", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT((long)h.n, 4); /* c comes from the new load: its row was pruned */
    /* written behind knowhub's back and logged by its next commit */
    CHECK_INT(sqlite3_open(dbpath, &db), SQLITE_OK);
    {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "UPDATE knowledge SET updated_at = '2040-01-01 00:00:00' WHERE id = '%s';", b);
        CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    }
    sqlite3_close(db);
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK_INT(files(st, SPACE, "okapi", 0, 10, NULL, &h), STORE_OK);
    CHECK_INT((long)h.n, 4);
    CHECK(strncmp(paths(&h), "b-floor.md ", 11) == 0); /* the newest of equal scores first */
    hits_release(&h);
    store_close(st);
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    struct store *st = NULL;
    struct ids ids = {0};
    store_global_init();
    if (sodium_init() < 0) {
        CHECK(0);
        return test_summary();
    }
    test_query_tokens();
    test_verified_scores();
    test_score_rules();
    test_score_differences();
    if (!CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return test_summary();
    seed(st, &ids);
    /* the reference's scores, exactly */
    ranking.ranking = RANKING_REFERENCE;
    test_reference_cases(st);
    test_boosts(st);
    test_index_in_step(st);
    ranking.ranking = RANKING_FUSED;
    test_chinese(st, &ids);
    test_injection(st);
    test_max_results_and_ties(st);
    test_entries(st, &ids);
    test_word_forms(st);
    test_many_candidates(st);
    test_memory_common_words(st);
    ids_release(&ids);
    store_close(st);
    test_tie_updated();
    test_memory_log_floor();
    return test_summary();
}
