/* test_conflict: the local contradiction detector (domain/conflict.h). Every
 * rule has a row of pairs it must call and near misses it must not (the
 * test fails when a rule has neither); then the cue table, the reasons, the
 * symmetry of the verdicts and the bounds. */
#include "harness.h"

#include "base/buf.h"
#include "base/util.h"
#include "domain/conflict.h"

#include <stdlib.h>
#include <string.h>

struct example {
    const char *rule;
    const char *a, *b;   /* contents (titles and scenarios are tested below) */
    const char *verdict; /* expected */
    const char *reason;  /* a part of the expected reason, or NULL */
};

static const struct example EXAMPLES[] = {
    /* opposite polarity on the same target: English */
    {"polarity_en", "Always enable gzip compression for API responses.", "Disable compression.",
     "contradiction", "opposite polarity on \"compression\""},
    {"polarity_en", "Use the fiscal quarter in revenue reports.",
     "Avoid the fiscal quarter in revenue reports.", "contradiction", "\"Use\" vs \"Avoid\""},
    {"polarity_en", "You should retry failed uploads.", "You should not retry failed uploads.",
     "contradiction", "\"should\" vs \"should not\""},
    {"polarity_en", "Compression must be enabled on the proxy.",
     "Compression must not be enabled on the proxy.", "contradiction", "opposite polarity"},
    {"polarity_en", "Always commit the lockfile.", "Never commit the lockfile.", "contradiction",
     "\"Always\" vs \"Never\""},
    {"polarity_en", "Do cache the session tokens.", "Don't cache the session tokens.",
     "contradiction", "\"Don't\""},
    {"polarity_en", "Never commit secrets to the repository.",
     "Do not commit secrets to the repository.", "duplicate", NULL},
    {"polarity_en", "Never disable TLS verification for the payment API.",
     "Always keep TLS verification enabled for the payment API.", "duplicate", NULL},
    {"polarity_en", "Never deploy on Friday without a rollback plan.",
     "Always deploy on Friday with a rollback plan.", "duplicate", NULL},
    {"polarity_en", "Avoid storing large blobs in the database and use object storage.",
     "Use object storage for large blobs instead of the database.", "duplicate", NULL},
    /* opposite polarity: Chinese */
    {"polarity_zh", "总是启用压缩。", "不要启用压缩。", "contradiction",
     "\"总是启用\" vs \"不要启用\""},
    {"polarity_zh", "导出报表必须使用财年季度。", "导出报表禁止使用财年季度。", "contradiction",
     "opposite polarity on \"财年季度\": \"必须使用\" vs \"禁止使用\""},
    {"polarity_zh", "生产环境启用查询缓存。", "生产环境禁用查询缓存。", "contradiction", NULL},
    {"polarity_zh", "从不在主库上跑分析查询。", "总是在主库上跑分析查询。", "contradiction", NULL},
    {"polarity_zh", "不启用自动提交。", "启用自动提交。", "contradiction", "\"不启用\""},
    {"polarity_zh", "禁止在代码里写死密钥。", "不得在代码里写死密钥。", "duplicate", NULL},
    {"polarity_zh", "不同环境的配置分开存放。",
     "不同环境的配置分开存放在各自仓库，变更由运维审批。", "refinement", NULL},
    /* different numbers for the same key and unit */
    {"numbers", "Set the request timeout to 30 s.", "Set the request timeout to 60 s.",
     "contradiction", "different numbers for \"timeout\": \"30 s\" vs \"60 s\""},
    {"numbers", "Import the table in chunks of 50,000 rows.",
     "Import the table in chunks of 10,000 rows.", "contradiction", "\"50,000 rows\""},
    {"numbers", "Set the request timeout to 30 s.", "Set the request timeout to 30000 ms.",
     "duplicate", NULL},
    {"numbers", "Keep the pool at 20 connections and the request timeout at 30 s.",
     "Keep the pool at 20 connections and retry after 5 s.", "unrelated", NULL},
    {"numbers", "查询超时设为30秒。", "查询超时设为60秒。", "contradiction", "\"30秒\""},
    {"numbers", "Upgrade to Python 3.11 before the release.",
     "Upgrade to Python 3.11 before the release.", "duplicate", NULL},
    /* opposite actions on the same object */
    {"actions", "Add an index on orders.customer_id.", "Remove the index on orders.customer_id.",
     "contradiction", "opposite actions on"},
    {"actions", "Increase the worker pool size under load.",
     "Decrease the worker pool size under load.", "contradiction", "\"Increase\" vs \"Decrease\""},
    {"actions", "给订单表添加索引。", "删除订单表的索引。", "contradiction", NULL},
    {"actions", "高峰期提高批量大小。", "高峰期降低批量大小。", "contradiction", NULL},
    {"actions", "Add an index on orders.customer_id.",
     "Do not remove the index on orders.customer_id.", "duplicate", NULL},
    /* a Chinese target X的Y is about Y: other things of one X do not clash */
    {"actions", "高峰期增加缓存集群的节点数。", "高峰期减少缓存集群的节点数。", "contradiction",
     NULL},
    {"actions", "高峰期增加缓存集群的节点数。", "高峰期减少缓存集群的过期时间。", "unrelated",
     NULL},
    /* opposite advice on other instances, scopes or conditions of one thing */
    {"qualifiers", "Create every new cache key with a TTL.", "Delete cache keys older than a day.",
     "unrelated", NULL},
    {"qualifiers", "Enable verbose tracing on staging.", "Disable verbose tracing in production.",
     "unrelated", NULL},
    {"qualifiers", "Enable verbose tracing in production.",
     "Disable verbose tracing in production.", "contradiction", NULL},
    {"qualifiers", "定期创建分区表。", "删除过期的分区表。", "unrelated", NULL},
    /* the same advice for different things: the rest of the clause (scope) */
    {"scopes", "Increase the thread pool for the nightly report workers.",
     "Decrease the thread pool for the outgoing mail senders.", "unrelated", NULL},
    {"scopes", "Increase the thread pool for the report workers.",
     "Decrease the thread pool for the report workers.", "contradiction", NULL},
    {"scopes", "Allow uploads up to 5 MB on the avatar form.",
     "Allow uploads up to 4 GB on the video studio.", "unrelated", NULL},
    {"numbers", "Set the batch size of the invoice export to 500.",
     "Set the batch size of the invoice export to 5000.", "contradiction", NULL},
    {"numbers", "Set the batch size of the invoice export to 500 rows.",
     "Set the page size of the audit viewer to 50 rows.", "unrelated", NULL},
    /* a number's unit and rate ("jobs per minute") and a Chinese name after
     * 的 are no scope: these differ in the workers, 头像服务 and 搜索服务 (no
     * contradiction; by their words alone near-duplicates) */
    {"scopes", "Raise the queue depth of the upload workers to 200 jobs per minute.",
     "Lower the queue depth of the report workers to 10 jobs per minute.", "duplicate", NULL},
    {"scopes", "头像服务的缓存上限设为512Mi。", "搜索服务的缓存上限设为2Gi。", "duplicate", NULL},
    {"numbers", "头像服务的缓存上限设为512Mi。", "头像服务的缓存上限设为2Gi。", "contradiction",
     NULL},
    {"scopes", "Limit request bodies to 1 MB on the login endpoint.",
     "Limit request bodies to 50 MB on the login endpoint because uploads failed.", "contradiction",
     NULL},
    /* opposite order */
    {"order", "Run the migrations before deploying the app.",
     "Run the migrations after deploying the app.", "contradiction", "opposite order"},
    {"order", "Take a backup before upgrading Postgres.", "Restart the service after upgrading.",
     "unrelated", NULL},
    /* the same positive action on different objects, the rest equal */
    {"choice", "Use the fiscal quarter in finance reports.",
     "Use the calendar quarter in finance reports.", "contradiction",
     "different choices for \"Use\": \"fiscal\" vs \"calendar\""},
    {"choice", "Prefer Protobuf for internal RPC payloads.",
     "Prefer JSON for internal RPC payloads; it is easier to debug.", "contradiction", NULL},
    {"choice", "Use Postgres for the job queue.", "Use Redis for the session cache.", "unrelated",
     NULL},
    /* antonyms swapped in otherwise close entries */
    {"antonyms", "Send the confirmation email synchronously in the request.",
     "Send the confirmation email asynchronously from a queue.", "contradiction",
     "\"synchronously\" vs \"asynchronously\""},
    {"antonyms", "注册时同步发送验证短信。", "注册时异步发送验证短信。", "contradiction", NULL},
    {"antonyms", "Replicate the payments database synchronously.",
     "Ship nightly exports to the analytics bucket asynchronously.", "unrelated", NULL},
    /* duplicate, refinement, unrelated: no contradiction signal */
    {"similarity", "Rotate the API keys every quarter and store them in the vault.",
     "Store the API keys in the vault and rotate them every quarter.", "duplicate", NULL},
    {"similarity", "Retry failed uploads with exponential backoff.",
     "Retry failed uploads with exponential backoff, capped at five attempts, and log each "
     "retry with the upload id.",
     "refinement", "adds"},
    {"similarity", "Enable compression for JSON responses.",
     "Disable compression for server-sent event streams because buffering delays events.",
     "unrelated", NULL},
    {"similarity", "Partition the events table by month.",
     "The billing service reads invoices from the ledger.", "unrelated", "low overlap"},
};
#define N_EXAMPLES (sizeof EXAMPLES / sizeof *EXAMPLES)

static const char *const RULES[] = {"polarity_en", "polarity_zh", "numbers", "actions",
                                    "qualifiers",  "scopes",      "order",   "similarity"};

static void test_examples(void)
{
    struct buf reason;
    buf_init(&reason, 4096);
    for (size_t i = 0; i < N_EXAMPLES; i++) {
        const struct example *x = &EXAMPLES[i];
        struct conflict_entry a = {NULL, NULL, x->a}, b = {NULL, NULL, x->b};
        struct conflict_result r;
        CHECK_INT(conflict_check(&a, &b, &r, &reason), 0);
        if (!CHECK_STR(conflict_verdict_name(r.verdict), x->verdict))
            fprintf(stderr, "    %s: %s | %s -> %s\n", x->rule, x->a, x->b, reason.data);
        if (x->reason && !CHECK(strstr(reason.data, x->reason) != NULL))
            fprintf(stderr, "    reason: %s\n    wanted: %s\n", reason.data, x->reason);
        /* the verdict does not depend on which entry comes first */
        CHECK_INT(conflict_check(&b, &a, &r, &reason), 0);
        CHECK_STR(conflict_verdict_name(r.verdict), x->verdict);
    }
    /* every rule has a pair it calls a contradiction and one it does not */
    for (size_t k = 0; k < sizeof RULES / sizeof *RULES; k++) {
        int hit = 0, miss = 0;
        for (size_t i = 0; i < N_EXAMPLES; i++)
            if (strcmp(EXAMPLES[i].rule, RULES[k]) == 0)
                strcmp(EXAMPLES[i].verdict, "contradiction") == 0 ? hit++ : miss++;
        if (!CHECK(miss > 0 && (hit > 0 || strcmp(RULES[k], "similarity") == 0)))
            fprintf(stderr, "    rule %s: %d hits, %d misses\n", RULES[k], hit, miss);
    }
    buf_release(&reason);
}

static void test_fields(void)
{
    struct buf reason;
    struct conflict_result r;
    /* the scenario and title are read with the content */
    struct conflict_entry a = {"Report quarters", "Quarterly revenue reports",
                               "Use the fiscal quarter."};
    struct conflict_entry b = {"Report quarters", "Quarterly revenue reports",
                               "Never use the fiscal quarter."};
    struct conflict_entry empty = {NULL, NULL, NULL};
    buf_init(&reason, 4096);
    CHECK_INT(conflict_check(&a, &b, &r, &reason), 0);
    CHECK_STR(conflict_verdict_name(r.verdict), "contradiction");
    CHECK(r.containment > 0.9);
    CHECK_INT(conflict_check(&a, &a, &r, &reason), 0);
    CHECK_STR(conflict_verdict_name(r.verdict), "duplicate");
    CHECK(r.jaccard > 0.99);
    CHECK_INT(conflict_check(&empty, &a, &r, &reason), 0);
    CHECK_STR(conflict_verdict_name(r.verdict), "unrelated");
    CHECK_INT(conflict_check(&empty, &empty, &r, &reason), 0);
    CHECK_STR(conflict_verdict_name(r.verdict), "unrelated");
    buf_release(&reason);
}

static void test_table(void)
{
    size_t n = conflict_cue_count();
    const char *axis;
    int sign;
    CHECK(n >= 60);
    for (size_t i = 0; i < n; i++) {
        const char *w = conflict_cue_word(i, &axis, &sign);
        CHECK(w && *w);
        CHECK(sign == 1 || sign == -1);
        CHECK(strcmp(axis, "polarity") == 0 || strcmp(axis, "presence") == 0 ||
              strcmp(axis, "amount") == 0 || strcmp(axis, "order") == 0);
        for (size_t j = 0; j < i; j++)
            if (!CHECK(strcmp(conflict_cue_word(j, &axis, &sign), w) != 0))
                fprintf(stderr, "    cue %s twice\n", w);
    }
    CHECK(conflict_cue_word(n, &axis, &sign) == NULL);
    CHECK_STR(conflict_verdict_name(CONFLICT_REFINEMENT), "refinement");
    CHECK_STR(conflict_verdict_name((enum conflict_verdict)99), "unknown");
}

/* Inputs past the cap are judged by their beginning; hostile text (only
 * cues, only numbers, invalid UTF-8, long words) gives a verdict. */
static void test_bounds(void)
{
    size_t big = 4 * CONFLICT_MAX_INPUT;
    char *x = malloc(big + 1), *y = malloc(big + 1);
    struct buf reason;
    struct conflict_result r;
    buf_init(&reason, 4096);
    for (size_t i = 0; i < big; i++) {
        x[i] = "never use 12 s, "[i % 16];
        y[i] = "always use 13 s "[i % 16];
    }
    x[big] = y[big] = '\0';
    struct conflict_entry a = {NULL, NULL, x}, b = {NULL, NULL, y};
    CHECK_INT(conflict_check(&a, &b, &r, &reason), 0);
    CHECK(reason.len > 0 && reason.len < 400);
    for (size_t i = 0; i < big; i++)
        x[i] = (char)(0x80 | (i % 64)), y[i] = "\xe4\xb8\x8d\xe8\xa6\x81"[i % 6];
    CHECK_INT(conflict_check(&a, &b, &r, &reason), 0);
    memset(x, 'a', big);
    memset(y, '9', big);
    CHECK_INT(conflict_check(&a, &b, &r, &reason), 0);
    CHECK_STR(conflict_verdict_name(r.verdict), "unrelated");
    /* a cut inside a character is moved back to the character's start */
    for (size_t i = 0; i < big; i++)
        x[i] = "\xe5\x8e\x8b\xe7\xbc\xa9"[i % 6];
    memcpy(x, "a", 1);
    CHECK_INT(conflict_check(&a, &a, &r, &reason), 0);
    CHECK_STR(conflict_verdict_name(r.verdict), "duplicate");
    free(x);
    free(y);
    buf_release(&reason);
}

/* The names an LLM's answer is checked against: the four verdicts and
 * nothing else (a lying LLM falls back to the local detector). */
static void test_verdict_parse(void)
{
    static const char *const names[] = {"unrelated", "duplicate", "refinement", "contradiction"};
    enum conflict_verdict v;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK(conflict_verdict_parse(names[i], &v) == 0);
        CHECK_STR(conflict_verdict_name(v), names[i]);
    }
    CHECK(conflict_verdict_parse("Contradiction", &v) == -1);
    CHECK(conflict_verdict_parse("maybe", &v) == -1);
    CHECK(conflict_verdict_parse("", &v) == -1);
    CHECK(conflict_verdict_parse("unknown", &v) == -1);
    CHECK(conflict_verdict_parse(NULL, &v) == -1);
}

/* An LLM's answer: the JSON object, fenced or in prose too; anything else
 * (a verdict outside the four, no reason, two objects, no JSON) is -1. */
static void test_llm_answer(void)
{
    static const struct {
        const char *text, *verdict, *reason;
    } cases[] = {
        {"{\"verdict\": \"contradiction\", \"reason\": \"One always, one never.\"}",
         "contradiction", "One always, one never."},
        {"Sure:\n```json\n{\"verdict\":\"duplicate\",\"reason\":\"same\\nthing\"}\n```",
         "duplicate", "same thing"},
        {"{\"verdict\":\"refinement\",\"reason\":\"\u7ec6\u5316\"} hope it helps", "refinement",
         "\xe7\xbb\x86\xe5\x8c\x96"},
        /* a tab and a byte that starts no character (json-c keeps it) */
        {"{\"verdict\":\"duplicate\",\"reason\":\"a\\tb\xba\"}", "duplicate", "a b\xef\xbf\xbd"},
        {"{\"verdict\":\"maybe\",\"reason\":\"x\"}", NULL, NULL},
        {"{\"verdict\":\"unrelated\"}", NULL, NULL},
        {"{\"verdict\":\"unrelated\",\"reason\":\"\"}", NULL, NULL},
        {"{\"verdict\":\"unrelated\",\"reason\":3}", NULL, NULL},
        {"{\"verdict\":\"unrelated\",\"reason\":\"a\"} and {\"b\":1}", NULL, NULL},
        {"{\"handles\": [1, 2]}", NULL, NULL},
        {"<html>gateway says hi</html>", NULL, NULL},
        {"", NULL, NULL},
        {"}{", NULL, NULL},
    };
    struct buf reason;
    enum conflict_verdict v;
    buf_init(&reason, 4096);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = conflict_llm_answer_parse(cases[i].text, strlen(cases[i].text), &v, &reason);
        if (!cases[i].verdict) {
            CHECK(rc == -1);
            continue;
        }
        CHECK(rc == 0);
        if (rc == 0) {
            CHECK_STR(conflict_verdict_name(v), cases[i].verdict);
            CHECK_STR(reason.data, cases[i].reason);
        }
    }
    /* a long reason is cut at CONFLICT_LLM_REASON_MAX characters */
    {
        struct buf long_answer;
        buf_init(&long_answer, 16384);
        buf_adds(&long_answer, "{\"verdict\":\"duplicate\",\"reason\":\"");
        for (int i = 0; i < 2000; i++)
            buf_adds(&long_answer, "\xe5\x90\x8c");
        buf_adds(&long_answer, "\"}");
        CHECK(conflict_llm_answer_parse(long_answer.data, long_answer.len, &v, &reason) == 0);
        CHECK(utf8_length(reason.data, reason.len) == CONFLICT_LLM_REASON_MAX);
        buf_release(&long_answer);
    }
    buf_release(&reason);
}

int main(void)
{
    test_verdict_parse();
    test_llm_answer();
    test_table();
    test_examples();
    test_fields();
    test_bounds();
    return test_summary();
}
