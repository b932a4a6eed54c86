/* distill: an analysis becomes a reusable experience. */
#include "service/distill.h"
#include "base/config.h"
#include "domain/document.h"
#include "domain/frontmatter.h"
#include "base/error.h"
#include "service/ctx.h"
#include "service/llmcall.h"
#include "base/jfield.h"
#include "domain/knowledge_limits.h"
#include "domain/paths.h"
#include "llm/llm.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- reading the context ---- */

/* The chain's steps and the attempts a local distillation lists, at most. */
#define DISTILL_CHAIN_STEPS 20
#define DISTILL_ATTEMPTS 20

static struct json_object *field(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;
    if (o && json_object_object_get_ex(o, key, &v))
        return v;
    return NULL;
}

/* Append at most max_chars characters of s, on one line when flat. */
static void add_cut(struct buf *out, const char *s, size_t max_chars, int flat)
{
    size_t n = utf8_prefix(s, strlen(s), max_chars);
    for (size_t i = 0; i < n; i++)
        buf_addch(out, flat && (s[i] == '\n' || s[i] == '\r') ? ' ' : s[i]);
    if (n < strlen(s))
        buf_adds(out, "…");
}

/* A scalar or list as short text. */
static void add_value(struct buf *out, struct json_object *v, size_t max_chars)
{
    if (!v)
        return;
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v) && i < 30; i++) {
            struct json_object *e = json_object_array_get_idx(v, i);
            if (i)
                buf_adds(out, ", ");
            add_cut(out,
                    json_object_is_type(e, json_type_string) ? json_object_get_string(e)
                                                             : json_object_to_json_string(e),
                    60, 1);
        }
        return;
    }
    add_cut(out,
            json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                     : json_object_to_json_string(v),
            max_chars, 1);
}

/* Operations a piece of analysis code performs, from well-known call names. */
static void detected_operations(const char *code, struct buf *out)
{
    static const struct {
        const char *needle, *name;
    } ops[] = {
        {"groupby", "group and aggregate"},
        {"GROUP BY", "group and aggregate"},
        {"merge(", "join"},
        {"JOIN", "join"},
        {"pivot", "pivot"},
        {"melt(", "unpivot"},
        {"fillna", "fill missing values"},
        {"dropna", "drop missing values"},
        {"sort_values", "sort"},
        {"ORDER BY", "sort"},
        {"rolling(", "rolling window"},
        {"resample(", "resample by time"},
        {"to_datetime", "parse dates"},
        {"query(", "filter"},
        {"WHERE", "filter"},
        {"rank(", "rank"},
        {"pct_change", "percent change"},
        {"cumsum", "running total"},
    };
    buf_reset(out);
    for (size_t i = 0; code && i < sizeof ops / sizeof *ops; i++)
        if (strstr(code, ops[i].needle) && !strstr(out->data, ops[i].name))
            buf_addf(out, "%s%s", out->len ? ", " : "", ops[i].name);
}

/* The code without comment lines. */
static void code_without_comments(const char *code, struct buf *out)
{
    buf_reset(out);
    for (const char *p = code ? code : ""; *p;) {
        size_t n = strcspn(p, "\n");
        size_t lead = strspn(p, " \t");
        if (n > lead && p[lead] != '#' && !(p[lead] == '-' && p[lead + 1] == '-')) {
            buf_add(out, p, n);
            buf_addch(out, '\n');
        }
        p += n + (p[n] == '\n');
    }
}

/* The chain's step i (an object) as "<table>: <what was done> (<operations>)". */
static void add_chain_step(struct json_object *step, struct buf *body)
{
    const char *table = jf_member_str(step, "table"), *what = jf_member_str(step, "instruction");
    const char *ops = jf_member_str(step, "operations");
    if (!what || !*what)
        what = jf_member_str(step, "question");
    if (table && *table) {
        add_cut(body, table, 80, 1);
        buf_adds(body, ": ");
    }
    add_cut(body, what && *what ? what : "?", 200, 1);
    if (ops && *ops) {
        buf_adds(body, " (");
        add_cut(body, ops, 120, 1);
        buf_addch(body, ')');
    }
}

void distill_summary(struct json_object *ctx, struct buf *out)
{
    struct json_object *interaction = field(ctx, "interaction"),
                       *attempts = field(ctx, "execution_attempts");
    struct json_object *result = field(ctx, "result_summary"), *dialog = field(ctx, "dialog");
    struct buf tmp;
    const char *code = jf_member_str(result, "code");
    buf_init(&tmp, 1 << 20);
    buf_adds(out, "User question: ");
    add_cut(out, jf_member_str(ctx, "user_question") ? jf_member_str(ctx, "user_question") : "",
            500, 0);
    buf_adds(out, "\n\nInteraction:\n");
    for (size_t i = 0; interaction && json_object_is_type(interaction, json_type_array) &&
                       i < json_object_array_length(interaction) && i < 30;
         i++) {
        struct json_object *it = json_object_array_get_idx(interaction, i);
        const char *who = jf_member_str(it, "from"), *what = jf_member_str(it, "content");
        buf_addf(out, "- %s: ", who ? who : "?");
        add_cut(out, what ? what : json_object_to_json_string(it), 500, 1);
        buf_addch(out, '\n');
    }
    if (field(ctx, "chain") && json_object_is_type(field(ctx, "chain"), json_type_array)) {
        struct json_object *chain = field(ctx, "chain");
        buf_adds(out, "\nChain (root to the saved table):\n");
        for (size_t i = 0; i < json_object_array_length(chain) && i < DISTILL_CHAIN_STEPS; i++) {
            buf_adds(out, "- ");
            add_chain_step(json_object_array_get_idx(chain, i), out);
            buf_addch(out, '\n');
        }
    }
    if (attempts && json_object_is_type(attempts, json_type_array) &&
        json_object_array_length(attempts) > 0) {
        buf_adds(out, "\nExecution attempts:\n");
        for (size_t i = 0; i < json_object_array_length(attempts) && i < 20; i++) {
            struct json_object *a = json_object_array_get_idx(attempts, i);
            buf_adds(out, "- ");
            if (jf_member_str(a, "table")) {
                add_cut(out, jf_member_str(a, "table"), 80, 1);
                buf_adds(out, ", ");
            }
            buf_addf(out, "attempt %s [%s]: ", json_object_to_json_string(field(a, "attempt")),
                     jf_member_str(a, "status") ? jf_member_str(a, "status") : "?");
            add_cut(out, jf_member_str(a, "summary") ? jf_member_str(a, "summary") : "", 400, 1);
            if (jf_member_str(a, "error")) {
                buf_adds(out, " — error: ");
                add_cut(out, jf_member_str(a, "error"), 400, 1);
            }
            buf_addch(out, '\n');
        }
    }
    buf_adds(out, "\nResult: fields ");
    add_value(out, field(result, "output_fields"), 300);
    buf_adds(out, "; rows ");
    add_value(out, field(result, "output_rows"), 30);
    buf_adds(out, "; chart ");
    add_value(out, field(result, "chart_type"), 60);
    buf_adds(out, "; source tables ");
    add_value(out, field(result, "source_tables"), 300);
    buf_addch(out, '\n');
    detected_operations(code, &tmp);
    if (tmp.len)
        buf_addf(out, "Detected operations: %s\n", tmp.data);
    if (code) {
        code_without_comments(code, &tmp);
        buf_adds(out, "\nCode (comments removed):\n");
        add_cut(out, tmp.data, 800, 0);
        buf_addch(out, '\n');
    }
    if (dialog && json_object_is_type(dialog, json_type_array)) {
        size_t n = json_object_array_length(dialog), from = n > 20 ? n - 20 : 0, user = 0,
               other = 0;
        for (size_t i = from; i < n; i++) {
            const char *role = jf_member_str(json_object_array_get_idx(dialog, i), "role");
            if (role && strcmp(role, "user") == 0)
                user++;
            else
                other++;
        }
        buf_addf(out, "\nDialog: %zu messages (last %zu: %zu from the user, %zu others)\n", n,
                 n - from, user, other);
    }
    buf_release(&tmp);
}

/* ---- the local distillation ---- */

static int zh(const char *lang)
{
    return lang && strcmp(lang, "zh") == 0;
}

/* A chart type as a reader of lang says it ("bar" is 柱状图 in Chinese). */
static const char *chart_name(const char *chart, const char *lang)
{
    static const char *const names[][2] = {
        {"bar", "柱状图"},     {"line", "折线图"},    {"point", "散点图"},
        {"scatter", "散点图"}, {"area", "面积图"},    {"pie", "饼图"},
        {"heatmap", "热力图"}, {"boxplot", "箱线图"}, {"table", "表格"},
    };
    for (size_t i = 0; zh(lang) && i < sizeof names / sizeof *names; i++)
        if (strcmp(chart, names[i][0]) == 0)
            return names[i][1];
    return chart;
}

/* The title, "[Method]: [scenario] — [takeaway]", from the detected
 * operations (ops, comma-separated), the question or display instruction
 * and the chart type. */
static void local_title(const struct buf *ops, const char *question, const char *instruction,
                        const char *chart, const char *lang, struct buf *title)
{
    if (ops->len) {
        const char *comma = strchr(ops->data, ',');
        size_t n = comma ? (size_t)(comma - ops->data) : ops->len;
        buf_addch(title, (char)(ops->data[0] >= 'a' && ops->data[0] <= 'z' ? ops->data[0] - 32
                                                                           : ops->data[0]));
        buf_add(title, ops->data + 1, n - 1);
    } else {
        buf_adds(title, zh(lang) ? "分析方法" : "Analysis");
    }
    buf_adds(title, ": ");
    add_cut(title, instruction && *instruction ? instruction : question, 60, 1);
    if (chart && *chart)
        buf_addf(title, zh(lang) ? " — 以%s呈现" : " — shown as a %s chart",
                 chart_name(chart, lang));
}

/* 1 when an attempt's status says it worked. */
static int attempt_succeeded(const char *status)
{
    static const char *const ok[] = {"ok", "success", "succeeded", "done", "completed"};
    for (size_t i = 0; status && i < sizeof ok / sizeof *ok; i++)
        if (strcasecmp(status, ok[i]) == 0)
            return 1;
    return 0;
}

/* The "Method" section's numbered steps: the source tables, what was done
 * at each table of the chain (its instruction, never the user's question;
 * without a chain, the agents' messages), the key operations, the result;
 * then every attempt of the chain, failed ones said so. */
static void local_method(struct json_object *ctx, struct json_object *result, const struct buf *ops,
                         const char *chart, const char *lang, struct buf *body)
{
    struct json_object *interaction = field(ctx, "interaction"), *chain = field(ctx, "chain");
    struct json_object *sources = field(result, "source_tables"),
                       *fields = field(result, "output_fields");
    struct json_object *attempts = field(ctx, "execution_attempts");
    size_t step = 1, n_attempts;
    if (sources) {
        buf_addf(body, zh(lang) ? "%zu. 从数据表 " : "%zu. Start from ", step++);
        add_value(body, sources, 200);
        buf_adds(body, zh(lang) ? " 开始。\n" : ".\n");
    }
    if (chain && json_object_is_type(chain, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(chain) && i < DISTILL_CHAIN_STEPS; i++) {
            struct json_object *it = json_object_array_get_idx(chain, i);
            if (!json_object_is_type(it, json_type_object))
                continue;
            buf_addf(body, "%zu. ", step++);
            add_chain_step(it, body);
            buf_addch(body, '\n');
        }
    } else {
        for (size_t i = 0; interaction && json_object_is_type(interaction, json_type_array) &&
                           i < json_object_array_length(interaction) && step <= 8;
             i++) {
            struct json_object *it = json_object_array_get_idx(interaction, i);
            const char *what = jf_member_str(it, "content"), *who = jf_member_str(it, "from");
            const char *role = jf_member_str(it, "role");
            /* What was done: the agents' words, not the user's questions
             * nor the agents' findings (summary, explanation). */
            if (!what || !*what || !who || strcmp(who, "user") == 0 ||
                (role && strcmp(role, "instruction") != 0))
                continue;
            buf_addf(body, "%zu. ", step++);
            add_cut(body, what, 200, 1);
            buf_addch(body, '\n');
        }
    }
    if (ops->len)
        buf_addf(body, zh(lang) ? "%zu. 关键操作：%s。\n" : "%zu. Key operations: %s.\n", step++,
                 ops->data);
    if (fields) {
        buf_addf(body, zh(lang) ? "%zu. 结果字段：" : "%zu. Result fields: ", step++);
        add_value(body, fields, 200);
        if (chart && *chart)
            buf_addf(body, zh(lang) ? "，以%s呈现" : ", shown as a %s chart",
                     chart_name(chart, lang));
        buf_adds(body, zh(lang) ? "。\n" : ".\n");
    }
    n_attempts = attempts && json_object_is_type(attempts, json_type_array)
                     ? json_object_array_length(attempts)
                     : 0;
    if (!n_attempts)
        return;
    buf_adds(body, zh(lang) ? "\n### 执行尝试\n" : "\n### Attempts\n");
    for (size_t i = 0; i < n_attempts && i < DISTILL_ATTEMPTS; i++) {
        struct json_object *a = json_object_array_get_idx(attempts, i), *num = field(a, "attempt");
        const char *status = jf_member_str(a, "status"), *table = jf_member_str(a, "table");
        const char *kind = jf_member_str(a, "kind"), *err = jf_member_str(a, "error");
        const char *summary = jf_member_str(a, "summary");
        buf_adds(body, "- ");
        if (table && *table) {
            add_cut(body, table, 80, 1);
            buf_adds(body, zh(lang) ? "，" : ", ");
        }
        buf_adds(body, zh(lang) ? "第 " : "attempt ");
        if (num &&
            (json_object_is_type(num, json_type_int) || json_object_is_type(num, json_type_string)))
            add_cut(body, json_object_get_string(num), 20, 1);
        else
            buf_addf(body, "%zu", i + 1);
        buf_adds(body, zh(lang) ? " 次" : "");
        if (kind && *kind) {
            buf_adds(body, " (");
            add_cut(body, kind, 40, 1);
            buf_addch(body, ')');
        }
        if (attempt_succeeded(status))
            buf_adds(body, zh(lang) ? "：成功" : ": succeeded");
        else if (status && *status) {
            buf_adds(body, zh(lang) ? "：失败（" : ": failed (");
            add_cut(body, status, 40, 1);
            buf_adds(body, zh(lang) ? "）" : ")");
        } else
            buf_adds(body, zh(lang) ? "：状态未记录" : ": status not recorded");
        if (err && *err && !attempt_succeeded(status)) {
            buf_adds(body, " — ");
            add_cut(body, err, 200, 1);
        }
        if (summary && *summary) {
            buf_adds(body, zh(lang) ? "；" : "; ");
            add_cut(body, summary, 200, 1);
        }
        buf_addch(body, '\n');
    }
    if (n_attempts > DISTILL_ATTEMPTS)
        buf_addf(body, zh(lang) ? "- 另有 %zu 次尝试未列出\n" : "- %zu more attempts not listed\n",
                 n_attempts - DISTILL_ATTEMPTS);
}

/* What fixed failed attempt i (of table, may be NULL): the summary of the
 * first later attempt of the same table that succeeded, or NULL (then no
 * "fixed by" is claimed; a failed attempt's own summary is no fix). */
static const char *later_fix(struct json_object *attempts, size_t i, const char *table)
{
    for (size_t j = i + 1; j < json_object_array_length(attempts); j++) {
        struct json_object *b = json_object_array_get_idx(attempts, j);
        const char *t = jf_member_str(b, "table");
        if (!((!t && !table) || (t && table && strcmp(t, table) == 0)))
            continue;
        if (attempt_succeeded(jf_member_str(b, "status")))
            return jf_member_str(b, "repair_code_summary") ? jf_member_str(b, "repair_code_summary")
                                                           : jf_member_str(b, "summary");
    }
    return NULL;
}

/* The "Pitfalls & Tips" section's lines: every failed attempt (the first
 * DISTILL_ATTEMPTS) and what fixed it; "none failed" only when every
 * attempt says it succeeded. */
static void local_pitfalls(struct json_object *attempts, const char *lang, struct buf *body)
{
    size_t failures = 0, unknown = 0,
           n = attempts && json_object_is_type(attempts, json_type_array)
                   ? json_object_array_length(attempts)
                   : 0;
    for (size_t i = 0; i < n; i++) {
        struct json_object *a = json_object_array_get_idx(attempts, i);
        const char *status = jf_member_str(a, "status"), *err = jf_member_str(a, "error");
        const char *table = jf_member_str(a, "table");
        const char *fix = jf_member_str(a, "repair_code_summary");
        if (!status || !*status) {
            unknown++;
            continue;
        }
        if (attempt_succeeded(status) || ++failures > DISTILL_ATTEMPTS)
            continue;
        if (!fix || !*fix)
            fix = later_fix(attempts, i, table);
        buf_adds(body, "- ");
        if (table && *table) {
            add_cut(body, table, 80, 1);
            buf_adds(body, ": ");
        }
        add_cut(body, err && *err ? err : status, 200, 1);
        if (fix && *fix) {
            buf_adds(body, zh(lang) ? " → 解决：" : " → fixed by: ");
            add_cut(body, fix, 200, 1);
        }
        buf_addch(body, '\n');
    }
    if (failures)
        return;
    if (n == 0)
        buf_adds(body, zh(lang) ? "- 没有记录执行尝试；复用前先核对字段口径。\n"
                                : "- No execution attempt was recorded; check field meanings "
                                  "before reusing it.\n");
    else if (unknown)
        buf_addf(body,
                 zh(lang) ? "- 没有标记为失败的尝试（%zu 次未记录状态）；复用前先核对字段口径。\n"
                          : "- No attempt is marked as failed (%zu without a status); check "
                            "field meanings before reusing it.\n",
                 unknown);
    else
        buf_adds(body, zh(lang) ? "- 本次分析没有失败的尝试；复用前先核对字段口径。\n"
                                : "- No attempt failed in this analysis; check field meanings "
                                  "before reusing it.\n");
}

void distill_local(struct json_object *ctx, const char *lang, struct buf *out)
{
    struct json_object *result = field(ctx, "result_summary"), *fm = json_object_new_object();
    struct json_object *tags = json_object_new_array();
    const char *question =
        jf_member_str(ctx, "user_question") ? jf_member_str(ctx, "user_question") : "";
    const char *chart = jf_member_str(result, "chart_type");
    struct buf title, body, ops;

    buf_init(&title, 4096);
    buf_init(&body, 1 << 20);
    buf_init(&ops, 4096);
    detected_operations(jf_member_str(result, "code"), &ops);
    local_title(&ops, question, jf_member_str(result, "display_instruction"), chart, lang, &title);

    buf_adds(&body, zh(lang) ? "## 适用场景\n" : "## When to Use\n");
    add_cut(&body, question, 500, 1);
    buf_adds(&body, "\n\n");
    buf_adds(&body, zh(lang) ? "## 方法\n" : "## Method\n");
    local_method(ctx, result, &ops, chart, lang, &body);
    buf_adds(&body, zh(lang) ? "\n## 注意事项\n" : "\n## Pitfalls & Tips\n");
    local_pitfalls(field(ctx, "execution_attempts"), lang, &body);

    if (ops.len)
        json_object_array_add(tags, json_object_new_string(zh(lang) ? "分析方法" : "analysis"));
    if (chart && *chart)
        json_object_array_add(tags, json_object_new_string(chart));
    json_object_object_add(fm, "title", json_object_new_string(title.data));
    json_object_object_add(fm, "tags", tags);
    buf_reset(out);
    frontmatter_render(fm, out);
    buf_addch(out, '\n');
    buf_add(out, body.data, body.len);
    json_object_put(fm);
    buf_release(&title);
    buf_release(&body);
    buf_release(&ops);
}

/* ---- the LLM distillation ---- */

static const char *language_name(const char *lang)
{
    static const char *const names[][2] = {{"zh", "Chinese (简体中文)"},
                                           {"ja", "Japanese"},
                                           {"ko", "Korean"},
                                           {"fr", "French"},
                                           {"de", "German"},
                                           {"es", "Spanish"},
                                           {"pt", "Portuguese"}};
    for (size_t i = 0; lang && i < sizeof names / sizeof *names; i++)
        if (strcmp(lang, names[i][0]) == 0)
            return names[i][1];
    return "English";
}

const char *distill_language(const char *accept_language)
{
    static const char *const codes[] = {"zh", "ja", "ko", "fr", "de", "es", "pt"};
    const char *al = accept_language ? accept_language + strspn(accept_language, " \t") : "";
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (strncasecmp(al, codes[i], 2) == 0 &&
            !((al[2] >= 'a' && al[2] <= 'z') || (al[2] >= 'A' && al[2] <= 'Z')))
            return codes[i];
    return "en";
}

/* The document in an answer: the answer itself, unless the model wrapped it
 * in a ``` fence (all of it, or with prose around a fenced block that holds
 * the front matter): then the fenced text. */
static void unwrap_document(const char *text, struct buf *out)
{
    size_t len = strlen(text), body_len;
    const char *p = text + strspn(text, " \t\r\n"), *open = NULL, *close = NULL, *body;
    buf_reset(out);
    if (fence_unwrap(text, len, &body, &body_len)) {
        buf_add(out, body, body_len); /* the whole answer is one fenced block */
        return;
    }
    if (strncmp(p, "---", 3) != 0) {
        /* Prose around a block: the first fence whose text starts with front matter. */
        for (const char *f = fence_find(text, len); f && !open;
             f = fence_find(f + 3, len - (size_t)(f + 3 - text))) {
            const char *line = strchr(f, '\n');
            if ((f == text || f[-1] == '\n') && line &&
                strncmp(line + 1 + strspn(line + 1, " \t\r\n"), "---", 3) == 0)
                open = f;
        }
        /* ... up to the last fence that starts a line after it. */
        for (const char *f = open ? strstr(open + 3, "\n```") : NULL; f; f = strstr(f + 4, "\n```"))
            close = f + 1;
    }
    if (open && close && (body = strchr(open, '\n')) && body + 1 <= close) {
        buf_add(out, body + 1, (size_t)(close - (body + 1)));
        return;
    }
    buf_adds(out, text);
}

void distill_instructions(const char *lang, struct buf *out)
{
    buf_addf(out,
             "You distill a finished data analysis into a reusable experience for a knowledge "
             "base that AI agents read. Extract the transferable methodology, not the case: no "
             "raw data values, no secrets, no table contents.\n"
             "Write a Markdown document that starts with YAML front matter holding `title` "
             "(pattern \"[Method]: [scenario] — [takeaway]\", 10 to 30 words) and `tags` (a "
             "YAML list), then three sections: `## When to Use`, `## Method` and `## Pitfalls "
             "& Tips` (the most valuable part: what went wrong and how it was fixed). Under 500 "
             "words, body at most %d characters. Write the body in %s.",
             LIMIT_EXPERIENCES_BODY, language_name(lang));
}

int distill_llm(const struct svc_ctx *c, struct json_object *ctx, const char *lang,
                const char *model, long timeout_ms, struct buf *out, struct llm_reply *r)
{
    struct json_object *messages = json_object_new_array();
    struct llm_request lr;
    struct buf system, user;
    long started;
    int rc = -1;
    buf_init(&system, 16384);
    buf_init(&user, 1 << 20);
    distill_instructions(lang, &system);
    distill_summary(ctx, &user);
    json_object_array_add(messages, llm_message("system", system.data));
    json_object_array_add(messages, llm_message("user", user.data));
    lr = svc_llm_request(c, "distill", messages);
    lr.model = model;
    if (timeout_ms <= 0)
        timeout_ms = c->cfg->llm_timeout_ms;
    if (timeout_ms > DISTILL_MAX_TIMEOUT_SECONDS * 1000L)
        timeout_ms = DISTILL_MAX_TIMEOUT_SECONDS * 1000L;
    started = monotonic_ms();
    for (int attempt = 0; attempt < 2; attempt++) {
        size_t body_off = 0, chars;
        struct json_object *meta;
        /* The condensing call gets what the first one left of the timeout. */
        lr.timeout_ms = timeout_ms - (monotonic_ms() - started);
        if (lr.timeout_ms < 1000) {
            error_text(&r->err, "LLM_TIMEOUT", NULL, "The LLM did not answer in time");
            goto out;
        }
        if (svc_llm_chat(c, &lr, r))
            goto out;
        unwrap_document(r->text.data, out);
        meta = frontmatter_parse(out->data, out->len, &body_off);
        json_object_put(meta);
        chars = utf8_length(out->data + body_off, out->len - body_off);
        if (chars <= LIMIT_EXPERIENCES_BODY) {
            rc = 0;
            goto out;
        }
        buf_reset(out);
        json_object_array_add(messages, llm_message("assistant", r->text.data));
        buf_reset(&user);
        buf_addf(&user,
                 "The body is %zu characters; the limit is %d. Condense it, keeping the "
                 "front matter, the method and the pitfalls.",
                 chars, LIMIT_EXPERIENCES_BODY);
        json_object_array_add(messages, llm_message("user", user.data));
    }
    error_set(&r->err, E_LIMIT_EXCEEDED, NULL,
              "experiences body exceeds %d characters even after condensing",
              LIMIT_EXPERIENCES_BODY);
out:
    json_object_put(messages);
    buf_release(&system);
    buf_release(&user);
    return rc;
}

/* ---- finishing ---- */

/* A front matter value as one line of at most max_chars characters, or NULL
 * (caller frees) when it is not a scalar or is blank. */
static char *one_line_cut(struct json_object *v, size_t max_chars)
{
    struct buf line;
    const char *s;
    char *out = NULL;
    size_t start, end;
    if (!v || json_object_is_type(v, json_type_array) || json_object_is_type(v, json_type_object))
        return NULL;
    s = json_object_is_type(v, json_type_string)
            ? json_object_get_string(v)
            : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    buf_init(&line, 1 << 20);
    buf_add_one_line(&line, s);
    start = strspn(line.data, " \t");
    end = line.len;
    while (end > start && strchr(" \t", line.data[end - 1]))
        end--;
    if (end > start)
        out = xstrndup(line.data + start, utf8_prefix(line.data + start, end - start, max_chars));
    buf_release(&line);
    return out;
}

/* The model's tags within the entry limits: at most LIMIT_TAGS one-line
 * texts of at most LIMIT_TAG characters (a lone scalar is one tag). */
static struct json_object *tags_within_limits(struct json_object *v)
{
    struct json_object *tags = json_object_new_array();
    size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
    for (size_t i = 0; v && i < n && json_object_array_length(tags) < LIMIT_TAGS; i++) {
        char *tag = one_line_cut(
            json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, i) : v,
            LIMIT_TAG);
        if (tag)
            json_object_array_add(tags, json_object_new_string(tag));
        free(tag);
    }
    return tags;
}

void distill_finish(const char *text, const char *source, const char *context_id, struct buf *out)
{
    size_t body_off = 0, len = strlen(text);
    struct json_object *meta = NULL, *fm, *v = NULL;
    const char *why;
    char today[20], *title = NULL;
    /* A refused front matter (aliases) is dropped: its body is still used. */
    frontmatter_read(text, len, &meta, &body_off, &why);
    time_utc_text(today);
    today[10] = '\0';
    fm = json_object_new_object();
    /* The model's title and tags obey the entry limits, the title one line. */
    if (meta && json_object_object_get_ex(meta, "title", &v))
        title = one_line_cut(v, LIMIT_TITLE);
    if (!title) {
        /* The fallback title: the first non-empty line, at most 80. */
        const char *p = text + body_off + strspn(text + body_off, " \t\r\n#");
        size_t n = strcspn(p, "\r\n");
        struct json_object *line = json_object_new_string_len(p, (int)utf8_prefix(p, n, 80));
        title = one_line_cut(line, 80);
        json_object_put(line);
        if (!title)
            title = xstrdup("Untitled Knowledge");
    }
    json_object_object_add(fm, "title", json_object_new_string(title));
    free(title);
    json_object_object_add(
        fm, "tags",
        tags_within_limits(meta && json_object_object_get_ex(meta, "tags", &v) ? v : NULL));
    json_object_object_add(fm, "created", json_object_new_string(today));
    json_object_object_add(fm, "updated", json_object_new_string(today));
    json_object_object_add(fm, "source", json_object_new_string(source));
    if (context_id && *context_id)
        json_object_object_add(fm, "source_context", json_object_new_string(context_id));
    buf_reset(out);
    frontmatter_render(fm, out);
    buf_addch(out, '\n');
    {
        const char *body = text + body_off;
        body += strspn(body, "\r\n");
        buf_adds(out, body);
        if (out->len && out->data[out->len - 1] != '\n')
            buf_addch(out, '\n');
    }
    json_object_put(fm);
    json_object_put(meta);
}

void distill_file_name(const char *title, const char *context_id, struct buf *out)
{
    if (path_slug(title, out)) {
        char today[20];
        if (context_id && *context_id && id_text_valid(context_id, 100)) {
            buf_adds(out, context_id);
        } else {
            time_utc_compact_date(today);
            buf_addf(out, "experience-%s", today);
        }
    }
    buf_adds(out, ".md");
}
