/* mcp: the agent tools, each a row naming the service it runs. */
#include "mcp/mcp.h"
#include "mcp/tools_knowledge.h"
#include "mcp/tools_search.h"
#include "base/buf.h"
#include "http/http.h"
#include "base/jfield.h"
#include "service/auth.h"
#include "service/ctx.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum args_to { ARGS_QUERY, ARGS_BODY, ARGS_NONE };

/* A tool that calls its service directly: 0 with the REST answer's data in
 * *data (the caller's), else -1 with err set. */
typedef int (*tool_fn)(const struct svc_ctx *c, struct json_object *args, struct json_object **data,
                       struct error *err);

struct tool {
    const char *name;
    const char *description;
    const char *schema; /* JSON Schema of the arguments */
    enum args_to args;
    /* An argument REST names otherwise: "query:q" sends query as q, and
     * also accepts q itself (the older name) as an alias; NULL for none. */
    const char *renamed;
    enum role role; /* the least role, as the REST route's */
    tool_fn call;   /* the service it runs */
    /* The MCP annotations (docs/agents.md says why each): HINT_* bits. */
    unsigned hints;
    const char *output; /* JSON Schema of structuredContent (OUT) */
};

enum { HINT_READ_ONLY = 1, HINT_DESTRUCTIVE = 2, HINT_IDEMPOTENT = 4 };
#define READS (HINT_READ_ONLY | HINT_IDEMPOTENT)

#define TYPES "[\"tool\",\"usecase\",\"definition\",\"plan\",\"strategy\"]"
/* An entry's time (docs/conflicts.md "Time"), as knowledge_save and
 * knowledge_update take it. */
#define MOMENT(what)                                                                               \
    "{\"type\":\"string\",\"description\":\"" what                                                 \
    ": a date YYYY-MM-DD or a UTC time YYYY-MM-DDTHH:MM:SSZ; an empty string clears it\"}"
#define TIME_ARGS                                                                                  \
    "\"expires_at\":" MOMENT(                                                                      \
        "from then on the entry leaves the searches, the context and the "                         \
        "rules") ",\"review_after\":" MOMENT("from then on an editor is "                          \
                                             "asked to review it") ",\"pinned\":{\"type\":"        \
                                                                   "\"boolean\",\"description\":"  \
                                                                   "\"exempt from the ageing of "  \
                                                                   "evidence\"}"

/* Output schemas: a tool's structuredContent is its REST route's data
 * (docs/openapi.yaml has each shape in full; these say the fields a client
 * may rely on), or on isError {error: Error}. OUT(x) allows both, so the
 * SDK's validation passes an error result too. */
#define STR "{\"type\":\"string\"}"
#define INT "{\"type\":\"integer\",\"minimum\":0}"
#define BOOL "{\"type\":\"boolean\"}"
#define OBJ "{\"type\":\"object\"}"
#define CATEGORY "{\"enum\":[\"rules\",\"experiences\"]}"
#define LIST(item) "{\"type\":\"array\",\"items\":" item "}"
#define SHAPE(required, props)                                                                     \
    "{\"type\":\"object\",\"required\":[" required "],\"properties\":{" props "}}"
#define ERROR_RESULT                                                                               \
    SHAPE("\"error\"", "\"error\":" SHAPE("\"code\",\"message\",\"retry\"",                        \
                                          "\"code\":" STR ",\"message\":" STR ",\"retry\":" BOOL   \
                                          ",\"request_id\":" STR))
#define OUT(success) "{\"type\":\"object\",\"anyOf\":[" success "," ERROR_RESULT "]}"
#define ENTRY                                                                                      \
    SHAPE(                                                                                         \
        "\"id\",\"message_id\",\"title\",\"category\",\"path\",\"tags\",\"scenario\",\"content\"," \
        "\"source\",\"eval\",\"metrics\",\"status\",\"version\",\"created_at\",\"updated_at\"",    \
        "\"id\":" STR ",\"title\":" STR ",\"category\":" CATEGORY ",\"path\":" STR                 \
        ",\"tags\":" OBJ ",\"scenario\":" STR ",\"content\":" STR ",\"source\":" OBJ               \
        ",\"eval\":" OBJ ",\"metrics\":" OBJ ",\"message_id\":" STR ",\"status\":" STR             \
        ",\"created_at\":" STR ",\"updated_at\":" STR                                              \
        ",\"version\":{\"type\":\"integer\",\"minimum\":1}")
#define HIT                                                                                        \
    SHAPE("\"id\",\"title\",\"scenario\",\"content\",\"tags\",\"category\",\"path\",\"score\","    \
          "\"quality_score\",\"metrics\"",                                                         \
          "\"id\":" STR ",\"title\":" STR ",\"scenario\":" STR ",\"content\":" STR                 \
          ",\"tags\":" OBJ ",\"category\":" CATEGORY ",\"path\":" STR                              \
          ",\"score\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5},"                         \
          "\"quality_score\":{\"type\":\"number\"},\"metrics\":" OBJ                               \
          ",\"conflicts_with\":" LIST(STR) ",\"explain\":" OBJ)
/* explain=true's left out entries (docs/conflicts.md#explaintrue). */
#define LEFT_OUT                                                                                   \
    LIST(SHAPE("\"id\",\"title\",\"why\"",                                                         \
               "\"id\":" STR ",\"title\":" STR ",\"why\":{\"enum\":[\"weak\",\"min_score\","       \
               "\"negative_quality\",\"superseded\",\"expired\"]}"))
#define RULES LIST(SHAPE("\"title\",\"body\"", "\"title\":" STR ",\"body\":" STR))
/* Token budgets (service/context.h): the argument, and the answer's fields
 * when it was given. */
#define BUDGET_ARG "{\"type\":\"integer\",\"minimum\":100,\"maximum\":200000}"
#define BUDGET_FIELDS                                                                              \
    ",\"tokens_used\":" INT ",\"budget_tokens\":" INT ",\"over_budget\":" BOOL                     \
    ",\"omitted\":" LIST(SHAPE("\"id\",\"reason\"",                                                \
                               "\"id\":" STR ",\"reason\":{\"enum\":[\"budget\",\"duplicate\"]}"))
#define JOB                                                                                        \
    SHAPE("\"id\",\"kind\",\"status\",\"progress\",\"total\"",                                     \
          "\"id\":" STR ",\"kind\":{\"enum\":[\"slim\",\"embed\"]},\"status\":{\"enum\":["         \
          "\"queued\",\"running\",\"done\",\"failed\"]},\"progress\":" INT ",\"total\":" INT)
#define SLIM_PLAN                                                                                  \
    SHAPE("\"threshold\",\"entries\",\"groups\",\"dry_run\"",                                      \
          "\"threshold\":{\"type\":\"number\"},\"entries\":" INT                                   \
          ",\"groups\":{\"type\":\"array\"},"                                                      \
          "\"dry_run\":{\"const\":true}")

/* A typed link (docs/conflicts.md), and one of an entry's links. */
#define LINK_FIELDS                                                                                \
    "\"from\":" STR ",\"to\":" STR ",\"type\":{\"enum\":[\"supersedes\",\"contradicts\","          \
    "\"refines\",\"related\"]},\"actor\":" STR ",\"reason\":" STR ",\"created_at\":" STR
#define LINK                                                                                       \
    SHAPE("\"from\",\"to\",\"type\",\"actor\",\"reason\",\"created_at\",\"added\"",                \
          LINK_FIELDS ",\"added\":" BOOL)
#define LINK_ITEM                                                                                  \
    SHAPE("\"from\",\"to\",\"type\",\"direction\",\"other\"",                                      \
          LINK_FIELDS ",\"direction\":{\"enum\":[\"out\",\"in\"]},\"other\":" SHAPE(               \
              "\"id\",\"title\",\"path\",\"category\",\"status\"",                                 \
              "\"id\":" STR ",\"title\":" STR ",\"path\":" STR ",\"category\":" CATEGORY           \
              ",\"status\":" STR))

/* A write held for review (docs/review.md), and a proposal of the queue. */
#define HELD                                                                                       \
    SHAPE("\"status\",\"proposal_id\",\"kind\",\"category\",\"path\"",                             \
          "\"status\":{\"enum\":[\"pending\",\"quarantined\"]},\"proposal_id\":" STR               \
          ",\"kind\":{\"enum\":[\"create\",\"update\",\"delete\"]},\"category\":" CATEGORY         \
          ",\"path\":" STR)
#define PROPOSAL                                                                                   \
    SHAPE("\"id\",\"kind\",\"state\",\"category\",\"path\",\"provenance\",\"reasons\"",            \
          "\"id\":" STR ",\"kind\":{\"enum\":[\"create\",\"update\",\"delete\",\"rename\","        \
          "\"slim_merge\",\"conflict\"]},"                                                         \
          "\"state\":{\"enum\":[\"pending\",\"approved\",\"rejected\",\"quarantined\"]},"          \
          "\"category\":" CATEGORY ",\"path\":" STR ",\"provenance\":" OBJ                         \
          ",\"reasons\":" LIST(STR))

static const struct tool tools[] = {
    {"knowledge_search",
     "Search the knowledge base before you plan a goal. Two stages: relevant candidates "
     "(by words, by meaning when embeddings are configured, or an LLM router over them), then "
     "a quality rerank by score and by how often the knowledge helped or harmed before. "
     "Returns results [{id, title, scenario, content, tags, score, quality_score, metrics, "
     "found_by}]. Pass trace_id, goal_id and sequence to log what you "
     "inject into your task, so it can be evaluated later (trace_eval_prompt). With "
     "include_pending (and a trace_id) knowledge still under review comes after them, marked "
     "pending: true with its proposal_id; your verdicts on it decide whether it is approved.",
     "{\"type\":\"object\",\"properties\":{"
     "\"query\":{\"type\":\"string\",\"description\":\"what you are about to do\"},"
     "\"q\":{\"type\":\"string\",\"description\":\"the same as query (an alias kept for "
     "older agents); give one of them\"},"
     "\"top_k\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50,\"default\":5},"
     "\"min_score\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5,\"default\":3},"
     "\"tags_type\":{\"type\":\"array\",\"items\":{\"enum\":" TYPES "}},"
     "\"category\":{\"enum\":[\"rules\",\"experiences\"]},"
     "\"mode\":{\"enum\":[\"lexical\",\"vector\",\"hybrid\"],\"description\":\"how "
     "candidates are found: by words, by meaning, or both (the default when embeddings are "
     "configured)\"},"
     "\"trace_id\":{\"type\":\"string\"},\"goal_id\":{\"type\":\"string\"},"
     "\"sequence\":{\"type\":\"integer\",\"minimum\":0},"
     "\"include_pending\":{\"type\":\"boolean\",\"default\":false,\"description\":\"also "
     "knowledge still under review, marked pending (needs trace_id)\"},"
     "\"task\":{\"type\":\"string\",\"description\":\"the trace's mission, kept for its "
     "evaluation prompt\"},"
     "\"explain\":{\"type\":\"boolean\",\"default\":false,\"description\":\"each result "
     "says how relevant it was and what its quality was made of (aged evidence included); "
     "left_out lists what was not returned and why\"}},\"required\":[\"query\"]}",
     ARGS_QUERY, "query:q", ROLE_READER, tool_knowledge_search, 0,
     OUT(SHAPE("\"count\",\"results\",\"routing\"",
               "\"count\":" INT ",\"results\":" LIST(
                   HIT) ",\"routing\":" STR ",\"trace_id\":" STR ",\"logged\":" BOOL
                        ",\"pending_count\":" INT ",\"left_out\":" LEFT_OUT))},
    {"knowledge_save",
     "Save something you learned so later tasks can reuse it: the scenario (when it applies) "
     "and the content (the knowledge itself, at most 2000 characters), with its types. "
     "Returns the new entry with its id, or, when the space reviews agent writes, "
     "{status: \"pending\", proposal_id}: it is served once an editor approves it. Give an "
     "idempotency_key to retry safely: the same key and arguments again (within a day) "
     "return the entry already saved.",
     "{\"type\":\"object\",\"properties\":{"
     "\"scenario\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"},"
     "\"tags_type\":{\"type\":\"array\",\"items\":{\"enum\":" TYPES "}},"
     "\"urls\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
     "\"agent_id\":{\"type\":\"string\"},\"score\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"
     "5},"
     "\"message_id\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"},"
     "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
     "\"idempotency_key\":{\"type\":\"string\",\"maxLength\":128}," TIME_ARGS "},"
     "\"required\":[\"scenario\",\"content\"]}",
     ARGS_BODY, NULL, ROLE_AGENT, tool_knowledge_save, 0,
     OUT("{\"type\":\"object\",\"anyOf\":[" ENTRY "," HELD "]}")},
    {"knowledge_update",
     "Report on one entry: add_helpful_case or add_harmful_case ({case_id, scenario, result}; "
     "the same case_id counts once), update_score (1-5), or evolve_feedback (the server's LLM "
     "rewrites the content; without an LLM the feedback is only stored); or set its "
     "expires_at, review_after or pinned. Returns the entry.",
     "{\"type\":\"object\",\"properties\":{\"knowledge_id\":{\"type\":\"string\"},"
     "\"add_helpful_case\":{\"type\":\"object\"},\"add_harmful_case\":{\"type\":\"object\"},"
     "\"update_score\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5},"
     "\"evolve_feedback\":{\"type\":\"string\"}," TIME_ARGS "},\"required\":[\"knowledge_id\"]}",
     ARGS_BODY, NULL, ROLE_AGENT, tool_knowledge_update, HINT_DESTRUCTIVE, OUT(ENTRY)},
    {"knowledge_batch_update",
     "Report on several entries at once: feedback_list [{knowledge_id, is_effective, "
     "feedback?}]. Each item is applied on its own; results say which succeeded.",
     "{\"type\":\"object\",\"properties\":{\"feedback_list\":{\"type\":\"array\",\"items\":{"
     "\"type\":\"object\",\"properties\":{\"knowledge_id\":{\"type\":\"string\"},"
     "\"is_effective\":{\"type\":\"boolean\"},\"feedback\":{\"type\":\"string\"}},"
     "\"required\":[\"knowledge_id\",\"is_effective\"]}}},\"required\":[\"feedback_list\"]}",
     ARGS_BODY, NULL, ROLE_AGENT, tool_knowledge_batch_update, HINT_DESTRUCTIVE,
     OUT(SHAPE("\"results\",\"succeeded\",\"failed\"",
               "\"results\":" LIST(
                   SHAPE("\"index\",\"knowledge_id\",\"status\"",
                         "\"index\":" INT ",\"knowledge_id\":" STR
                         ",\"status\":{\"enum\":[\"success\",\"error\"]}")) ",\"succeeded\":" INT
                                                                            ",\"failed\":" INT))},
    {"knowledge_list", "List saved knowledge, newest first, with the total count.",
     "{\"type\":\"object\",\"properties\":{"
     "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"default\":10},"
     "\"offset\":{\"type\":\"integer\",\"minimum\":0},"
     "\"tags_type\":{\"type\":\"array\",\"items\":{\"enum\":" TYPES "}},"
     "\"category\":{\"enum\":[\"rules\",\"experiences\"]}}}",
     ARGS_QUERY, NULL, ROLE_READER, tool_knowledge_list, READS,
     OUT(SHAPE("\"items\",\"total\",\"limit\",\"offset\"",
               "\"items\":" LIST(ENTRY) ",\"total\":" INT ",\"limit\":" INT ",\"offset\":" INT))},
    {"knowledge_slim",
     "Merge near-duplicate knowledge (slim the base). Starts a job and returns it (id, "
     "status); dry_run returns the plan instead and changes nothing.",
     "{\"type\":\"object\",\"properties\":{\"dry_run\":{\"type\":\"boolean\"},"
     "\"threshold\":{\"type\":\"number\",\"minimum\":0.3,\"maximum\":1},"
     "\"model\":{\"type\":\"string\"}}}",
     ARGS_BODY, NULL, ROLE_AGENT, tool_knowledge_slim, HINT_DESTRUCTIVE,
     OUT("{\"type\":\"object\",\"anyOf\":[" JOB "," SLIM_PLAN "]}")},
    {"knowledge_read",
     "Read one knowledge file in full (Markdown with front matter) by category and path, "
     "as found by search or list.",
     "{\"type\":\"object\",\"properties\":{\"category\":{\"enum\":[\"rules\",\"experiences\"]},"
     "\"path\":{\"type\":\"string\"}},\"required\":[\"category\",\"path\"]}",
     ARGS_BODY, NULL, ROLE_READER, tool_knowledge_read, READS,
     OUT(SHAPE("\"content\",\"category\",\"path\",\"id\",\"version\",\"fields\",\"html\"",
               "\"content\":" STR ",\"category\":" CATEGORY ",\"path\":" STR ",\"id\":" STR
               ",\"version\":" INT ",\"fields\":" OBJ ",\"html\":" STR))},
    {"knowledge_rules",
     "The rules you must always follow, and a ready block to put in your system prompt. "
     "With budget_tokens the answer also says tokens_used and over_budget (the rules are "
     "never cut).",
     "{\"type\":\"object\",\"properties\":{\"budget_tokens\":" BUDGET_ARG "}}", ARGS_QUERY, NULL,
     ROLE_READER, tool_knowledge_rules, READS,
     OUT(SHAPE("\"rules\",\"block\"", "\"rules\":" RULES ",\"block\":" STR BUDGET_FIELDS))},
    {"knowledge_context",
     "Everything to load before answering a question: the mandatory rules block and the "
     "relevant knowledge block (table_names boost knowledge tagged with them). Give "
     "budget_tokens to bound it: the rules first, then knowledge in relevance order, whole "
     "while it fits, then as a one-line summary with a knowhub:// URI to read later; what "
     "did not fit is listed in omitted.",
     "{\"type\":\"object\",\"properties\":{\"question\":{\"type\":\"string\"},"
     "\"table_names\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
     "\"max_results\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50},"
     "\"budget_tokens\":" BUDGET_ARG "},"
     "\"required\":[\"question\"]}",
     ARGS_BODY, NULL, ROLE_READER, tool_knowledge_context, READS,
     OUT(SHAPE("\"rules_block\",\"rules\",\"knowledge\",\"knowledge_block\"",
               "\"rules_block\":" STR ",\"rules\":" RULES ",\"knowledge\":" LIST(SHAPE(
                   "\"category\",\"title\",\"path\",\"snippet\"",
                   "\"category\":" CATEGORY ",\"title\":" STR ",\"path\":" STR ",\"snippet\":" STR
                   ",\"id\":" STR ",\"form\":{\"enum\":[\"full\",\"summary\"]},"
                   "\"uri\":" STR)) ",\"knowledge_block\":" STR BUDGET_FIELDS))},
    {"trace_eval_prompt",
     "When a goal completes, before you compress your context, or when your task ends: get "
     "the prompt that asks you to judge the knowledge injected into this trace (irrelevant, "
     "unused, helpful, harmful, neutral). Answer it, then call trace_submit_evaluation.",
     "{\"type\":\"object\",\"properties\":{\"trace_id\":{\"type\":\"string\"},"
     "\"goal\":{\"type\":\"string\",\"description\":\"the current goal\"}},"
     "\"required\":[\"trace_id\"]}",
     ARGS_QUERY, NULL, ROLE_READER, tool_trace_eval_prompt, READS,
     OUT(SHAPE("\"trace_id\",\"language\",\"pending\",\"included\",\"omitted\",\"prompt\"",
               "\"trace_id\":" STR ",\"language\":{\"enum\":[\"en\",\"zh\"]},\"pending\":" INT
               ",\"included\":" INT ",\"omitted\":" INT ",\"prompt\":" STR))},
    {"trace_submit_evaluation",
     "Send your evaluation of the injected knowledge: output is your raw reply (JSON, a "
     "```json block, or prose around a JSON object), or give evaluations "
     "[{knowledge_id, eval_status, reason}]. trigger is goal_completion, compression or "
     "task_completion. Helpful and harmful verdicts move the knowledge up or down.",
     "{\"type\":\"object\",\"properties\":{\"trace_id\":{\"type\":\"string\"},"
     "\"trigger\":{\"enum\":[\"goal_completion\",\"compression\",\"task_completion\"]},"
     "\"output\":{\"type\":\"string\"},\"evaluations\":{\"type\":\"array\",\"items\":{"
     "\"type\":\"object\"}}},\"required\":[\"trace_id\",\"trigger\"]}",
     ARGS_BODY, NULL, ROLE_AGENT, tool_trace_submit_evaluation, 0,
     OUT(SHAPE("\"trace_id\",\"trigger\",\"strategy\",\"updated\",\"unmatched\"",
               "\"trace_id\":" STR ",\"trigger\":" STR ",\"strategy\":" STR
               ",\"updated\":" LIST(SHAPE(
                   "\"index\",\"knowledge_id\",\"eval_status\",\"counted\"",
                   "\"index\":" INT ",\"knowledge_id\":" STR ",\"eval_status\":" STR
                   ",\"counted\":" BOOL)) ",\"unmatched\":" LIST(SHAPE("\"index\",\"reason\"",
                                                                       "\"index\":" INT
                                                                       ",\"reason\":" STR))))},
    {"knowledge_review_list",
     "Editors: the space's review queue (docs/review.md), oldest first: proposals of writes "
     "held for review, each with its kind, state, provenance and reason codes. state filters "
     "(pending by default).",
     "{\"type\":\"object\",\"properties\":{"
     "\"state\":{\"enum\":[\"pending\",\"approved\",\"rejected\",\"quarantined\"]},"
     "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"default\":20},"
     "\"offset\":{\"type\":\"integer\",\"minimum\":0}}}",
     ARGS_BODY, NULL, ROLE_EDITOR, tool_knowledge_review_list, READS,
     OUT(SHAPE("\"items\",\"total\",\"limit\",\"offset\"",
               "\"items\":" LIST(PROPOSAL) ",\"total\":" INT ",\"limit\":" INT
                                           ",\"offset\":" INT))},
    {"knowledge_review_decide",
     "Editors: decide a proposal of the review queue: approve (written as proposed, you the "
     "actor), reject (give a reason), edit (approve your document instead) or merge (write "
     "your document into the entry into); a conflict item (kind conflict): supersede (keep: "
     "the id of the side that stays), narrow (documents: {side id: document}) or dismiss (give "
     "a reason). CONFLICT when another reviewer decided first, or "
     "when the entry changed since (decide with edit). Returns the decided proposal.",
     "{\"type\":\"object\",\"properties\":{\"proposal_id\":{\"type\":\"string\"},"
     "\"decision\":{\"enum\":[\"approve\",\"reject\",\"edit\",\"merge\",\"supersede\","
     "\"narrow\",\"dismiss\"]},\"keep\":{\"type\":\"string\"},"
     "\"documents\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
     "\"reason\":{\"type\":\"string\"},\"document\":{\"type\":\"string\"},"
     "\"into\":{\"type\":\"string\"}},\"required\":[\"proposal_id\",\"decision\"]}",
     ARGS_BODY, NULL, ROLE_EDITOR, tool_knowledge_review_decide, HINT_DESTRUCTIVE, OUT(PROPOSAL)},
    {"knowledge_link",
     "Typed links between entries (docs/conflicts.md): list an entry's links both ways, or add "
     "or remove one: supersedes (the entry replaces `to`, which leaves search and context; "
     "editors), contradicts (search results then name the other side in conflicts_with), "
     "refines or related. Adding a link that exists changes nothing; removing a supersedes "
     "link brings `to` back.",
     "{\"type\":\"object\",\"properties\":{"
     "\"action\":{\"enum\":[\"list\",\"add\",\"remove\"]},"
     "\"id\":{\"type\":\"string\",\"description\":\"the entry the link is from (list: "
     "whose links)\"},"
     "\"to\":{\"type\":\"string\",\"description\":\"the other entry (add, remove)\"},"
     "\"type\":{\"enum\":[\"supersedes\",\"contradicts\",\"refines\",\"related\"]},"
     "\"reason\":{\"type\":\"string\",\"maxLength\":2000}},"
     "\"required\":[\"action\",\"id\"]}",
     ARGS_BODY, NULL, ROLE_READER, tool_knowledge_link, HINT_DESTRUCTIVE | HINT_IDEMPOTENT,
     OUT("{\"type\":\"object\",\"anyOf\":[" SHAPE(
         "\"items\"", "\"items\":" LIST(LINK_ITEM)) "," LINK "," SHAPE("\"removed\"",
                                                                       "\"removed\":" BOOL) "]}")},
};
#define TOOL_COUNT (sizeof tools / sizeof tools[0])

/* The MCP annotations of a tool: its hints, and openWorldHint false (a
 * tool works on the caller's space only; see docs/agents.md for the LLM). */
static struct json_object *tool_annotations(const struct tool *t)
{
    struct json_object *a = json_object_new_object();
    json_object_object_add(a, "readOnlyHint",
                           json_object_new_boolean(!!(t->hints & HINT_READ_ONLY)));
    json_object_object_add(a, "destructiveHint",
                           json_object_new_boolean(!!(t->hints & HINT_DESTRUCTIVE)));
    json_object_object_add(a, "idempotentHint",
                           json_object_new_boolean(!!(t->hints & HINT_IDEMPOTENT)));
    json_object_object_add(a, "openWorldHint", json_object_new_boolean(0));
    return a;
}

struct json_object *mcp_tools_list(void)
{
    struct json_object *list = json_object_new_array();
    for (size_t i = 0; i < TOOL_COUNT; i++) {
        struct json_object *t = json_object_new_object();
        json_object_object_add(t, "name", json_object_new_string(tools[i].name));
        json_object_object_add(t, "description", json_object_new_string(tools[i].description));
        json_object_object_add(t, "inputSchema", json_parse_stored(tools[i].schema));
        json_object_object_add(t, "outputSchema", json_parse_stored(tools[i].output));
        json_object_object_add(t, "annotations", tool_annotations(&tools[i]));
        json_object_array_add(list, t);
    }
    return list;
}

struct json_object *mcp_tools_openai(void)
{
    struct json_object *list = json_object_new_array();
    for (size_t i = 0; i < TOOL_COUNT; i++) {
        struct json_object *t = json_object_new_object(), *f = json_object_new_object();
        json_object_object_add(f, "name", json_object_new_string(tools[i].name));
        json_object_object_add(f, "description", json_object_new_string(tools[i].description));
        json_object_object_add(f, "parameters", json_parse_stored(tools[i].schema));
        json_object_object_add(t, "type", json_object_new_string("function"));
        json_object_object_add(t, "function", f);
        json_object_array_add(list, t);
    }
    return list;
}

static struct json_object *text_content(const char *text)
{
    struct json_object *list = json_object_new_array(), *c = json_object_new_object();
    json_object_object_add(c, "type", json_object_new_string("text"));
    json_object_object_add(c, "text", json_object_new_string(text));
    json_object_array_add(list, c);
    return list;
}

/* A tool result with isError: the REST error's shape (error_json) and the
 * request id, as REST would answer. */
static struct json_object *tool_error_of(const struct request *req, const struct error *e)
{
    struct json_object *r = json_object_new_object(), *err = error_json(e), *sc, *code, *message;
    struct buf text;
    buf_init(&text, 8192);
    json_object_object_get_ex(err, "code", &code);
    json_object_object_get_ex(err, "message", &message);
    buf_addf(&text, "%s: %s", json_object_get_string(code), json_object_get_string(message));
    json_object_object_add(err, "request_id",
                           json_object_new_string(req->request_id ? req->request_id : ""));
    sc = json_object_new_object();
    json_object_object_add(sc, "error", err);
    json_object_object_add(r, "content", text_content(text.data));
    json_object_object_add(r, "structuredContent", sc);
    json_object_object_add(r, "isError", json_object_new_boolean(1));
    buf_release(&text);
    return r;
}

static struct json_object *tool_error(const struct request *req, const char *code, const char *fmt,
                                      ...) __attribute__((format(printf, 3, 4)));

static struct json_object *tool_error(const struct request *req, const char *code, const char *fmt,
                                      ...)
{
    struct json_object *r;
    struct error e;
    struct buf message;
    va_list ap;
    buf_init(&message, 4096);
    va_start(ap, fmt);
    if (buf_vaddf(&message, fmt, ap))
        buf_adds(&message, code);
    va_end(ap);
    error_init(&e);
    error_text(&e, code, NULL, message.data);
    r = tool_error_of(req, &e);
    error_release(&e);
    buf_release(&message);
    return r;
}

/* Does v have the JSON type a schema property asks for? `what` is how to
 * say it in an error. Enums are strings here; their values are REST's to
 * check. */
static int type_matches(struct json_object *prop, struct json_object *v, const char **what)
{
    struct json_object *type = NULL, *items = NULL;
    const char *t;
    json_object_object_get_ex(prop, "type", &type);
    t = type ? json_object_get_string(type) : "string"; /* {"enum": [...]}: strings */
    if (strcmp(t, "string") == 0) {
        *what = "a string";
        return json_object_is_type(v, json_type_string);
    }
    if (strcmp(t, "integer") == 0) {
        *what = "an integer";
        return json_object_is_type(v, json_type_int);
    }
    if (strcmp(t, "number") == 0) {
        *what = "a number";
        return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
    }
    if (strcmp(t, "boolean") == 0) {
        *what = "true or false";
        return json_object_is_type(v, json_type_boolean);
    }
    if (strcmp(t, "object") == 0) {
        *what = "an object";
        return json_object_is_type(v, json_type_object);
    }
    /* an array: of strings (or enum values), or of objects */
    json_object_object_get_ex(prop, "items", &items);
    if (items && json_object_object_get_ex(items, "type", &type) &&
        strcmp(json_object_get_string(type), "object") == 0) {
        *what = "a list of objects";
        t = "object";
    } else {
        *what = "a list of strings";
        t = "string";
    }
    if (!json_object_is_type(v, json_type_array))
        return 0;
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        struct json_object *e = json_object_array_get_idx(v, i);
        if (!json_object_is_type(e, *t == 'o' ? json_type_object : json_type_string))
            return 0;
    }
    return 1;
}

/* The enum of a property (or of its items) that v, a string or a list of
 * strings, is outside of; NULL when v is within it or there is none. A list
 * item "tool,plan" would otherwise reach REST as two values. */
static struct json_object *outside_enum(struct json_object *prop, struct json_object *v)
{
    struct json_object *values = NULL, *items = NULL;
    size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
    if (json_object_is_type(v, json_type_array)) {
        if (!json_object_object_get_ex(prop, "items", &items) ||
            !json_object_object_get_ex(items, "enum", &values))
            return NULL;
    } else if (!json_object_object_get_ex(prop, "enum", &values)) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        struct json_object *e = items ? json_object_array_get_idx(v, i) : v;
        int found = 0;
        for (size_t j = 0; !found && j < json_object_array_length(values); j++)
            found = json_object_equal(e, json_object_array_get_idx(values, j));
        if (!found)
            return values;
    }
    return NULL;
}

/* The arguments as the tool's schema names them: the alias of a renamed
 * argument (knowledge_search's q) becomes its name (query), and every
 * argument is checked against the schema's type, so an array is never
 * joined into a string nor an object sent where REST reads a string. A new
 * object (caller puts it) in *out, or an error result. */
static struct json_object *arguments_checked(const struct request *req, const struct tool *t,
                                             struct json_object *arguments,
                                             struct json_object **out)
{
    struct json_object *schema = json_parse_stored(t->schema), *props = NULL, *list, *v;
    struct json_object *args = json_object_new_object(), *error = NULL;
    char name[64] = "", alias[64] = "";
    *out = NULL;
    json_object_object_get_ex(schema, "properties", &props);
    if (t->renamed) {
        const char *colon = strchr(t->renamed, ':');
        snprintf(name, sizeof name, "%.*s", (int)(colon - t->renamed), t->renamed);
        snprintf(alias, sizeof alias, "%s", colon + 1);
    }
    if (arguments) {
        json_object_object_foreach(arguments, key, val)
        {
            struct json_object *prop = NULL, *same, *values;
            const char *what;
            if (!val || json_object_is_type(val, json_type_null))
                continue; /* null is absent */
            if (*alias && strcmp(key, alias) == 0) {
                if (json_object_object_get_ex(arguments, name, &same) && same &&
                    !json_object_equal(same, val)) {
                    error =
                        tool_error(req, E_INVALID_REQUEST,
                                   "'%s' and its alias '%s' differ: give one of them", name, alias);
                    goto out;
                }
            }
            if (json_object_object_get_ex(props, key, &prop) && !type_matches(prop, val, &what)) {
                error = tool_error(req, E_INVALID_REQUEST, "'%s' must be %s", key, what);
                goto out;
            }
            if (prop && (values = outside_enum(prop, val))) {
                struct buf allowed;
                buf_init(&allowed, 4096);
                for (size_t i = 0; i < json_object_array_length(values); i++)
                    buf_addf(&allowed, "%s%s", i ? ", " : "",
                             json_object_get_string(json_object_array_get_idx(values, i)));
                error =
                    tool_error(req, E_INVALID_REQUEST, "'%s' must be %s: %s", key,
                               json_object_is_type(val, json_type_array) ? "a list of" : "one of",
                               allowed.data);
                buf_release(&allowed);
                goto out;
            }
            /* An argument the schema does not know goes to REST as it is:
             * a query has no place for a list or an object. */
            if (!prop && t->args == ARGS_QUERY && !json_object_is_type(val, json_type_string) &&
                !json_object_is_type(val, json_type_int) &&
                !json_object_is_type(val, json_type_boolean)) {
                error =
                    tool_error(req, E_INVALID_REQUEST,
                               "'%s' is not an argument of %s (or must be a string)", key, t->name);
                goto out;
            }
            if (*alias && strcmp(key, alias) == 0)
                key = name;
            json_object_object_add(args, key, json_object_get(val));
        }
    }
    if (json_object_object_get_ex(schema, "required", &list)) {
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            const char *key = json_object_get_string(json_object_array_get_idx(list, i));
            if (!json_object_object_get_ex(args, key, &v)) {
                error = tool_error(req, E_INVALID_REQUEST, "'%s' is required", key);
                goto out;
            }
        }
    }
    *out = args;
    args = NULL;
out:
    json_object_put(args);
    json_object_put(schema);
    return error;
}

/* The MCP result of a success: the data as text and as structuredContent
 * (an object; other data is wrapped), or NULL with *too_large set when it
 * is over max_bytes. data is borrowed. */
/* The text of a budgeted answer (it has budget_tokens): the blocks the
 * budget counted — /rules' block, or /context's rules and knowledge blocks —
 * and a line naming what was left out, not the JSON again, which would be
 * about 2.3 times the budget; structuredContent keeps every field. NULL for
 * an answer without a budget. */
static char *budgeted_text(struct json_object *data)
{
    struct json_object *omitted = NULL;
    const char *block = jf_member_str(data, "block"), *rules = jf_member_str(data, "rules_block");
    const char *knowledge = jf_member_str(data, "knowledge_block");
    struct buf b;
    size_t n;
    if (!json_object_is_type(data, json_type_object) ||
        !json_object_object_get_ex(data, "budget_tokens", NULL))
        return NULL;
    buf_init(&b, 64 * 1024 * 1024);
    buf_adds(&b, block ? block : rules ? rules : "");
    if (knowledge && *knowledge) {
        buf_addch(&b, '\n');
        buf_adds(&b, knowledge);
    }
    json_object_object_get_ex(data, "omitted", &omitted);
    n = omitted ? json_object_array_length(omitted) : 0;
    if (n)
        buf_addf(&b,
                 "\n(Left out for the budget or as duplicates: %zu; their ids are in "
                 "structuredContent.omitted.)\n",
                 n);
    if (buf_failed(&b)) {
        buf_release(&b);
        return NULL;
    }
    return buf_detach(&b, NULL);
}

static struct json_object *tool_result(struct json_object *data, size_t max_bytes, int *too_large)
{
    struct json_object *result = json_object_new_object(), *sc;
    char *text = budgeted_text(data);
    json_object_object_add(result, "content", text_content(text ? text : json_text(data)));
    free(text);
    if (json_object_is_type(data, json_type_object)) {
        sc = json_object_get(data);
    } else {
        sc = json_object_new_object();
        json_object_object_add(sc, "data", json_object_get(data));
    }
    json_object_object_add(result, "structuredContent", sc);
    /* The text holds the data a second time, escaped: the whole result counts. */
    if (strlen(json_text(result)) > max_bytes) {
        json_object_put(result);
        *too_large = 1;
        return NULL;
    }
    return result;
}

/* Run a tool that calls its service, as the caller of req. */
static struct json_object *tool_call_service(struct request *req, const struct tool *t,
                                             struct json_object *args, size_t max_bytes,
                                             int *too_large)
{
    struct svc_ctx c;
    struct error err;
    struct json_object *data = NULL, *result;
    if (req->who.role < t->role)
        return tool_error(req, E_FORBIDDEN, "The %s role may not do this",
                          role_name(req->who.role));
    http_svc_ctx(req, &c);
    error_init(&err);
    if (t->call(&c, args, &data, &err))
        result = tool_error_of(req, &err);
    else
        result = tool_result(data, max_bytes, too_large);
    json_object_put(data);
    error_release(&err);
    return result;
}

struct json_object *mcp_tools_call(struct request *req, const char *name,
                                   struct json_object *arguments, size_t max_bytes, int *too_large)
{
    const struct tool *t = NULL;
    struct json_object *args = NULL, *result;

    *too_large = 0;
    for (size_t i = 0; i < TOOL_COUNT; i++)
        if (strcmp(tools[i].name, name) == 0)
            t = &tools[i];
    if (!t)
        return NULL;
    if (arguments && !json_object_is_type(arguments, json_type_object))
        return tool_error(req, E_INVALID_REQUEST, "'arguments' must be an object");
    if ((result = arguments_checked(req, t, arguments, &args)))
        return result;
    result = tool_call_service(req, t, args, max_bytes, too_large);
    json_object_put(args);
    return result;
}
