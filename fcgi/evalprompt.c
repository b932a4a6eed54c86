/* evalprompt: the knowledge-evaluation prompt of seed 000, en and zh. */
#include "evalprompt.h"
#include "store.h"

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

void eval_prompt_entry(struct buf *out, const char *lang, const struct log_entry *e)
{
    (void)lang;
    buf_addf(out,
             "\n- knowledge_id: %s\n  task: %s\n  content: %s\n  injected_at_sequence: %ld\n"
             "  goal_id: %s\n",
             e->knowledge_id, e->task, e->content, e->injected_at_sequence, e->goal_id);
}

void eval_prompt_end(struct buf *out, const char *lang, long pending)
{
    if (pending == 0)
        buf_adds(out, zh(lang) ? "\n（没有待评估的知识）\n" : "\n(no knowledge is pending)\n");
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
