/* conflictitems (service): a contradiction queued as a conflict item, one
 * pending item per unordered pair. */
#include "service/conflictitems.h"
#include "base/util.h"
#include "domain/knowledge.h"
#include "service/ctx.h"
#include "store/store.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* Whether one side is an always-apply rule and the other an experience. */
static int conflict_against_rule(const struct knowledge *ka, const struct knowledge *kb)
{
    return (strcmp(ka->category, "experiences") == 0 && strcmp(kb->category, "rules") == 0 &&
            kb->always_apply) ||
           (strcmp(kb->category, "experiences") == 0 && strcmp(ka->category, "rules") == 0 &&
            ka->always_apply);
}

/* Insert the item of pair, sides ka and kb as read: a store status. */
static int item_insert(const struct svc_ctx *c, const struct conflict_pair *pair,
                       const struct knowledge *ka, const struct knowledge *kb, char *id)
{
    struct json_object *reasons = json_object_new_array();
    struct proposal p;
    char now[27];
    int rc;
    if (conflict_against_rule(ka, kb))
        json_object_array_add(reasons, json_object_new_string(CONFLICT_AGAINST_RULE));
    json_object_array_add(reasons, json_object_new_string(pair->reason ? pair->reason : ""));
    memset(&p, 0, sizeof p);
    id_random(id, "prop-");
    time_utc_iso_micro(now);
    p.id = id;
    p.space = (char *)c->space;
    p.kind = (char *)"conflict";
    p.state = (char *)"pending";
    p.write_path = (char *)pair->via;
    p.knowledge_id = ka->id;
    p.base_version = ka->version;
    p.category = ka->category;
    p.path = ka->path ? ka->path : (char *)"";
    p.document = ka->document ? ka->document : (char *)"";
    p.token_id = (char *)c->token_id;
    p.actor = (char *)(c->actor ? c->actor : "");
    p.agent_id = (char *)"";
    p.trace_id = (char *)"";
    p.source = (char *)pair->judge;
    p.reasons = (char *)json_object_to_json_string_ext(reasons, JSON_C_TO_STRING_PLAIN);
    p.created_at = now;
    rc = store_proposal_insert(c->st, &p);
    if (rc == STORE_OK)
        rc = store_proposal_member_add(c->st, c->space, id, kb->id, kb->version);
    json_object_put(reasons);
    return rc;
}

int conflict_item_queue(const struct svc_ctx *c, const struct conflict_pair *pair, char **id)
{
    struct knowledge ka, kb;
    char *found = NULL, *state = NULL, fresh[40];
    int rc, made = 0;
    *id = NULL;
    knowledge_init(&ka);
    knowledge_init(&kb);
    /* writers take turns (store_begin): the look and the insert are one step */
    if ((rc = store_begin(c->st)))
        return -rc;
    rc = store_conflict_item_find(c->st, c->space, pair->a, pair->b, &found, &state);
    if (rc == STORE_OK && (strcmp(state, "pending") == 0 || pair->keep_dismissed)) {
        *id = found;
        found = NULL;
        made = strcmp(state, "pending") == 0 ? 0 : 2;
    } else if (rc == STORE_OK || rc == STORE_NOT_FOUND) {
        rc = store_knowledge_get(c->st, c->space, pair->a, 0, &ka);
        if (rc == STORE_OK)
            rc = store_knowledge_get(c->st, c->space, pair->b, 0, &kb);
        if (rc == STORE_OK && (rc = item_insert(c, pair, &ka, &kb, fresh)) == STORE_OK) {
            *id = xstrdup(fresh);
            made = 1;
        }
    }
    if (rc == STORE_OK) {
        rc = store_commit(c->st);
    } else {
        store_rollback(c->st);
        rc = rc == STORE_NOT_FOUND ? STORE_OK : rc; /* a side went: nothing to queue */
    }
    if (rc != STORE_OK) {
        free(*id);
        *id = NULL;
        made = 0;
    }
    free(found);
    free(state);
    knowledge_release(&ka);
    knowledge_release(&kb);
    return rc ? -rc : made;
}
