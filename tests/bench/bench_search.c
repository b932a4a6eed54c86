/* bench_search: in-process latency of KnowHub's two searches.
 *
 * For each N (default 1000 10000 100000) it generates N mixed English /
 * Chinese entries (titles, tags, paths, bodies of 80..1500 characters drawn
 * from Zipf-weighted vocabularies, so some words are common and some rare;
 * rules and experiences, manual and agent sources, a few always-apply
 * rules) into a temporary SQLite file the way the file view writes them
 * (document_prepare + document_fill + knowledge_create, in transactions of
 * 1000), then runs a fixed set of 1-4 word queries, English and Chinese,
 * round after round, and prints the median and p99 latency in microseconds
 * of search_files (max_results 10) and search_entries (n 10, i.e. 2 * top_k
 * for the default top_k 5), plus the time to build the corpus. Latencies are
 * given as wall clock and as this thread's CPU time: on a shared machine the
 * wall-clock p99 mostly measures the other processes.
 *
 * With --vectors DIM every entry also gets a random unit vector of DIM
 * floats (as the embeddings job stores them) and it measures search by
 * meaning in-process: the vector index's load time and memory, the nearest
 * 20 by the exact scan and by the int8 prescan (with the prescan's recall
 * of the exact top 10), and the entry view's whole search (top_k 5) in
 * lexical and hybrid mode through svc_search_entries, each query's vector
 * put in the query cache first, as a server would have answered it.
 *
 *   bench_search [--rounds R] [--per-query] [--keep DIR] [--vectors DIM]
 *                [--ageing] [--database URL] [N ...]
 *
 * The first search loads the space's index in memory (service/lindex.c):
 * its size and load time are printed, and the same queries are measured
 * again with no index in memory (the full-text passes alone).
 *
 * Before measuring, SQLite's full-text segments are merged into one, as the
 * server's job thread does once writes pause (store_fts_compact), and the
 * time it took is printed.
 *
 * With --ageing it measures the entry view's whole search (top_k 5,
 * lexical, svc_search_entries) with evidence ageing off (before and after
 * a quarter of the entries get 3 helpful verdicts, an eighth 1 harmful
 * too) and on (half-life 30 days), and the policy read alone: what ageing
 * costs (docs/conflicts.md "Evidence that ages").
 *
 * --per-query prints each query's median and hit count; --keep DIR keeps the
 * database as DIR/knowhub.db (space "default") instead of deleting it, and
 * when that database already exists it is searched as it is (no build).
 * --database URL builds into and searches that empty PostgreSQL database
 * instead (one N): the same corpus and queries, so the two backends compare.
 * The generator is seeded, so every run builds the same corpus. */
#include "base/buf.h"
#include "domain/document.h"
#include "domain/knowledge.h"
#include "base/config.h"
#include "domain/vector.h"
#include "service/embed.h"
#include "service/entries.h"
#include "service/evidence.h"
#include "service/knowledge.h"
#include "service/lindex.h"
#include "service/search.h"
#include "service/vindex.h"
#include "store/store.h"
#include "base/util.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_rng.h"

#define SPACE "default"

static size_t uniform(size_t n)
{
    return (size_t)(rng() % n);
}

/* An index in [0, n) with Zipf-like weights (index 0 most frequent). */
static size_t zipf(size_t n)
{
    /* u^2.2 piles up near 0: a cheap heavy head with a long tail. */
    double u = (double)(rng() >> 11) / (double)(1ull << 53);
    double x = u * u;
    x = x * (0.5 + 0.5 * u);
    size_t i = (size_t)(x * (double)n);
    return i < n ? i : n - 1;
}

/* ---- vocabularies ---- */

static const char *const en_words[] = {
    "sales",       "revenue",     "customer",     "data",       "report",       "analysis",
    "monthly",     "quarterly",   "region",       "forecast",   "inventory",    "turnover",
    "retention",   "churn",       "pricing",      "margin",     "profit",       "cost",
    "growth",      "trend",       "cohort",       "funnel",     "conversion",   "campaign",
    "marketing",   "channel",     "order",        "product",    "category",     "segment",
    "dashboard",   "chart",       "metric",       "kpi",        "roi",          "budget",
    "expense",     "invoice",     "payment",      "refund",     "discount",     "promotion",
    "store",       "warehouse",   "supplier",     "shipment",   "delivery",     "logistics",
    "demand",      "supply",      "stock",        "average",    "median",       "variance",
    "outlier",     "missing",     "values",       "cleaning",   "duplicate",    "normalize",
    "pivot",       "join",        "merge",        "filter",     "aggregate",    "group",
    "window",      "rolling",     "seasonal",     "weekly",     "daily",        "annual",
    "fiscal",      "year",        "quarter",      "month",      "week",         "compare",
    "baseline",    "target",      "goal",         "plan",       "strategy",     "method",
    "calculation", "formula",     "rule",         "policy",     "standard",     "format",
    "date",        "currency",    "exchange",     "rate",       "tax",          "vat",
    "gross",       "net",         "operating",    "ebitda",     "cash",         "flow",
    "balance",     "ledger",      "account",      "audit",      "compliance",   "risk",
    "fraud",       "anomaly",     "detection",    "model",      "regression",   "classification",
    "cluster",     "feature",     "training",     "validation", "accuracy",     "precision",
    "recall",      "sample",      "survey",       "feedback",   "satisfaction", "nps",
    "support",     "ticket",      "response",     "latency",    "session",      "visit",
    "pageview",    "bounce",      "click",        "impression", "attribution",  "lifetime",
    "value",       "acquisition", "subscription", "renewal",    "upgrade",      "downgrade",
    "plan_tier",   "sales_data",  "orders_2024",  "pandas",     "sql",          "query",
    "table",       "column",      "schema",       "index",      "partition",    "export",
    "import",      "pipeline",    "schedule",     "refresh",    "cache",        "snapshot",
    "history",     "version",     "owner",        "team",       "manager",      "employee",
    "headcount",   "payroll",     "hiring",       "attrition",  "office",       "location",
    "country",     "city",        "province",     "market",     "share",        "competitor",
    "benchmark",   "quokka",      "wombat",       "platypus",   "echidna",
};
#define EN_N (sizeof en_words / sizeof *en_words)

static const char *const zh_words[] = {
    "销售", "收入",   "客户",   "数据",   "报表",   "分析",     "月度",     "季度",   "区域",
    "预测", "库存",   "周转",   "留存",   "流失",   "定价",     "毛利",     "利润",   "成本",
    "增长", "趋势",   "同期群", "漏斗",   "转化",   "活动",     "营销",     "渠道",   "订单",
    "产品", "品类",   "细分",   "仪表盘", "图表",   "指标",     "投资回报", "预算",   "费用",
    "发票", "支付",   "退款",   "折扣",   "促销",   "门店",     "仓库",     "供应商", "发货",
    "配送", "物流",   "需求",   "供给",   "平均值", "中位数",   "方差",     "异常值", "缺失值",
    "清洗", "重复",   "标准化", "透视",   "关联",   "合并",     "筛选",     "汇总",   "分组",
    "滚动", "季节性", "每周",   "每日",   "年度",   "财年",     "同比",     "环比",   "基线",
    "目标", "计划",   "策略",   "方法",   "计算",   "公式",     "规则",     "政策",   "规范",
    "格式", "日期",   "货币",   "汇率",   "税率",   "现金流",   "资产",     "负债",   "审计",
    "合规", "风险",   "欺诈",   "检测",   "模型",   "回归",     "分类",     "聚类",   "特征",
    "训练", "验证",   "准确率", "样本",   "问卷",   "反馈",     "满意度",   "工单",   "响应",
    "会话", "访问",   "点击",   "曝光",   "归因",   "生命周期", "价值",     "获客",   "订阅",
    "续费", "升级",   "降级",   "查询",   "字段",   "分区",     "导出",     "导入",   "管道",
    "调度", "刷新",   "缓存",   "快照",   "历史",   "版本",     "团队",     "员工",   "招聘",
    "离职", "城市",   "省份",   "市场",   "份额",   "竞争",     "对标",     "经营",   "财务",
    "运营", "绩效",   "考核",   "周期",
};
#define ZH_N (sizeof zh_words / sizeof *zh_words)

static const char *const en_fillers[] = {"the", "of",  "for", "and",  "by",   "with",
                                         "in",  "per", "to",  "from", "when", "how"};
static const char *const zh_fillers[] = {"的", "和", "在", "是", "对", "按", "与", "了", "把"};
static const char *const en_title_heads[] = {"How to",        "Guide to",  "Notes on",
                                             "Checklist for", "Rules for", "Lessons from",
                                             "Pitfalls in",   ""};
static const char *const zh_title_tails[] = {"的计算方法", "分析指南", "注意事项", "规范",
                                             "经验总结",   "最佳实践", "常见问题", ""};
static const char *const tags_pool[] = {
    "finance",     "sales",      "marketing",   "cleaning",  "pandas",   "sql",    "forecast",
    "kpi",         "sales_data", "orders_2024", "inventory", "customer", "report", "dashboard",
    "finance-ops", "财务",       "销售",        "库存",      "客户",     "报表",   "清洗",
    "指标",        "运营",       "风控",        "数据质量",
};
#define TAGS_N (sizeof tags_pool / sizeof *tags_pool)
static const char *const folders[] = {"finance", "sales", "cleaning", "reporting",
                                      "ops",     "财务",  "销售",     "运营"};

/* ---- documents ---- */

static void en_sentence(struct buf *b, size_t words)
{
    for (size_t i = 0; i < words; i++) {
        const char *w = (i % 4 == 2) ? en_fillers[uniform(sizeof en_fillers / sizeof *en_fillers)]
                                     : en_words[zipf(EN_N)];
        if (i == 0) {
            char first[64];
            snprintf(first, sizeof first, "%s", w);
            if (first[0] >= 'a' && first[0] <= 'z')
                first[0] = (char)(first[0] - 32);
            buf_adds(b, first);
        } else {
            buf_addch(b, ' ');
            buf_adds(b, w);
        }
    }
    buf_adds(b, ". ");
}

static void zh_sentence(struct buf *b, size_t words)
{
    for (size_t i = 0; i < words; i++) {
        buf_adds(b, zh_words[zipf(ZH_N)]);
        if (i % 3 == 1)
            buf_adds(b, zh_fillers[uniform(sizeof zh_fillers / sizeof *zh_fillers)]);
    }
    if (uniform(4) == 0) {
        buf_adds(b, en_words[zipf(EN_N)]); /* mixed: 按ROI计算 */
    }
    buf_adds(b, "。");
}

enum lang { EN, ZH, MIXED };

struct gen {
    struct buf title, tags, path, body, doc, prepared;
};

/* One document of entry number i. Returns the category. */
static const char *generate(struct gen *g, size_t i)
{
    enum lang lang = uniform(100) < 50 ? EN : (uniform(100) < 70 ? ZH : MIXED);
    int rule = uniform(100) < 15;
    const char *category = rule ? "rules" : "experiences";
    size_t ntags = 1 + uniform(3), body_chars;

    buf_reset(&g->title);
    buf_reset(&g->tags);
    buf_reset(&g->path);
    buf_reset(&g->body);
    buf_reset(&g->doc);

    /* title */
    if (lang == EN) {
        const char *head = en_title_heads[uniform(sizeof en_title_heads / sizeof *en_title_heads)];
        size_t n = 2 + uniform(3);
        if (*head)
            buf_addf(&g->title, "%s ", head);
        for (size_t w = 0; w < n; w++)
            buf_addf(&g->title, "%s%s", w ? " " : "", en_words[zipf(EN_N)]);
    } else {
        size_t n = 1 + uniform(3);
        if (lang == MIXED)
            buf_addf(&g->title, "%s ", en_words[zipf(EN_N)]);
        for (size_t w = 0; w < n; w++)
            buf_adds(&g->title, zh_words[zipf(ZH_N)]);
        buf_adds(&g->title,
                 zh_title_tails[uniform(sizeof zh_title_tails / sizeof *zh_title_tails)]);
    }
    /* tags: a flow list; always plain words */
    buf_addch(&g->tags, '[');
    for (size_t t = 0; t < ntags; t++)
        buf_addf(&g->tags, "%s%s", t ? ", " : "", tags_pool[zipf(TAGS_N)]);
    buf_addch(&g->tags, ']');
    /* path: rules are flat; experiences in a folder; unique by the number */
    if (!rule)
        buf_addf(&g->path, "%s/", folders[uniform(sizeof folders / sizeof *folders)]);
    if (lang == EN)
        buf_addf(&g->path, "%s-%s-%zu.md", en_words[zipf(EN_N)], en_words[zipf(EN_N)], i);
    else
        buf_addf(&g->path, "%s%s-%zu.md", zh_words[zipf(ZH_N)], zh_words[zipf(ZH_N)], i);
    /* body: 80..1500 characters (rules stay under their 350) */
    body_chars = rule ? 80 + uniform(250) : 80 + uniform(1400);
    while (utf8_length(g->body.data, g->body.len) < body_chars) {
        if (lang == EN || (lang == MIXED && uniform(2)))
            en_sentence(&g->body, 6 + uniform(10));
        else
            zh_sentence(&g->body, 4 + uniform(8));
    }
    {
        size_t cut = utf8_prefix(g->body.data, g->body.len, rule ? 340 : 1900);
        g->body.len = cut;
        g->body.data[cut] = '\0';
    }

    buf_addf(&g->doc, "---\ntitle: \"%s\"\ntags: %s\n", g->title.data, g->tags.data);
    if (rule) {
        buf_addf(&g->doc, "description: \"%s\"\nalwaysApply: %s\n", g->title.data,
                 uniform(100) < 10 ? "true" : "false");
    }
    buf_addf(&g->doc, "created: 2026-0%zu-1%zu\nsource: %s\n---\n\n%s\n", 1 + uniform(9),
             uniform(10), uniform(100) < 60 ? "manual" : "agent_summarized", g->body.data);
    return category;
}

static double clock_us(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double now_us(void)
{
    return clock_us(CLOCK_MONOTONIC);
}

/* CPU time of this thread: what a query costs when the machine is shared. */
static double cpu_us(void)
{
    return clock_us(CLOCK_THREAD_CPUTIME_ID);
}

static int build(struct store *st, size_t n)
{
    struct gen g;
    struct buf *bufs[] = {&g.title, &g.tags, &g.path, &g.body, &g.doc, &g.prepared};
    struct error err;
    int rc = STORE_OK;
    error_init(&err);
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        buf_init(bufs[i], 1 << 22);
    for (size_t i = 0; i < n && rc == STORE_OK; i++) {
        struct knowledge k;
        const char *category;
        if (i % 1000 == 0 && (rc = store_begin(st)))
            break;
        category = generate(&g, i);
        if (document_prepare(category, g.path.data, g.doc.data, g.doc.len, &g.prepared, &err)) {
            fprintf(stderr, "bench_search: document %zu refused: %s\n", i, err.message.data);
            rc = STORE_ERROR;
            break;
        }
        knowledge_init(&k);
        k.space = xstrdup(SPACE);
        k.category = xstrdup(category);
        k.path = xstrdup(g.path.data);
        k.score = 1 + (int)uniform(5);
        document_fill(&k, category, g.path.data, g.prepared.data, g.prepared.len);
        rc = knowledge_create(st, &k, "bench");
        if (rc)
            fprintf(stderr, "bench_search: create %zu (%s): status %d %s\n", i, g.path.data, rc,
                    store_errmsg(st));
        knowledge_release(&k);
        if ((i % 1000 == 999 || i + 1 == n) && rc == STORE_OK)
            rc = store_commit(st);
    }
    if (rc)
        store_rollback(st);
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        buf_release(bufs[i]);
    error_release(&err);
    return rc;
}

/* ---- measuring ---- */

static const char *const queries[] = {
    /* English, 1-4 words */
    "sales",
    "ROI",
    "inventory turnover",
    "customer retention",
    "handle missing values",
    "quarterly revenue forecast region",
    "dashboard",
    "pricing strategy",
    "quokka",
    "fraud detection model",
    "how to compute margin",
    "zzz nonexistent",
    /* Chinese and mixed */
    "库存",
    "库存周转分析",
    "帮我分析ROI",
    "客户留存",
    "月度销售报表",
    "渠道 利润",
    "缺失值 清洗",
    "同比 增长 趋势 分析",
};
#define NQ (sizeof queries / sizeof *queries)

static size_t hit_count;
static void count_hit(const struct search_hit *h, void *ctx)
{
    (void)h;
    (void)ctx;
    hit_count++;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

struct figures {
    double median, p99, max;    /* wall clock */
    double cpu_median, cpu_p99; /* thread CPU time */
};

/* One search of query q; a store status. */
typedef int (*search_op)(struct store *st, const char *q);

static int op_files(struct store *st, const char *q)
{
    return search_files(st, SPACE, q, 0, 10, NULL, NULL, count_hit, NULL);
}

static int op_entries(struct store *st, const char *q)
{
    struct knowledge_filter filter = {0};
    return search_entries(st, SPACE, q, &filter, 10, NULL, count_hit, NULL);
}

/* Run the query set `rounds` times through one search; per-query CPU medians into per_q. */
static struct figures measure(struct store *st, search_op op, int rounds, double *per_q,
                              size_t *per_q_hits)
{
    size_t total = (size_t)rounds * NQ, k = 0;
    double *all = xmalloc(total * sizeof *all), *one = xmalloc((size_t)rounds * sizeof *one);
    double *cpu = xmalloc(total * sizeof *cpu);
    struct figures f;
    for (size_t q = 0; q < NQ; q++) {
        for (int r = 0; r < rounds; r++) {
            double c0 = cpu_us(), t0 = now_us(), t1;
            int rc;
            hit_count = 0;
            rc = op(st, queries[q]);
            t1 = now_us();
            cpu[k] = one[r] = cpu_us() - c0;
            if (rc) {
                fprintf(stderr, "bench_search: query \"%s\" failed: %d %s\n", queries[q], rc,
                        store_errmsg(st));
                exit(1);
            }
            all[k++] = t1 - t0;
        }
        qsort(one, (size_t)rounds, sizeof *one, cmp_double);
        per_q[q] = pct(one, (size_t)rounds, 0.5);
        per_q_hits[q] = hit_count;
    }
    qsort(all, total, sizeof *all, cmp_double);
    f.median = pct(all, total, 0.5);
    f.p99 = pct(all, total, 0.99);
    f.max = all[total - 1];
    qsort(cpu, total, sizeof *cpu, cmp_double);
    f.cpu_median = pct(cpu, total, 0.5);
    f.cpu_p99 = pct(cpu, total, 0.99);
    free(cpu);
    free(all);
    free(one);
    return f;
}

/* ---- search by meaning (--vectors) ---- */

static struct config vcfg;
static int vdim;
static float *qvec; /* NQ query vectors */
static struct vindex_hit *last_hits;
static size_t last_n;

static void unit_random(float *v, int dim)
{
    for (int i = 0; i < dim; i++)
        v[i] = (float)((double)(rng() >> 11) / (double)(1ull << 53)) - 0.5f;
    vec_normalise(v, dim);
}

struct vfill {
    struct embed_todo *t;
    size_t n;
};

static void vfill_row(const struct embed_todo *t, void *ctx)
{
    struct vfill *f = ctx;
    f->t = xrealloc(f->t, (f->n + 1) * sizeof *f->t);
    f->t[f->n] = *t;
    f->t[f->n].id = f->t[f->n].space = f->t[f->n].status = NULL; /* not used past the callback */
    f->n++;
}

/* A random unit vector for every queued entry, 1000 per transaction. */
static int fill_vectors(struct store *st, int dim)
{
    float *v = xmalloc((size_t)dim * sizeof *v);
    int rc = STORE_OK;
    for (;;) {
        struct vfill f = {0};
        if ((rc = store_embed_take(st, SPACE, 1000, 1, vfill_row, &f)) || !f.n) {
            free(f.t);
            break;
        }
        if ((rc = store_begin(st)) == STORE_OK) {
            for (size_t i = 0; i < f.n && rc == STORE_OK; i++) {
                unit_random(v, dim);
                rc = store_vector_put(st, f.t[i].seq, SPACE, vcfg.embed_model, f.t[i].version,
                                      "bench", v, dim);
            }
            rc = rc == STORE_OK ? store_commit(st) : (store_rollback(st), rc);
        }
        free(f.t);
        if (rc)
            break;
    }
    free(v);
    return rc;
}

static size_t query_index(const char *q)
{
    for (size_t i = 0; i < NQ; i++)
        if (queries[i] == q)
            return i;
    return 0;
}

static int op_vector(struct store *st, const char *q)
{
    int rc;
    vindex_hits_free(last_hits, last_n);
    rc = vindex_search(st, SPACE, vcfg.embed_model, qvec + query_index(q) * (size_t)vdim, vdim, 20,
                       &last_hits, &last_n, NULL, 0, NULL);
    hit_count = last_n;
    return rc;
}

static const char *entries_mode;
static int op_svc_entries(struct store *st, const char *q)
{
    struct svc_ctx c = {
        .space = SPACE, .actor = "bench", .role = ROLE_READER, .st = st, .cfg = &vcfg};
    struct entry_query eq = {.q = q, .top_k = 5, .min_score = 3, .mode = entries_mode};
    struct json_object *data = NULL, *results;
    struct error err;
    int rc;
    error_init(&err);
    rc = svc_search_entries(&c, &eq, &data, &err);
    if (rc == 0 && json_object_object_get_ex(data, "results", &results))
        hit_count = json_object_array_length(results);
    if (rc == 0 && json_object_object_get_ex(data, "warnings", &results)) {
        fprintf(stderr, "bench_search: warning: %s\n", json_object_to_json_string(results));
        rc = STORE_ERROR;
    }
    if (rc)
        fprintf(stderr, "bench_search: %s\n", err.message.data);
    json_object_put(data);
    error_release(&err);
    return rc ? STORE_ERROR : STORE_OK;
}

static long rss_kb(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void print_figures(const char *name, const struct figures *f)
{
    printf("  %-26s wall: median %8.1f us  p99 %8.1f us  max %8.1f us | cpu: median %8.1f us"
           "  p99 %8.1f us\n",
           name, f->median, f->p99, f->max, f->cpu_median, f->cpu_p99);
}

/* The --vectors part of a run over st (n entries). */
static int run_vectors(struct store *st, int rounds)
{
    double t0, qv[NQ];
    size_t hv[NQ], held, bytes, agree = 0;
    long rss0, rss1;
    struct figures exact, pre, lex, hyb;
    int rc;
    vcfg.embed_url = "http://127.0.0.1:9/v1"; /* never called: every query vector is cached */
    vcfg.embed_model = "bench-random";
    vcfg.hybrid_alpha = 0.3;
    vcfg.threads = 1;
    t0 = now_us();
    if ((rc = fill_vectors(st, vdim)))
        return rc;
    printf("  vectors: %d dimensions, stored in %.2f s\n", vdim, (now_us() - t0) / 1e6);
    qvec = xmalloc(NQ * (size_t)vdim * sizeof *qvec);
    for (size_t i = 0; i < NQ; i++) {
        unit_random(qvec + i * (size_t)vdim, vdim);
        embed_query_remember(&vcfg, SPACE, queries[i], qvec + i * (size_t)vdim, vdim);
    }
    rss0 = rss_kb();
    t0 = now_us();
    if ((rc = vindex_refresh(st, SPACE, vcfg.embed_model)))
        return rc;
    rss1 = rss_kb();
    vindex_usage(NULL, &held, &bytes);
    printf("  index: %zu vectors loaded in %.2f s; %.1f MB held (%.0f bytes a vector), "
           "RSS +%.1f MB\n",
           held, (now_us() - t0) / 1e6, (double)bytes / 1e6,
           held ? (double)bytes / (double)held : 0.0, (double)(rss1 - rss0) / 1024.0);
    /* The prescan's recall of the exact top 10. */
    for (size_t q = 0; q < NQ; q++) {
        struct vindex_hit *e, *p;
        size_t ne, np;
        float *v = qvec + q * (size_t)vdim;
        vindex_set_prescan(0);
        rc = vindex_search(st, SPACE, vcfg.embed_model, v, vdim, 10, &e, &ne, NULL, 0, NULL);
        vindex_set_prescan(1);
        rc |= vindex_search(st, SPACE, vcfg.embed_model, v, vdim, 10, &p, &np, NULL, 0, NULL);
        for (size_t i = 0; i < ne; i++)
            for (size_t j = 0; j < np; j++)
                agree += strcmp(e[i].id, p[j].id) == 0;
        vindex_hits_free(e, ne);
        vindex_hits_free(p, np);
    }
    vindex_set_prescan(0);
    exact = measure(st, op_vector, rounds, qv, hv);
    vindex_set_prescan(1);
    pre = measure(st, op_vector, rounds, qv, hv);
    vindex_set_prescan(-1);
    entries_mode = "lexical";
    measure(st, op_svc_entries, 2, qv, hv);
    lex = measure(st, op_svc_entries, rounds, qv, hv);
    entries_mode = "hybrid";
    measure(st, op_svc_entries, 2, qv, hv);
    hyb = measure(st, op_svc_entries, rounds, qv, hv);
    vindex_hits_free(last_hits, last_n);
    last_hits = NULL;
    last_n = 0;
    print_figures("nearest 20, exact scan", &exact);
    print_figures("nearest 20, int8 prescan", &pre);
    printf("  %-26s recall of the exact top 10: %.3f\n", "int8 prescan",
           (double)agree / (double)(NQ * 10));
    print_figures("entries top_k 5, lexical", &lex);
    print_figures("entries top_k 5, hybrid", &hyb);
    printf("  hybrid / lexical (cpu medians): %.2f; target for hybrid at 100000 x 384: median"
           " <= 5000 us, p99 <= 20000 us: wall clock %s\n",
           hyb.cpu_median / lex.cpu_median,
           hyb.median <= 5000 && hyb.p99 <= 20000 ? "met" : "NOT met");
    free(qvec);
    return rc;
}

/* ---- evidence ageing (--ageing) ---- */

static int ageing;

/* The policy read that every entry search makes. */
static int op_policy(struct store *st, const char *q)
{
    struct svc_ctx c = {.space = SPACE, .actor = "bench", .role = ROLE_READER, .st = st};
    long days;
    (void)q;
    hit_count = 1;
    return evidence_half_life(&c, &days);
}

struct id_list {
    char **ids;
    size_t n;
};

static int collect_id(const struct knowledge *k, void *ctx)
{
    struct id_list *l = ctx;
    l->ids[l->n++] = xstrdup(k->id);
    return 0;
}

/* 3 helpful verdicts on every 4th entry, 1 harmful too on every 8th, in
 * transactions of 1000 entries. */
static int add_verdicts(struct store *st, size_t n)
{
    struct knowledge_filter all = {.limit = (long)n};
    struct id_list l = {xcalloc(n + 1, sizeof(char *)), 0};
    long total = 0;
    char case_id[32];
    int rc = store_knowledge_list(st, SPACE, &all, collect_id, &l, &total);
    for (size_t i = 0; rc == STORE_OK && i < l.n; i += 4) {
        int added;
        if (i % 4000 == 0 && (rc = store_begin(st)))
            break;
        for (int v = 0; rc == STORE_OK && v < (i % 8 == 0 ? 4 : 3); v++) {
            struct knowledge_case kc = {.kind = v < 3 ? "helpful" : "harmful", .case_id = case_id};
            snprintf(case_id, sizeof case_id, "bench-%d", v);
            rc = store_knowledge_add_case(st, SPACE, l.ids[i], &kc, "bench", &added);
        }
        if (rc == STORE_OK && (i % 4000 == 3996 || i + 4 >= l.n))
            rc = store_commit(st);
    }
    for (size_t i = 0; i < l.n; i++)
        free(l.ids[i]);
    free(l.ids);
    return rc;
}

/* The --ageing part of a run over st (n entries). */
static int run_ageing(struct store *st, size_t n, int rounds)
{
    struct figures off, off_v, on, pol;
    double qv[NQ], t0;
    size_t hv[NQ];
    int rc;
    entries_mode = "lexical";
    measure(st, op_svc_entries, 2, qv, hv);
    off = measure(st, op_svc_entries, rounds, qv, hv);
    pol = measure(st, op_policy, rounds, qv, hv);
    t0 = now_us();
    if ((rc = add_verdicts(st, n)))
        return rc;
    printf("  verdicts added in %.2f s\n", (now_us() - t0) / 1e6);
    measure(st, op_svc_entries, 2, qv, hv);
    off_v = measure(st, op_svc_entries, rounds, qv, hv);
    if ((rc = store_evidence_policy_set(st, SPACE, 30, "bench")))
        return rc;
    measure(st, op_svc_entries, 2, qv, hv);
    on = measure(st, op_svc_entries, rounds, qv, hv);
    print_figures("evidence policy read", &pol);
    print_figures("entries top_k 5, off", &off);
    print_figures("  off, with verdicts", &off_v);
    print_figures("  on, half-life 30 d", &on);
    printf("  on / off (cpu medians): %.2f\n", on.cpu_median / off_v.cpu_median);
    return 0;
}

/* --database URL: measure on that (empty) PostgreSQL database instead of a
 * new SQLite file; the wall clock then includes the server's work, the CPU
 * time only this process's. */
static const char *database_url;

static int count_none(const struct knowledge *k, void *ctx)
{
    (void)k;
    (void)ctx;
    return 0;
}

static int run(size_t n, int rounds, int per_query, const char *keep)
{
    char dir[] = "/tmp/knowhub-bench-search-XXXXXX", path[600];
    struct store *st = NULL;
    double t0, built, merged;
    struct figures ff, fe;
    double loaded;
    double qf[NQ], qe[NQ];
    size_t hf[NQ], he[NQ];
    struct stat sb;
    int reuse = 0;

    if (database_url) {
        snprintf(path, sizeof path, "%s", database_url);
    } else if (keep) {
        mkdir(keep, 0755);
        snprintf(path, sizeof path, "%s/knowhub.db", keep);
        reuse = stat(path, &sb) == 0;
    } else {
        if (!mkdtemp(dir)) {
            perror("bench_search: mkdtemp");
            return 1;
        }
        snprintf(path, sizeof path, "%s/knowhub.db", dir);
    }
    if (store_open(path, &st)) {
        fprintf(stderr, "bench_search: cannot open %s\n", database_url ? "--database" : path);
        return 1;
    }
    if (store_space_ensure(st, SPACE)) {
        fprintf(stderr, "bench_search: %s\n", store_errmsg(st));
        return 1;
    }
    if (database_url) {
        /* a database that already holds the corpus is searched as it is */
        struct knowledge_filter all = {.limit = 1};
        long total = 0;
        reuse = store_knowledge_list(st, SPACE, &all, count_none, NULL, &total) == STORE_OK &&
                total > 0;
    }
    rng_state = 0x9E3779B97F4A7C15ull ^ (unsigned long long)n;
    t0 = now_us();
    if (!reuse && build(st, n)) {
        store_close(st);
        return 1;
    }
    built = now_us() - t0;
    /* what a server's job thread does once the writes stop: merge the
     * full-text segments (SQLite; fts_compact.c), timed apart */
    t0 = now_us();
    for (int quiet = 0; quiet < 100 && (store_fts_segments(st, "knowledge_fts") > 1 ||
                                        store_fts_segments(st, "knowledge_head") > 1);)
        if (store_fts_compact(st) != 1)
            quiet++, usleep(50 * 1000);
    merged = now_us() - t0;
    if (database_url)
        memset(&sb, 0, sizeof sb); /* the size is the server's */
    else
        stat(path, &sb);

    /* the first search loads the space's index in memory (service/lindex.c) */
    t0 = now_us();
    (void)op_files(st, queries[0]);
    loaded = now_us() - t0;
    /* warm the page cache and the statement cache */
    {
        double w1[NQ];
        size_t w2[NQ];
        measure(st, op_files, 2, w1, w2);
        measure(st, op_entries, 2, w1, w2);
    }
    ff = measure(st, op_files, rounds, qf, hf);
    fe = measure(st, op_entries, rounds, qe, he);

    if (reuse)
        printf("N=?       reused %s (database %.1f MB)\n", path, (double)sb.st_size / 1e6);
    else
        printf("N=%-7zu built in %7.2f s (%6.0f entries/s, database %.1f MB)\n", n, built / 1e6,
               (double)n / (built / 1e6), (double)sb.st_size / 1e6);
    printf("  full-text segments merged into one in %.2f s\n", merged / 1e6);
    printf("  %-22s wall: median %8.1f us  p99 %8.1f us  max %8.1f us | cpu: median %8.1f us"
           "  p99 %8.1f us\n",
           "search_files (max 10)", ff.median, ff.p99, ff.max, ff.cpu_median, ff.cpu_p99);
    printf("  %-22s wall: median %8.1f us  p99 %8.1f us  max %8.1f us | cpu: median %8.1f us"
           "  p99 %8.1f us\n",
           "search_entries (n 10)", fe.median, fe.p99, fe.max, fe.cpu_median, fe.cpu_p99);
    {
        size_t held_spaces, held_entries, held_bytes;
        struct figures pf, pe;
        size_t held_budget = lindex_budget();
        lindex_usage(&held_spaces, &held_entries, &held_bytes);
        printf("  index in memory: %zu entries, %.1f MB, loaded by the first search in %.2f s\n",
               held_entries, (double)held_bytes / 1e6, loaded / 1e6);
        /* the same queries by the full-text passes alone, for comparison */
        lindex_configure(0);
        pf = measure(st, op_files, rounds, qf, hf);
        pe = measure(st, op_entries, rounds, qe, he);
        lindex_configure(held_budget);
        printf("  %-22s wall: median %8.1f us  p99 %8.1f us  (the passes, no index in memory)\n",
               "search_files (max 10)", pf.median, pf.p99);
        printf("  %-22s wall: median %8.1f us  p99 %8.1f us  (the passes, no index in memory)\n",
               "search_entries (n 10)", pe.median, pe.p99);
    }
    if (n >= 100000 && !reuse) {
        int wall = ff.median <= 1000 && ff.p99 <= 5000 && fe.median <= 1000 && fe.p99 <= 5000;
        int cpu = ff.cpu_median <= 1000 && ff.cpu_p99 <= 5000 && fe.cpu_median <= 1000 &&
                  fe.cpu_p99 <= 5000;
        printf("  target (median <= 1000 us, p99 <= 5000 us): wall clock %s, cpu time %s\n",
               wall ? "met" : "NOT met", cpu ? "met" : "NOT met");
    }
    if (per_query) {
        printf("    %-36s %12s %5s %12s %5s\n", "query (cpu medians)", "files us", "hits",
               "entries us", "hits");
        for (size_t q = 0; q < NQ; q++)
            printf("    %-36s %12.1f %5zu %12.1f %5zu\n", queries[q], qf[q], hf[q], qe[q], he[q]);
    }
    if (ageing && run_ageing(st, n, rounds)) {
        fprintf(stderr, "bench_search: the ageing measurement failed: %s\n", store_errmsg(st));
        store_close(st);
        return 1;
    }
    if (vdim > 0 && run_vectors(st, rounds)) {
        fprintf(stderr, "bench_search: the vector measurement failed: %s\n", store_errmsg(st));
        store_close(st);
        return 1;
    }
    fflush(stdout);
    store_close(st);
    if (!keep && !database_url) {
        static const char *const suffixes[] = {"", "-wal", "-shm"};
        for (size_t i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/knowhub.db%s", dir, suffixes[i]);
            unlink(path);
        }
        rmdir(dir);
    }
    return 0;
}

int main(int argc, char **argv)
{
    size_t sizes[16], nsizes = 0;
    int rounds = 50, per_query = 0;
    const char *keep = NULL;
    store_global_init();
    if (sodium_init() < 0)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
            if (rounds < 1)
                rounds = 1;
        } else if (strcmp(argv[i], "--per-query") == 0) {
            per_query = 1;
        } else if (strcmp(argv[i], "--ageing") == 0) {
            ageing = 1;
        } else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc) {
            keep = argv[++i];
        } else if (strcmp(argv[i], "--database") == 0 && i + 1 < argc) {
            database_url = argv[++i];
        } else if (strcmp(argv[i], "--vectors") == 0 && i + 1 < argc) {
            vdim = atoi(argv[++i]);
            if (vdim < 1 || vdim > 8192)
                vdim = 384;
        } else if (argv[i][0] >= '1' && argv[i][0] <= '9' && nsizes < 16) {
            sizes[nsizes++] = (size_t)strtoul(argv[i], NULL, 10);
        } else {
            fprintf(stderr,
                    "usage: bench_search [--rounds R] [--per-query] [--keep DIR] [--vectors DIM]"
                    " [--ageing] [--database URL] [N ...]\n");
            return 2;
        }
    }
    if ((keep || database_url) && nsizes != 1) {
        fprintf(stderr, "bench_search: --keep and --database need exactly one N\n");
        return 2;
    }
    if (!nsizes) {
        sizes[0] = 1000;
        sizes[1] = 10000;
        sizes[2] = 100000;
        nsizes = 3;
    }
    printf("bench_search: %zu queries (1-4 words, English and Chinese), %d rounds each;"
           " latencies in microseconds (wall clock, and this thread's CPU time)\n",
           NQ, rounds);
    printf("targets: at N=100000 median <= 1000 us and p99 <= 5000 us\n");
    for (size_t i = 0; i < nsizes; i++)
        if (run(sizes[i], rounds, per_query, keep))
            return 1;
    return 0;
}
