/* prompts: the MCP prompts (mcp/prompts.h), each a row naming its
 * arguments, its least role and the builder that asks the services. */
#include "mcp/prompts.h"
#include "base/buf.h"
#include "base/jfield.h"
#include "base/util.h"
#include "http/http.h"
#include "mcp/resources.h"
#include "service/auth.h"
#include "service/catalog.h"
#include "service/context.h"
#include "service/distill.h"
#include "service/traces.h"

#include <string.h>

/* A goal is a /context question; a text an account of a finished task. */
#define GOAL_MAX_CHARS 4000
#define TEXT_MAX_CHARS 20000
#define TAG_MAX_CHARS 256
/* Injections of a trace distill_experience shows, and each one's content. */
#define DISTILL_TRACE_SHOWN 50
#define SHOWN_CHARS 200

/* A text in English and in Chinese. */
struct text {
    const char *en, *zh;
};

struct prompt_arg {
    const char *name;
    int required;
    struct text description;
};

/* The arguments, already checked: each a string (or NULL when absent). */
struct prompt_args {
    struct json_object *values;
    const char *lang; /* "en" or "zh" */
};

typedef int (*prompt_fn)(const struct svc_ctx *c, const struct prompt_args *a, struct buf *text,
                         struct error *err);

struct prompt {
    const char *name;
    enum role role;
    prompt_fn build;
    struct text title, description;
    struct prompt_arg args[4];
};

static int zh(const struct prompt_args *a)
{
    return strcmp(a->lang, "zh") == 0;
}

static const char *arg(const struct prompt_args *a, const char *name)
{
    const char *s = jf_member_str(a->values, name);
    return s && *s ? s : NULL;
}

/* s on one line, cut to max characters ("…" when cut). */
static void add_cut(struct buf *out, const char *s, size_t max)
{
    size_t n = utf8_prefix(s, strlen(s), max);
    struct buf line;
    buf_init(&line, 4 * max + 8);
    buf_add(&line, s, n);
    buf_add_one_line(out, line.data);
    if (n < strlen(s))
        buf_adds(out, "…");
    buf_release(&line);
}

static int too_long(const char *value, size_t max_chars, const char *name, struct error *err)
{
    if (value && utf8_length(value, strlen(value)) > max_chars) {
        error_set(err, E_INVALID_REQUEST, NULL, "'%s' must be at most %zu characters", name,
                  max_chars);
        return 1;
    }
    return 0;
}

/* ---- start_task ---- */

static int start_task(const struct svc_ctx *c, const struct prompt_args *a, struct buf *text,
                      struct error *err)
{
    const char *goal = arg(a, "goal"), *block;
    struct json_object *body, *data = NULL, *items;
    struct buf uri;
    size_t n;
    int rc;
    const char *budget = arg(a, "budget_tokens");
    long budget_tokens = 0;
    if (too_long(goal, GOAL_MAX_CHARS, "goal", err))
        return -1;
    /* Prompt arguments are strings: the budget as /context takes it. */
    if (budget && parse_long(budget, CONTEXT_BUDGET_MIN, CONTEXT_BUDGET_MAX, &budget_tokens)) {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "'budget_tokens' must be a whole number from %d to %d", CONTEXT_BUDGET_MIN,
                  CONTEXT_BUDGET_MAX);
        return -1;
    }
    body = json_object_new_object();
    json_object_object_add(body, "question", json_object_new_string(goal));
    if (budget_tokens)
        json_object_object_add(body, "budget_tokens", json_object_new_int64(budget_tokens));
    rc = svc_context_question(c, body, &data, err);
    json_object_put(body);
    if (rc)
        return -1;
    buf_init(&uri, 16384);
    buf_adds(text, zh(a) ? "# 开始任务\n\n目标：" : "# Starting a task\n\nGoal: ");
    buf_adds(text, goal);
    buf_adds(text, zh(a) ? "\n\n在计划之前，先了解团队知识库（KnowHub）为这个目标准备的内容。\n"
                         : "\n\nBefore you plan, take in what the team's knowledge base "
                           "(KnowHub) holds for this goal.\n");
    block = jf_member_str(data, "rules_block");
    if (block && *block)
        buf_adds(text, block);
    else
        buf_adds(text, zh(a) ? "\n（这个空间没有必须始终遵守的规则。）\n"
                             : "\n(This space has no always-apply rules.)\n");
    buf_adds(text, zh(a) ? "\n## 与目标相关的知识\n" : "\n## Knowledge for this goal\n");
    json_object_object_get_ex(data, "knowledge", &items);
    n = items ? json_object_array_length(items) : 0;
    for (size_t i = 0; i < n; i++) {
        struct json_object *it = json_object_array_get_idx(items, i);
        const char *category = jf_member_str(it, "category");
        int rule = strcmp(category, "rules") == 0;
        buf_reset(&uri);
        mcp_resource_uri(&uri, category, jf_member_str(it, "path"));
        buf_addf(text, "\n### [%s] ",
                 zh(a) ? (rule ? "规则" : "经验") : (rule ? "rule" : "experience"));
        buf_add_one_line(text, jf_member_str(it, "title"));
        buf_addf(text, zh(a) ? "\n全文：%s\n%s\n" : "\nFull text: %s\n%s\n", uri.data,
                 jf_member_str(it, "snippet"));
    }
    if (n == 0)
        buf_adds(text, zh(a) ? "\n知识库中还没有与这个目标相关的内容。\n"
                             : "\nNothing stored matches this goal yet.\n");
    buf_adds(text,
             zh(a) ? "\n## 工作时\n\n"
                     "- 遵守上面的规则，它们优先于你的默认做法。\n"
                     "- 摘要不够时，读取条目的 knowhub:// 资源（或调用 knowledge_read）获取全文。\n"
                     "- 学到可供他人复用的内容时，用 knowledge_save 保存。\n"
                     "- 目标完成时，若你用 trace_id 记录过注入的知识，调用 trace_eval_prompt "
                     "和 trace_submit_evaluation。\n"
                   : "\n## While you work\n\n"
                     "- Follow the rules above; they override your defaults.\n"
                     "- When a summary is not enough, read the entry in full from its "
                     "knowhub:// resource (or with knowledge_read).\n"
                     "- Save what you learn that others could reuse with knowledge_save.\n"
                     "- When the goal is done and you logged injections with a trace_id, call "
                     "trace_eval_prompt and trace_submit_evaluation.\n");
    buf_release(&uri);
    json_object_put(data);
    return 0;
}

/* ---- evaluate_trace ---- */

static int evaluate_trace(const struct svc_ctx *c, const struct prompt_args *a, struct buf *text,
                          struct error *err)
{
    struct svc_ctx in_lang = *c;
    struct json_object *data = NULL;
    if (too_long(arg(a, "goal"), GOAL_MAX_CHARS, "goal", err))
        return -1;
    in_lang.accept_language = a->lang; /* the prompt's language, as REST's header would */
    if (svc_trace_eval_prompt(&in_lang, arg(a, "trace_id"), arg(a, "goal"), &data, err))
        return -1;
    buf_adds(text, jf_member_str(data, "prompt"));
    json_object_put(data);
    return 0;
}

/* ---- distill_experience ---- */

/* The trace's task and the knowledge injected into it, with the verdicts. */
static int trace_account(const struct svc_ctx *c, const struct prompt_args *a, const char *trace_id,
                         struct buf *out, struct error *err)
{
    struct json_object *trace = NULL, *log = NULL, *entries = NULL;
    const char *task;
    if (svc_trace_get(c, trace_id, &trace, err) ||
        svc_trace_log(c, trace_id, 0, DISTILL_TRACE_SHOWN, 0, &log, err)) {
        json_object_put(trace);
        return -1;
    }
    task = jf_member_str(trace, "task");
    buf_addf(out, zh(a) ? "Trace %s。任务：" : "Trace %s. Task: ", trace_id);
    add_cut(out, task && *task ? task : (zh(a) ? "（未记录）" : "(not recorded)"), 2000);
    json_object_object_get_ex(log, "entries", &entries);
    buf_addf(out,
             zh(a) ? "\n\n执行中注入的知识（%zu 条，共 %s 条）：\n"
                   : "\n\nKnowledge injected while it ran (%zu of %s):\n",
             json_object_array_length(entries),
             json_object_get_string(json_object_object_get(log, "total")));
    for (size_t i = 0; i < json_object_array_length(entries); i++) {
        struct json_object *e = json_object_array_get_idx(entries, i), *result = NULL;
        buf_addf(out, "- %s: ", jf_member_str(e, "knowledge_id"));
        add_cut(out, jf_member_str(e, "content"), SHOWN_CHARS);
        if (json_object_object_get_ex(e, "eval_result", &result) && result) {
            buf_addf(out, zh(a) ? "（评估：%s，" : " (verdict: %s, ",
                     jf_member_str(result, "eval_status"));
            add_cut(out, jf_member_str(result, "reason"), SHOWN_CHARS);
            buf_adds(out, zh(a) ? "）" : ")");
        }
        buf_addch(out, '\n');
    }
    json_object_put(trace);
    json_object_put(log);
    return 0;
}

static int distill_experience(const struct svc_ctx *c, const struct prompt_args *a,
                              struct buf *text, struct error *err)
{
    const char *trace_id = arg(a, "trace_id"), *account = arg(a, "text");
    struct json_object *ctx = NULL;
    const char *why;
    if (!trace_id && !account) {
        error_set(err, E_INVALID_REQUEST, NULL, "Give 'trace_id' or 'text' (or both)");
        return -1;
    }
    if (too_long(account, TEXT_MAX_CHARS, "text", err))
        return -1;
    buf_adds(text, zh(a) ? "把下面完成的任务提炼成一条可复用的经验，写入团队知识库（KnowHub）。"
                           "按以下要求写：\n\n"
                         : "Distill the finished task below into one reusable experience for the "
                           "team's knowledge base (KnowHub), as follows:\n\n");
    distill_instructions(a->lang, text);
    buf_adds(text, zh(a) ? "\n\n## 任务\n\n" : "\n\n## The task\n\n");
    if (trace_id && trace_account(c, a, trace_id, text, err))
        return -1;
    if (account) {
        /* The analysis context POST /api/knowledge/distill-experience takes
         * reads as the server's distiller reads it; any other text as it is. */
        if (json_parse_whole(account, strlen(account), &ctx, &why) == 0 && ctx &&
            json_object_is_type(ctx, json_type_object) && jf_member_str(ctx, "user_question"))
            distill_summary(ctx, text);
        else
            buf_adds(text, account);
        json_object_put(ctx);
        buf_addch(text, '\n');
    }
    buf_adds(text, zh(a) ? "\n## 然后\n\n先给我看这篇文档。我同意后，用 knowledge_save 保存："
                           "title 取 front matter 的 title，scenario 取“When to Use”一节，"
                           "content 取正文（最多 2000 个字符）。\n"
                         : "\n## Then\n\nShow me the document first. When I agree, save it with "
                           "knowledge_save: title from the front matter's title, scenario from "
                           "the `When to Use` section, content the body (at most 2000 "
                           "characters).\n");
    return 0;
}

/* ---- review_pending ---- */

static int review_pending(const struct svc_ctx *c, const struct prompt_args *a, struct buf *text,
                          struct error *err)
{
    const char *category = arg(a, "category"), *tag = arg(a, "tag");
    struct json_object *items = NULL;
    struct buf uri;
    long total = 0;
    size_t n;
    if (category && strcmp(category, "rules") != 0 && strcmp(category, "experiences") != 0) {
        error_set(err, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s", category);
        return -1;
    }
    if (too_long(tag, TAG_MAX_CHARS, "tag", err) ||
        svc_catalog_agent_written(c, category, tag, MCP_REVIEW_SHOWN, &items, &total, err))
        return -1;
    n = json_object_array_length(items);
    buf_init(&uri, 16384);
    buf_adds(text, zh(a) ? "请帮我审阅智能体最近写入团队知识库（KnowHub）的条目"
                         : "Help me review what agents wrote lately to the team's knowledge base "
                           "(KnowHub)");
    if (category)
        buf_addf(text, zh(a) ? "（分类 %s）" : " (category %s)", category);
    if (tag) {
        buf_adds(text, zh(a) ? "（标签 " : " (tag ");
        add_cut(text, tag, TAG_MAX_CHARS);
        buf_adds(text, zh(a) ? "）" : ")");
    }
    buf_addf(text,
             zh(a) ? "：共 %ld 条，下面是最新的 %zu 条。" : ": %ld entries, the newest %zu below. ",
             total, n);
    buf_adds(text,
             zh(a)
                 ? "逐条读取其 knowhub:// 资源中的全文，然后给出保留、修改（怎么改）或删除的建议，"
                   "并用一句话说明理由：内容是否正确、是否足够通用可复用、是否与其他条目重复、"
                   "是否含有密钥或原始数据？\n"
                 : "Read each in full from its knowhub:// resource, then say keep, edit (and "
                   "how) or delete, with one line of reason: is it correct, general enough to "
                   "reuse, not a duplicate of another entry, free of secrets and raw data?\n");
    for (size_t i = 0; i < n; i++) {
        struct json_object *it = json_object_array_get_idx(items, i);
        buf_reset(&uri);
        mcp_resource_uri(&uri, jf_member_str(it, "category"), jf_member_str(it, "path"));
        buf_addf(text, "\n%zu. ", i + 1);
        buf_add_one_line(text, jf_member_str(it, "title"));
        buf_addf(text,
                 zh(a) ? "（%s，来源 %s，创建于 %s，评分 %s，有用 %s，有害 %s）\n   %s\n   场景："
                       : " (%s, source %s, created %s, score %s, helpful %s, harmful %s)\n   "
                         "%s\n   When: ",
                 jf_member_str(it, "category"), jf_member_str(it, "source"),
                 jf_member_str(it, "created_at"),
                 json_object_get_string(json_object_object_get(it, "score")),
                 json_object_get_string(json_object_object_get(it, "helpful")),
                 json_object_get_string(json_object_object_get(it, "harmful")), uri.data);
        add_cut(text, jf_member_str(it, "scenario"), SHOWN_CHARS);
        buf_addch(text, '\n');
    }
    if (n == 0)
        buf_adds(text, zh(a) ? "\n（没有符合条件的智能体写入的条目。）\n"
                             : "\n(No entry written by an agent matches.)\n");
    buf_release(&uri);
    json_object_put(items);
    return 0;
}

/* ---- the table ---- */

#define LANGUAGE_ARG                                                                               \
    {                                                                                              \
        "language", 0,                                                                             \
        {                                                                                          \
            "en or zh (default: your Accept-Language)", "en 或 zh（默认取 Accept-Language）" \
        }                                                                                          \
    }

static const struct prompt prompts[] = {
    {"start_task",
     ROLE_READER,
     start_task,
     {"Start a task with KnowHub", "用 KnowHub 开始任务"},
     {"The rules to follow and the knowledge relevant to your goal, ready to start on it",
      "开始之前需要遵守的规则，以及与目标相关的知识"},
     {{"goal", 1, {"what you are about to do", "你接下来要做的事"}},
      LANGUAGE_ARG,
      {"budget_tokens",
       0,
       {"at most this many tokens of rules and knowledge (100-200000; rules are never cut)",
        "规则与知识最多占用的 token 数（100-200000；规则从不截断）"}}}},
    {"evaluate_trace",
     ROLE_READER,
     evaluate_trace,
     {"Evaluate the knowledge of a trace", "评估一个 trace 中注入的知识"},
     {"The prompt that asks you to judge the knowledge injected into a trace; answer it, then "
      "call trace_submit_evaluation",
      "请你评估某个 trace 中注入的知识；回答后调用 trace_submit_evaluation"},
     {{"trace_id", 1, {"the trace", "trace 的 id"}},
      {"goal", 0, {"the current goal", "当前目标"}},
      LANGUAGE_ARG}},
    {"distill_experience",
     ROLE_READER,
     distill_experience,
     {"Distill an experience", "提炼一条经验"},
     {"Turn a finished task (a trace, or your account of it) into a reusable experience, then "
      "save it with knowledge_save",
      "把完成的任务（一个 trace，或你的描述）提炼成可复用的经验，再用 knowledge_save 保存"},
     {{"trace_id",
       0,
       {"a trace whose task and injected knowledge to distill",
        "要提炼的 trace（其任务和注入的知识）"}},
      {"text",
       0,
       {"what happened: your account of the task, or the experience_context JSON of "
        "distill-experience",
        "经过：你对任务的描述，或 distill-experience 的 experience_context JSON"}},
      LANGUAGE_ARG}},
    {"review_pending",
     ROLE_EDITOR,
     review_pending,
     {"Review what agents wrote", "审阅智能体写入的知识"},
     {"The newest entries agents saved, for a person to keep, edit or delete (editors and "
      "admins)",
      "智能体最近保存的条目，供人决定保留、修改或删除（编辑和管理员）"},
     {{"category", 0, {"rules or experiences (default: both)", "rules 或 experiences（默认两者）"}},
      {"tag", 0, {"only entries with this tag", "只看带这个标签的条目"}},
      LANGUAGE_ARG}},
};
#define PROMPT_COUNT (sizeof prompts / sizeof *prompts)
#define ARG_COUNT (sizeof prompts[0].args / sizeof prompts[0].args[0])

static const struct prompt *prompt_named(const char *name)
{
    for (size_t i = 0; name && i < PROMPT_COUNT; i++)
        if (strcmp(prompts[i].name, name) == 0)
            return &prompts[i];
    return NULL;
}

static const struct prompt_arg *arg_named(const struct prompt *p, const char *name)
{
    for (size_t i = 0; i < ARG_COUNT && p->args[i].name; i++)
        if (strcmp(p->args[i].name, name) == 0)
            return &p->args[i];
    return NULL;
}

int mcp_prompt_allowed(const char *name, enum role role, const char *arg_name, int *has_arg)
{
    const struct prompt *p = prompt_named(name);
    if (has_arg)
        *has_arg = p && arg_name && arg_named(p, arg_name);
    if (!p)
        return -1;
    return role >= p->role;
}

int mcp_prompts_list(struct request *req, struct json_object *params, struct json_object **result,
                     struct rpc_fail *f)
{
    int zh_ = strcmp(ui_language(req->accept_language), "zh") == 0;
    struct json_object *list = json_object_new_array();
    const char *cursor;
    if (rpc_param_str(params, "cursor", MCP_PROMPT_ARG_MAX_BYTES, &cursor, f)) {
        json_object_put(list);
        return -1;
    }
    if (cursor) { /* every prompt is on the first page */
        json_object_put(list);
        return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST,
                            "Invalid cursor: prompts/list has one page");
    }
    for (size_t i = 0; i < PROMPT_COUNT; i++) {
        const struct prompt *p = &prompts[i];
        struct json_object *o, *args;
        if (req->who.role < p->role)
            continue; /* hidden from a lower role */
        o = json_object_new_object();
        args = json_object_new_array();
        json_object_object_add(o, "name", json_object_new_string(p->name));
        json_object_object_add(o, "title", json_object_new_string(zh_ ? p->title.zh : p->title.en));
        json_object_object_add(o, "description",
                               json_object_new_string(zh_ ? p->description.zh : p->description.en));
        for (size_t j = 0; j < ARG_COUNT && p->args[j].name; j++) {
            struct json_object *a = json_object_new_object();
            json_object_object_add(a, "name", json_object_new_string(p->args[j].name));
            json_object_object_add(a, "description",
                                   json_object_new_string(zh_ ? p->args[j].description.zh
                                                              : p->args[j].description.en));
            json_object_object_add(a, "required", json_object_new_boolean(p->args[j].required));
            json_object_array_add(args, a);
        }
        json_object_object_add(o, "arguments", args);
        json_object_array_add(list, o);
    }
    *result = json_object_new_object();
    json_object_object_add(*result, "prompts", list);
    return 0;
}

/* The arguments of p from params.arguments, each checked: a known name, a
 * string within the budget, the required ones given, language en or zh. */
static int args_checked(const struct prompt *p, struct json_object *params, struct prompt_args *a,
                        struct rpc_fail *f)
{
    struct json_object *given = NULL;
    const char *lang;
    if (params)
        json_object_object_get_ex(params, "arguments", &given);
    if (given && !json_object_is_type(given, json_type_object))
        return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST,
                            "'arguments' must be an object of strings");
    a->values = json_object_new_object();
    if (given) {
        json_object_object_foreach(given, key, val)
        {
            const char *s;
            (void)val;
            if (!arg_named(p, key))
                return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST,
                                    "Unknown argument '%.64s' of %s", key, p->name);
            if (rpc_param_str(given, key, MCP_PROMPT_ARG_MAX_BYTES, &s, f))
                return -1;
            if (s)
                json_object_object_add(a->values, key, json_object_new_string(s));
        }
    }
    for (size_t i = 0; i < ARG_COUNT && p->args[i].name; i++) {
        const char *s = jf_member_str(a->values, p->args[i].name);
        if (p->args[i].required && (!s || !s[strspn(s, " \t\r\n")]))
            return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST, "'%s' is required",
                                p->args[i].name);
    }
    lang = jf_member_str(a->values, "language");
    if (lang && strcmp(lang, "en") != 0 && strcmp(lang, "zh") != 0)
        return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST,
                            "'language' must be en or zh");
    a->lang = lang ? lang : NULL;
    return 0;
}

int mcp_prompts_get(struct request *req, struct json_object *params, struct json_object **result,
                    struct rpc_fail *f)
{
    const struct prompt *p;
    struct prompt_args a = {NULL, NULL};
    struct json_object *messages, *message, *content;
    struct svc_ctx c;
    struct error err;
    struct buf text;
    const char *name;
    int rc = -1;
    error_init(&err);
    buf_init(&text, 16 * 1024 * 1024);
    if (rpc_param_str(params, "name", 256, &name, f))
        goto out;
    if (!name) {
        rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST, "'name' is required");
        goto out;
    }
    if (!(p = prompt_named(name))) {
        rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST, "Unknown prompt: %s", name);
        goto out;
    }
    if (req->who.role < p->role) {
        rpc_fail_set(f, RPC_INVALID_PARAMS, E_FORBIDDEN,
                     "The %s role may not get %s (editors and admins may)",
                     role_name(req->who.role), p->name);
        goto out;
    }
    if (args_checked(p, params, &a, f))
        goto out;
    if (!a.lang)
        a.lang = ui_language(req->accept_language);
    http_svc_ctx(req, &c);
    if (p->build(&c, &a, &text, &err)) {
        rpc_fail_from(f, &err, RPC_INVALID_PARAMS);
        goto out;
    }
    content = json_object_new_object();
    json_object_object_add(content, "type", json_object_new_string("text"));
    json_object_object_add(content, "text", json_object_new_string_len(text.data, (int)text.len));
    message = json_object_new_object();
    json_object_object_add(message, "role", json_object_new_string("user"));
    json_object_object_add(message, "content", content);
    messages = json_object_new_array();
    json_object_array_add(messages, message);
    *result = json_object_new_object();
    json_object_object_add(
        *result, "description",
        json_object_new_string(strcmp(a.lang, "zh") == 0 ? p->description.zh : p->description.en));
    json_object_object_add(*result, "messages", messages);
    rc = 0;
out:
    json_object_put(a.values);
    error_release(&err);
    buf_release(&text);
    return rc;
}
