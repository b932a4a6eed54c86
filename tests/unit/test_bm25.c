/* test_bm25: search terms (stemming), terms records, the BM25F coverage and
 * the passage finder (domain/bm25.h, domain/passage.h, tokenize_terms). */
#include "harness.h"

#include "base/buf.h"
#include "domain/bm25.h"
#include "domain/passage.h"
#include "domain/tokenize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int join_term(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct buf *b = ctx;
    (void)start;
    (void)end;
    if (b->len)
        buf_addch(b, ' ');
    buf_add(b, token, n);
    return 0;
}

/* The search terms of text, space-separated (static buffer). */
static const char *terms_of(const char *text)
{
    static struct buf b;
    if (!b.max)
        buf_init(&b, 1 << 16);
    buf_reset(&b);
    tokenize_terms(text, strlen(text), join_term, &b);
    return b.data;
}

static void test_terms(void)
{
    /* word forms meet */
    CHECK_STR(terms_of("recommendations recommended recommend"), "recommend recommend recommend");
    CHECK_STR(terms_of("Running runs ran"), "run run ran");
    CHECK_STR(terms_of("going"), "go");
    /* question words and negated auxiliaries are not terms */
    CHECK_STR(terms_of("When did she first go climbing? Whose idea, didn't she say?"),
              "first climb idea say");
    /* identifiers, numbers and other scripts stay as they are */
    CHECK_STR(terms_of("sales_data_2024 v2 2024 café"), "sales_data_2024 2024 café");
    CHECK_STR(terms_of("月度库存周转率的计算方法"), "月度 度库 库存 存周 周转 转率 计算 算方 方法");
    /* the reference tokenizer (and so the reference score) is unchanged */
    {
        struct buf b;
        buf_init(&b, 1 << 16);
        tokenize("recommendations whose", 21, join_term, &b);
        CHECK_STR(b.data, "recommendations whose");
        buf_release(&b);
    }
}

static void record_of(const char *title, const char *body, struct buf *out)
{
    const char *text[BM25_FIELDS] = {title, "[\"notes\"]", "notes", "", body};
    size_t len[BM25_FIELDS];
    for (int f = 0; f < BM25_FIELDS; f++)
        len[f] = strlen(text[f]);
    bm25_record(text, len, out);
}

static void test_records(void)
{
    struct buf rec;
    long tf[BM25_FIELDS], lens[BM25_FIELDS];
    buf_init(&rec, 1 << 20);
    record_of("Climbing gyms", "She climbs. The gym climbing wall; climbed twice.", &rec);
    CHECK_STR(rec.data, "2 1 1 0 6\n"
                        "climb\t1 0 0 0 3\n"
                        "gym\t1 0 0 0 1\n"
                        "note\t0 1 1 0 0\n"
                        "twice\t0 0 0 0 1\n"
                        "wall\t0 0 0 0 1\n");
    CHECK_INT(bm25_record_lengths(rec.data, lens), 0);
    CHECK_INT(lens[BM25_BODY], 6);
    CHECK_INT(bm25_record_tf(rec.data, rec.len, "climb", 5, tf), 1);
    CHECK_INT(tf[BM25_TITLE], 1);
    CHECK_INT(tf[BM25_BODY], 3);
    CHECK_INT(bm25_record_tf(rec.data, rec.len, "wall", 4, tf), 1);
    CHECK_INT(bm25_record_tf(rec.data, rec.len, "twice", 5, tf), 1);
    CHECK_INT(bm25_record_tf(rec.data, rec.len, "gy", 2, tf), 0);
    CHECK_INT(bm25_record_tf(rec.data, rec.len, "zebra", 5, tf), 0);
    CHECK_INT(bm25_record_tf(rec.data, rec.len, "aardvark", 8, tf), 0);
    CHECK_INT(tf[BM25_BODY], 0);
    /* not a record */
    CHECK_INT(bm25_record_lengths("garbage", lens), -1);
    CHECK_INT(bm25_record_tf("x\n", 2, "x", 1, tf), 0);
    buf_release(&rec);
}

static double coverage_of(const char *const *terms, size_t n, const long long *df, double docs,
                          const char *title, const char *body)
{
    struct buf rec;
    struct bm25_stats s = {docs, {2 * docs, 3 * docs, docs, 0, 200 * docs}};
    struct bm25_query q;
    double c;
    buf_init(&rec, 1 << 20);
    record_of(title, body, &rec);
    bm25_query_init(&q, terms, n, df, &s);
    c = bm25_coverage(&q, &s, rec.data, rec.len);
    buf_release(&rec);
    return c;
}

static void test_coverage(void)
{
    const char *terms[] = {"lag", "replic"};
    long long df[] = {2, 50};
    struct bm25_stats s = {1000, {0}};
    struct bm25_query q;
    char body[4096];
    double rare, common, both, none, longer;
    /* a rare word counts more than a common one */
    rare = coverage_of(terms, 2, df, 1000, "Notes", "check the lag");
    common = coverage_of(terms, 2, df, 1000, "Notes", "check the replication");
    both = coverage_of(terms, 2, df, 1000, "Notes", "check the replication lag");
    none = coverage_of(terms, 2, df, 1000, "Notes", "nothing here");
    CHECK(rare > common);
    CHECK(both > rare);
    CHECK(none == 0);
    CHECK(both < 1);
    /* a word deep in a long body counts, less for the length */
    memset(body, 0, sizeof body);
    for (int i = 0; i < 300; i++)
        strcat(body, "filler ");
    strcat(body, "lag");
    longer = coverage_of(terms, 2, df, 1000, "Notes", body);
    CHECK(longer > 0 && longer < rare);
    /* in a body of the usual length, the title weighs more than the body */
    body[0] = '\0';
    for (int i = 0; i < 199; i++)
        strcat(body, "filler ");
    {
        double in_title = coverage_of(terms, 2, df, 1000, "Lag", body);
        strcat(body, "lag");
        CHECK(in_title > coverage_of(terms, 2, df, 1000, "Notes", body));
    }
    /* bounds: every term is the IDF sum */
    bm25_query_init(&q, terms, 2, df, &s);
    CHECK(fabs(bm25_coverage_bound(&q, 3) - 1) < 1e-12);
    CHECK(bm25_coverage_bound(&q, 1) > bm25_coverage_bound(&q, 2));
    CHECK(bm25_coverage_bound(&q, 0) == 0);
    /* a small space counts as BM25_MIN_DOCS entries: a word it holds keeps
     * a weight near one it lacks */
    {
        long long one[] = {1, 1};
        struct bm25_stats tiny = {1, {0}};
        bm25_query_init(&q, terms, 2, one, &tiny);
        CHECK(q.idf[0] > 4.0 && q.idf[0] < 4.3); /* ln(1 + 99.5 / 1.5) */
    }
    /* a term no entry holds weighs nothing */
    {
        long long absent[] = {2, 0};
        bm25_query_init(&q, terms, 2, absent, &s);
        CHECK(q.idf[1] == 0 && q.idf[0] > 0);
        CHECK(fabs(bm25_coverage_bound(&q, 1) - 1) < 1e-12);
    }
    /* no record, or an empty query */
    bm25_query_init(&q, terms, 0, df, &s);
    CHECK(bm25_coverage(&q, &s, "1 1 1 1 1\n", 10) == 0);
}

static void test_passage(void)
{
    char text[4096];
    char okapi[] = "okapi", replic[] = "replic";
    char *terms[] = {okapi, replic};
    struct passage p;
    size_t n = 0;
    text[0] = '\0';
    for (int i = 0; i < 12; i++)
        strcat(text, "An unrelated sentence about dashboards and exports. ");
    strcat(text, "Then check the okapi replication lag, which replicates slowly. ");
    for (int i = 0; i < 12; i++)
        strcat(text, "More unrelated words follow here. ");
    passage_find(text, strlen(text), terms, 2, 300, &p);
    CHECK(p.offset > 0);
    CHECK(p.end - p.start <= 300 && p.end > p.start);
    CHECK_INT(p.terms, 2);
    CHECK_INT(p.n, 3); /* okapi, replication, replicates */
    CHECK(strncmp(text + p.start + p.hits[0].start, "okapi", 5) == 0 ||
          strstr(text + p.start, "okapi") != NULL);
    /* the first mark is "okapi": its offset in characters (ASCII here) */
    CHECK(memcmp(text + p.start + p.hits[0].start, "okapi", 5) == 0);
    CHECK_INT(p.hits[0].length, 5);
    CHECK(memcmp(text + p.start + p.hits[1].start, "replication", 11) == 0);
    /* no word boundary cut: the passage starts and ends at spaces */
    CHECK(p.start == 0 || text[p.start - 1] == ' ');
    /* no term: the start of the text */
    passage_find(text, strlen(text), terms, 0, 300, &p);
    CHECK_INT(p.offset, 0);
    CHECK_INT(p.n, 0);
    /* Chinese: offsets in characters, overlapping bigrams one mark */
    {
        const char *zh = "这是一段很长的说明。库存周转率的计算方法在这里。";
        char a[] = "库存", b[] = "存周", c[] = "周转";
        char *zt[] = {a, b, c};
        passage_find(zh, strlen(zh), zt, 3, 300, &p);
        CHECK_INT(p.n, 1);
        CHECK_INT(p.hits[0].start, 10);
        CHECK_INT(p.hits[0].length, 4);
    }
    /* an empty text */
    passage_find("", 0, terms, 2, 300, &p);
    CHECK_INT(p.end, 0);
    (void)n;
}

int main(void)
{
    test_terms();
    test_records();
    test_coverage();
    test_passage();
    return test_summary();
}
