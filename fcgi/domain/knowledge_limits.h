/* knowledge_limits: the size limits of knowledge documents (docs/knowledge-files.md),
 * in Unicode characters, shared by the entry view and the file view. */
#ifndef KNOWHUB_KNOWLEDGE_LIMITS_H
#define KNOWHUB_KNOWLEDGE_LIMITS_H

#define LIMIT_RULE_DESCRIPTION 100
#define LIMIT_RULES_BODY 350
#define LIMIT_EXPERIENCES_BODY 2000

#define LIMIT_SCENARIO 2000   /* entry scenario */
#define LIMIT_TITLE 200       /* title */
#define LIMIT_TAGS 32         /* number of tags */
#define LIMIT_TAG 64          /* one tag */
#define LIMIT_URLS 32         /* number of source urls */
#define LIMIT_URL 2048        /* one url */
#define LIMIT_SHORT_TEXT 256  /* ids: agent_id, message_id, case_id ... */
#define LIMIT_CASE_TEXT 4000  /* a case's scenario or result, a feedback */
#define LIMIT_BATCH_ITEMS 100 /* feedback_list */

#endif
