/* evalprompt: the knowledge-evaluation prompt of a trace, en and zh. */
#include "domain/evalprompt.h"
#include "domain/knowledge_limits.h"
#include "base/util.h"

#include <stdlib.h>

#include <string.h>

static int zh(const char *lang)
{
    return lang && strcmp(lang, "zh") == 0;
}

void eval_prompt_begin(struct buf *out, const char *lang, const char *task, const char *goal)
{
    if (zh(lang))
        buf_addf(out,
                 "你是知识评估助手。请评估以下知识在本次任务执行中的实际效果。\n\n"
                 "## 当前任务（Mission）\n%s\n\n## 当前 Goal\n%s\n\n## 待评估知识列表\n",
                 *task ? task : "（未记录）", goal && *goal ? goal : "（未指定）");
    else
        buf_addf(out,
                 "You are a knowledge evaluation assistant. Evaluate how the knowledge below "
                 "actually worked in this task's execution.\n\n"
                 "## Current task (Mission)\n%s\n\n## Current goal\n%s\n\n"
                 "## Knowledge to evaluate\n",
                 *task ? task : "(not recorded)", goal && *goal ? goal : "(not given)");
}

int eval_prompt_entry(struct buf *out, const char *lang, const struct eval_prompt_item *e)
{
    struct buf entry;
    size_t task_len = utf8_prefix(e->task, strlen(e->task), LIMIT_SCENARIO);
    char *task = xstrndup(e->task, task_len);
    int rc;
    (void)lang;
    buf_init(&entry, EVAL_PROMPT_ENTRY_BYTES);
    buf_addf(&entry, "\n- knowledge_id: %s\n  task: ", e->knowledge_id);
    buf_add_one_line(&entry, task);
    if (task_len < strlen(e->task))
        buf_adds(&entry, "…");
    buf_adds(&entry, "\n  content: ");
    /* Continuation lines of the content stay indented inside the entry. */
    for (const char *p = e->content; *p;) {
        size_t n = line_break_at(p);
        if (n) {
            buf_adds(&entry, "\n    ");
            p += (p[0] == '\r' && p[1] == '\n') ? 2 : n;
        } else {
            buf_addch(&entry, *p++);
        }
    }
    buf_addf(&entry, "\n  injected_at_sequence: %ld\n  goal_id: ", e->injected_at_sequence);
    buf_add_one_line(&entry, e->goal_id);
    buf_addch(&entry, '\n');
    rc = out->len + entry.len > EVAL_PROMPT_ENTRY_BYTES ? -1 : buf_add(out, entry.data, entry.len);
    buf_release(&entry);
    free(task);
    return rc;
}

void eval_prompt_end(struct buf *out, const char *lang, long included, long omitted)
{
    if (included == 0 && omitted == 0)
        buf_adds(out, zh(lang) ? "\n（没有待评估的知识）\n" : "\n(no knowledge is pending)\n");
    if (omitted > 0)
        buf_addf(out,
                 zh(lang) ? "\n（另有 %ld 条待评估的知识不在本提示中：先评估以上 %ld 条，"
                            "再重新获取提示。）\n"
                          : "\n(%ld more pending entries are not in this prompt: evaluate the "
                            "%ld above, then ask for the prompt again.)\n",
                 omitted, included);
    if (zh(lang))
        buf_adds(out, "\n## 评估维度\n"
                      "- 有用性（helpfulness）：知识是否对完成任务产生了实质帮助或负面作用\n"
                      "- 相关性（relevance）：知识的 task 是否与当前任务相关，执行中是否被用到\n\n"
                      "## 评估分类\n"
                      "- irrelevant：知识的 task 与当前任务无关\n"
                      "- unused：知识与任务相关，但执行过程中没有被使用\n"
                      "- helpful：知识对当前任务有实质帮助\n"
                      "- harmful：知识对当前任务产生了负面作用\n"
                      "- neutral：知识与任务相关但无明显影响\n\n"
                      "## 输出格式\n"
                      "直接输出 JSON，不要调用工具，每条知识一项：\n"
                      "```json\n"
                      "{\"evaluations\": [{\"knowledge_id\": \"knowledge-...\", "
                      "\"eval_status\": \"helpful\", \"reason\": \"1-2句评估理由\"}]}\n"
                      "```\n");
    else
        buf_adds(out,
                 "\n## Dimensions\n"
                 "- helpfulness: did the knowledge really help the task, or hurt it?\n"
                 "- relevance: is the knowledge's task related to the current task, and was it "
                 "used during the execution?\n\n"
                 "## Statuses\n"
                 "- irrelevant: the knowledge's task is unrelated to the current task\n"
                 "- unused: related to the task, but not used during the execution\n"
                 "- helpful: it substantially helped the current task\n"
                 "- harmful: it had a negative effect on the current task\n"
                 "- neutral: related to the task, without a clear effect\n\n"
                 "## Output format\n"
                 "Reply with JSON only, without calling a tool, one item per knowledge entry:\n"
                 "```json\n"
                 "{\"evaluations\": [{\"knowledge_id\": \"knowledge-...\", "
                 "\"eval_status\": \"helpful\", \"reason\": \"one or two sentences\"}]}\n"
                 "```\n");
}
