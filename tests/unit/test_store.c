/* test_store: the SQLite store on ":memory:" (and one temporary file):
 * migrations, tokens, knowledge entries (insert, get, list, cases, score,
 * soft delete, revisions, revert), nested transactions and space scoping. */
#include "harness.h"
#include "domain/knowledge.h"
#include "service/knowledge.h"
#include "store/store.h"
#include "base/util.h"

#include <sodium.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ACTOR "token:test:unit"

/* ---- helpers ---- */

/* Remove the database path (k.db) in the temporary dir, its WAL files and dir. */
static void remove_db(const char *dir, const char *path)
{
    char f[160];
    snprintf(f, sizeof f, "%s/k.db-wal", dir);
    unlink(f);
    snprintf(f, sizeof f, "%s/k.db-shm", dir);
    unlink(f);
    unlink(path);
    rmdir(dir);
}

/* Insert an entry with the given keys (other fields filled in); a store status. */
static int insert_entry(struct store *st, const char *space, const char *id, const char *category,
                        const char *path, unsigned types, int *id_taken)
{
    struct knowledge k;
    int rc, taken = -1;
    knowledge_init(&k);
    k.id = xstrdup(id);
    k.space = xstrdup(space);
    k.category = xstrdup(category);
    k.path = xstrdup(path);
    k.title = xstrdup(id);
    k.content = xstrdup("body");
    k.scenario = xstrdup("when testing");
    k.tags = xstrdup("[\"t1\",\"t2\"]");
    k.types = types;
    k.score = 3;
    k.always_apply = 1;
    rc = store_knowledge_insert(st, &k, ACTOR, &taken);
    if (id_taken)
        *id_taken = taken;
    knowledge_release(&k);
    return rc;
}

/* 1 when the entry id is active in space. */
static int active(struct store *st, const char *space, const char *id)
{
    struct knowledge k;
    int rc = store_knowledge_get(st, space, id, 0, &k);
    knowledge_release(&k);
    return rc == STORE_OK;
}

/* The version of an entry in any status, -1 when absent. */
static long version_of(struct store *st, const char *space, const char *id)
{
    struct knowledge k;
    long v = -1;
    if (store_knowledge_get(st, space, id, 1, &k) == STORE_OK)
        v = k.version;
    knowledge_release(&k);
    return v;
}

#define MAX_IDS 32
struct ids {
    char *id[MAX_IDS];
    size_t n;
    size_t stop_after; /* 0: never */
};

static void ids_release(struct ids *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->id[i]);
    memset(l, 0, sizeof *l);
}

static int collect_entry(const struct knowledge *k, void *ctx)
{
    struct ids *l = ctx;
    if (l->n < MAX_IDS)
        l->id[l->n++] = xstrdup(k->id);
    return l->stop_after && l->n >= l->stop_after;
}

static int collect_token(const struct token_record *t, void *ctx)
{
    struct ids *l = ctx;
    if (l->n < MAX_IDS)
        l->id[l->n++] = xstrdup(t->id);
    return l->stop_after && l->n >= l->stop_after;
}

static int collect_case(const struct knowledge_case *c, void *ctx)
{
    struct ids *l = ctx;
    if (l->n < MAX_IDS)
        l->id[l->n++] = xstrdup(c->case_id);
    return 0;
}

/* List an entry space with a filter; the ids in l, the total in *total. */
static int list(struct store *st, const char *space, unsigned types, const char *category,
                long limit, long offset, struct ids *l, long *total)
{
    struct knowledge_filter f = {types, category, limit, offset};
    ids_release(l);
    *total = -1;
    return store_knowledge_list(st, space, &f, collect_entry, l, total);
}

/* Revisions, newest first. */
struct revs {
    long version[MAX_IDS];
    char *reason[MAX_IDS];
    struct json_object *doc[MAX_IDS];
    size_t n;
};

static int collect_revision(const struct knowledge_revision *r, void *ctx)
{
    struct revs *v = ctx;
    if (v->n < MAX_IDS) {
        v->version[v->n] = r->version;
        v->reason[v->n] = xstrdup(r->reason);
        v->doc[v->n] = json_tokener_parse(r->document);
        v->n++;
    }
    return 0;
}

static void revs_release(struct revs *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free(v->reason[i]);
        json_object_put(v->doc[i]);
    }
    memset(v, 0, sizeof *v);
}

static int revisions(struct store *st, const char *space, const char *id, struct revs *v)
{
    revs_release(v);
    return store_knowledge_revisions_each(st, space, id, collect_revision, v);
}

/* A member of a revision document as text ("null" for JSON null, NULL when absent). */
static const char *doc_field(struct json_object *doc, const char *key)
{
    struct json_object *v;
    if (!doc || !json_object_object_get_ex(doc, key, &v))
        return NULL;
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                    : json_object_to_json_string(v);
}

/* ---- migrations ---- */

static void test_open_and_migrations(void)
{
    {
        /* Every statement of the store prepares against the current schema. */
        struct store *all = NULL;
        const char *failed = NULL;
        CHECK_INT(store_open(":memory:", &all), STORE_OK);
        int rc = store_prepare_all(all, &failed);
        if (rc)
            fprintf(stderr, "statement failed: %s\n%s\n", failed, store_errmsg(all));
        CHECK_INT(rc, STORE_OK);
        store_close(all);
    }

    struct store *st = NULL;
    char dir[] = "/tmp/knowhub-test-store-XXXXXX", path[128];
    int version;
    sqlite3 *db;

    CHECK_INT(store_open(":memory:", &st), STORE_OK);
    CHECK(st != NULL);
    version = store_schema_version(st);
    CHECK(version >= 1);
    CHECK_INT(store_token_count(st), 0);
    store_close(st);
    store_close(NULL); /* allowed */

    /* A file database: migrations run once, data survives a reopen. */
    if (!CHECK(mkdtemp(dir) != NULL))
        return;
    snprintf(path, sizeof path, "%s/k.db", dir);
    CHECK_INT(store_open(path, &st), STORE_OK);
    CHECK_INT(store_schema_version(st), version);
    CHECK_INT(insert_entry(st, "s", "persist-1", "rules", "p.md", 0, NULL), STORE_OK);
    store_close(st);
    st = NULL;
    CHECK_INT(store_open(path, &st), STORE_OK);
    CHECK_INT(store_schema_version(st), version);
    CHECK(st && active(st, "s", "persist-1"));
    store_close(st);

    /* A database from a newer knowhub is refused, not downgraded. */
    if (CHECK(sqlite3_open(path, &db) == SQLITE_OK)) {
        CHECK(sqlite3_exec(db, "PRAGMA user_version = 9999", NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(db);
    }
    st = (struct store *)1;
    CHECK(store_open(path, &st) != STORE_OK);
    CHECK(st == NULL);
    store_close(st);

    /* A path that cannot be opened fails cleanly. */
    st = (struct store *)1;
    CHECK(store_open("/nonexistent-dir-knowhub/x/y.db", &st) != STORE_OK);
    CHECK(st == NULL);

    remove_db(dir, path);
}

/* ---- tokens ---- */

static void test_tokens(struct store *st)
{
    unsigned char h1[32], h2[32];
    struct token_record t;
    struct ids l = {0};

    memset(h1, 0x11, sizeof h1);
    memset(h2, 0x22, sizeof h2);
    CHECK_INT(store_token_count(st), 0);
    CHECK_INT(
        store_token_insert(st, "aaaaaaaaaaaaaaaa", h1, "tok-space", "admin", "ops", "operator"),
        STORE_OK);
    CHECK_INT(
        store_token_insert(st, "bbbbbbbbbbbbbbbb", h2, "tok-space", "reader", NULL, "operator"),
        STORE_OK);
    CHECK_INT(store_token_count(st), 2);
    /* duplicate id */
    CHECK_INT(store_token_insert(st, "aaaaaaaaaaaaaaaa", h2, "other", "reader", "", "operator"),
              STORE_CONFLICT);
    CHECK_INT(store_token_count(st), 2);

    CHECK_INT(store_token_get(st, "aaaaaaaaaaaaaaaa", &t), STORE_OK);
    CHECK_STR(t.id, "aaaaaaaaaaaaaaaa");
    CHECK_STR(t.space, "tok-space");
    CHECK_STR(t.role, "admin");
    CHECK_STR(t.label, "ops");
    CHECK(t.created_at != NULL && strlen(t.created_at) == 19);
    CHECK(t.last_used_at == NULL);
    CHECK(t.revoked_at == NULL);
    CHECK(memcmp(t.hash, h1, 32) == 0);
    store_token_record_release(&t);
    CHECK(t.id == NULL);

    CHECK_INT(store_token_get(st, "bbbbbbbbbbbbbbbb", &t), STORE_OK);
    CHECK_STR(t.label, ""); /* NULL label stored as empty */
    CHECK(memcmp(t.hash, h2, 32) == 0);
    store_token_record_release(&t);

    CHECK_INT(store_token_get(st, "cccccccccccccccc", &t), STORE_NOT_FOUND);
    CHECK(t.id == NULL);
    store_token_record_release(&t);

    /* touch records use */
    CHECK_INT(store_token_touch(st, "aaaaaaaaaaaaaaaa"), STORE_OK);
    CHECK_INT(store_token_get(st, "aaaaaaaaaaaaaaaa", &t), STORE_OK);
    CHECK(t.last_used_at != NULL && strlen(t.last_used_at) == 19);
    store_token_record_release(&t);

    /* each: oldest first, with early stop */
    CHECK_INT(store_token_each(st, collect_token, &l), STORE_OK);
    CHECK_INT(l.n, 2);
    if (l.n == 2) {
        CHECK_STR(l.id[0], "aaaaaaaaaaaaaaaa");
        CHECK_STR(l.id[1], "bbbbbbbbbbbbbbbb");
    }
    ids_release(&l);
    l.stop_after = 1;
    CHECK_INT(store_token_each(st, collect_token, &l), STORE_OK);
    CHECK_INT(l.n, 1);
    ids_release(&l);

    /* revoke: another space's token is NOT_FOUND there and stays valid */
    CHECK_INT(store_token_revoke(st, "bbbbbbbbbbbbbbbb", "other", "token:x"), STORE_NOT_FOUND);
    CHECK_INT(store_token_get(st, "bbbbbbbbbbbbbbbb", &t), STORE_OK);
    CHECK(t.revoked_at == NULL);
    store_token_record_release(&t);
    /* revoke: once, then NOT_FOUND; unknown is NOT_FOUND */
    CHECK_INT(store_token_revoke(st, "bbbbbbbbbbbbbbbb", "tok-space", "operator"), STORE_OK);
    CHECK_INT(store_token_revoke(st, "bbbbbbbbbbbbbbbb", NULL, "operator"), STORE_NOT_FOUND);
    CHECK_INT(store_token_revoke(st, "cccccccccccccccc", NULL, "operator"), STORE_NOT_FOUND);
    CHECK_INT(store_token_get(st, "bbbbbbbbbbbbbbbb", &t), STORE_OK);
    CHECK(t.revoked_at != NULL);
    store_token_record_release(&t);
    CHECK_INT(store_token_get(st, "aaaaaaaaaaaaaaaa", &t), STORE_OK);
    CHECK(t.revoked_at == NULL); /* the other token is untouched */
    store_token_record_release(&t);
    /* revoked tokens are still counted and listed */
    CHECK_INT(store_token_count(st), 2);
    CHECK_INT(store_token_each(st, collect_token, &l), STORE_OK);
    CHECK_INT(l.n, 2);
    ids_release(&l);

    CHECK_INT(store_space_ensure(st, "tok-space"), STORE_OK); /* idempotent */
    CHECK_INT(store_space_ensure(st, "new-space"), STORE_OK);
}

/* ---- knowledge: insert, get, conflicts ---- */

static void test_insert_get(struct store *st)
{
    struct knowledge k;
    int taken = -1;

    CHECK_INT(insert_entry(st, "A", "k-1", "experiences", "dir/one.md", KTYPE_TOOL, &taken),
              STORE_OK);
    CHECK_INT(taken, 0);
    CHECK_INT(store_knowledge_get(st, "A", "k-1", 0, &k), STORE_OK);
    CHECK_STR(k.id, "k-1");
    CHECK_STR(k.space, "A");
    CHECK_STR(k.category, "experiences");
    CHECK_STR(k.path, "dir/one.md");
    CHECK_STR(k.title, "k-1");
    CHECK_STR(k.content, "body");
    CHECK_STR(k.scenario, "when testing");
    CHECK_STR(k.tags, "[\"t1\",\"t2\"]");
    CHECK_STR(k.urls, "[]"); /* defaults for what was not given */
    CHECK_STR(k.description, "");
    CHECK_STR(k.source, "manual");
    CHECK_INT(k.types, KTYPE_TOOL);
    CHECK_INT(k.score, 3);
    CHECK_INT(k.always_apply, 1);
    CHECK_INT(k.helpful, 0);
    CHECK_INT(k.harmful, 0);
    CHECK_STR(k.status, "active");
    CHECK(k.merged_into == NULL);
    CHECK_INT(k.version, 1);
    CHECK(k.created_at && strlen(k.created_at) == 19);
    CHECK_STR(k.updated_at, k.created_at);
    knowledge_release(&k);
    CHECK(k.id == NULL);

    CHECK_INT(store_knowledge_get(st, "A", "nope", 0, &k), STORE_NOT_FOUND);
    CHECK(k.id == NULL);
    knowledge_release(&k);
    CHECK_INT(store_knowledge_get(st, "A", "nope", 1, &k), STORE_NOT_FOUND);
    knowledge_release(&k);

    /* duplicate id: CONFLICT, id_taken = 1, whatever the space and path */
    taken = -1;
    CHECK_INT(insert_entry(st, "A", "k-1", "experiences", "other.md", 0, &taken), STORE_CONFLICT);
    CHECK_INT(taken, 1);
    taken = -1;
    CHECK_INT(insert_entry(st, "B", "k-1", "rules", "x.md", 0, &taken), STORE_CONFLICT);
    CHECK_INT(taken, 1);
    /* duplicate active path: CONFLICT, id_taken = 0 */
    taken = -1;
    CHECK_INT(insert_entry(st, "A", "k-2", "experiences", "dir/one.md", 0, &taken), STORE_CONFLICT);
    CHECK_INT(taken, 0);
    CHECK(!active(st, "A", "k-2"));
    CHECK_INT(version_of(st, "A", "k-2"), -1); /* nothing half-written */
    /* the same path in another category or another space is free */
    CHECK_INT(insert_entry(st, "A", "k-3", "rules", "dir/one.md", 0, &taken), STORE_OK);
    CHECK_INT(insert_entry(st, "B", "k-4", "experiences", "dir/one.md", 0, &taken), STORE_OK);
    /* after a delete the path is free again */
    CHECK_INT(store_knowledge_delete(st, "A", "k-1", ACTOR), STORE_OK);
    taken = -1;
    CHECK_INT(insert_entry(st, "A", "k-2", "experiences", "dir/one.md", 0, &taken), STORE_OK);
    CHECK_INT(taken, 0);
    CHECK(active(st, "A", "k-2"));
}

/* ---- list ---- */

static void test_list(struct store *st)
{
    struct ids l = {0};
    long total;

    /* In insertion order: L1 .. L6 (L6 newest). */
    CHECK_INT(insert_entry(st, "L", "L1", "experiences", "1.md", KTYPE_TOOL, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "L", "L2", "rules", "2.md", KTYPE_PLAN, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "L", "L3", "experiences", "3.md", KTYPE_TOOL | KTYPE_PLAN, NULL),
              STORE_OK);
    CHECK_INT(insert_entry(st, "L", "L4", "experiences", "4.md", 0, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "L", "L5", "rules", "5.md", KTYPE_STRATEGY, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "L", "L6", "experiences", "6.md", KTYPE_DEFINITION, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "other", "O1", "experiences", "1.md", KTYPE_TOOL, NULL), STORE_OK);

    /* all, newest first */
    CHECK_INT(list(st, "L", 0, NULL, 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 6);
    CHECK_INT(l.n, 6);
    if (l.n == 6) {
        CHECK_STR(l.id[0], "L6");
        CHECK_STR(l.id[1], "L5");
        CHECK_STR(l.id[5], "L1");
    }
    /* limit and offset page; total counts every match */
    CHECK_INT(list(st, "L", 0, NULL, 2, 1, &l, &total), STORE_OK);
    CHECK_INT(total, 6);
    CHECK_INT(l.n, 2);
    if (l.n == 2) {
        CHECK_STR(l.id[0], "L5");
        CHECK_STR(l.id[1], "L4");
    }
    CHECK_INT(list(st, "L", 0, NULL, 10, 6, &l, &total), STORE_OK);
    CHECK_INT(total, 6);
    CHECK_INT(l.n, 0);
    CHECK_INT(list(st, "L", 0, NULL, 10, 5, &l, &total), STORE_OK);
    CHECK_INT(l.n, 1);
    /* type bitmask: any of the given types */
    CHECK_INT(list(st, "L", KTYPE_TOOL, NULL, 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 2);
    CHECK_INT(l.n, 2);
    if (l.n == 2) {
        CHECK_STR(l.id[0], "L3");
        CHECK_STR(l.id[1], "L1");
    }
    CHECK_INT(list(st, "L", KTYPE_PLAN | KTYPE_STRATEGY, NULL, 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 3); /* L2, L3, L5 */
    CHECK_INT(list(st, "L", KTYPE_USECASE, NULL, 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 0);
    CHECK_INT(l.n, 0);
    /* category filter, alone and with types */
    CHECK_INT(list(st, "L", 0, "rules", 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 2);
    if (l.n == 2) {
        CHECK_STR(l.id[0], "L5");
        CHECK_STR(l.id[1], "L2");
    }
    CHECK_INT(list(st, "L", KTYPE_PLAN, "experiences", 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 1);
    if (l.n == 1)
        CHECK_STR(l.id[0], "L3");
    /* deleted entries are not listed */
    CHECK_INT(store_knowledge_delete(st, "L", "L6", ACTOR), STORE_OK);
    CHECK_INT(list(st, "L", 0, NULL, 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 5);
    if (l.n == 5)
        CHECK_STR(l.id[0], "L5");
    /* early stop keeps the total */
    ids_release(&l);
    l.stop_after = 2;
    {
        struct knowledge_filter f = {0, NULL, 10, 0};
        CHECK_INT(store_knowledge_list(st, "L", &f, collect_entry, &l, &total), STORE_OK);
    }
    CHECK_INT(l.n, 2);
    CHECK_INT(total, 5);
    ids_release(&l);
    /* an empty or unknown space */
    CHECK_INT(list(st, "nobody", 0, NULL, 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 0);
    CHECK_INT(l.n, 0);
    /* a list inside a transaction sees the transaction's own writes */
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(insert_entry(st, "L", "L7", "experiences", "7.md", 0, NULL), STORE_OK);
    CHECK_INT(list(st, "L", 0, NULL, 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 6);
    if (l.n >= 1)
        CHECK_STR(l.id[0], "L7");
    store_rollback(st);
    CHECK_INT(list(st, "L", 0, NULL, 10, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 5);
    ids_release(&l);
}

/* ---- cases, score, feedback ---- */

static void test_cases_and_score(struct store *st)
{
    struct knowledge k;
    struct knowledge_case c = {.kind = "helpful",
                               .case_id = "c1",
                               .scenario = "sc",
                               .result = "ok",
                               .agent_id = "agent-7"};
    struct ids l = {0};
    struct revs v = {0};
    int added = -1;
    long fid1 = 0, fid2 = 0;

    CHECK_INT(insert_entry(st, "C", "case-e", "experiences", "c.md", 0, NULL), STORE_OK);

    CHECK_INT(store_knowledge_add_case(st, "C", "case-e", &c, ACTOR, &added), STORE_OK);
    CHECK_INT(added, 1);
    added = -1;
    CHECK_INT(store_knowledge_add_case(st, "C", "case-e", &c, ACTOR, &added), STORE_OK);
    CHECK_INT(added, 0); /* the same (kind, case_id) counts once */
    c.kind = "harmful";
    CHECK_INT(store_knowledge_add_case(st, "C", "case-e", &c, ACTOR, &added), STORE_OK);
    CHECK_INT(added, 1); /* same case id, other kind: counted */
    c.kind = "helpful";
    c.case_id = "c2";
    CHECK_INT(store_knowledge_add_case(st, "C", "case-e", &c, ACTOR, &added), STORE_OK);
    CHECK_INT(added, 1);
    CHECK_INT(store_knowledge_get(st, "C", "case-e", 0, &k), STORE_OK);
    CHECK_INT(k.helpful, 2);
    CHECK_INT(k.harmful, 1);
    CHECK_INT(k.version, 1); /* cases are not revisions */
    knowledge_release(&k);

    CHECK_INT(store_knowledge_cases_each(st, "case-e", "helpful", 50, collect_case, &l), STORE_OK);
    CHECK_INT(l.n, 2);
    if (l.n == 2) {
        CHECK_STR(l.id[0], "c1"); /* oldest first */
        CHECK_STR(l.id[1], "c2");
    }
    ids_release(&l);
    CHECK_INT(store_knowledge_cases_each(st, "case-e", "harmful", 50, collect_case, &l), STORE_OK);
    CHECK_INT(l.n, 1);
    ids_release(&l);

    /* the entry and its parts by one statement: the same cases, in order,
     * at most cases_limit of each kind (the latest); another space's or an
     * unknown id is not found and calls nothing */
    {
        struct ids helpful = {0}, harmful = {0};
        struct knowledge_parts p = {.cases_limit = 1,
                                    .log_limit = 50,
                                    .each_case = collect_case,
                                    .helpful = &helpful,
                                    .harmful = &harmful,
                                    .each_log = NULL};
        CHECK_INT(store_knowledge_read(st, "C", "case-e", 0, &k, &p), STORE_OK);
        CHECK_STR(k.id, "case-e");
        CHECK_INT(k.helpful, 2);
        CHECK_INT(helpful.n, 1);
        if (helpful.n == 1)
            CHECK_STR(helpful.id[0], "c2");
        CHECK_INT(harmful.n, 1);
        CHECK(p.time.expires_at == NULL && !p.time.pinned);
        knowledge_release(&k);
        knowledge_time_release(&p.time);
        ids_release(&helpful);
        ids_release(&harmful);
        p.cases_limit = 50;
        CHECK_INT(store_knowledge_read(st, "C", "case-e", 0, &k, &p), STORE_OK);
        CHECK_INT(helpful.n, 2);
        if (helpful.n == 2) {
            CHECK_STR(helpful.id[0], "c1"); /* oldest first, as cases_each */
            CHECK_STR(helpful.id[1], "c2");
        }
        knowledge_release(&k);
        knowledge_time_release(&p.time);
        ids_release(&helpful);
        ids_release(&harmful);
        CHECK_INT(store_knowledge_read(st, "other", "case-e", 0, &k, &p), STORE_NOT_FOUND);
        CHECK_INT(store_knowledge_read(st, "C", "missing", 0, &k, &p), STORE_NOT_FOUND);
        CHECK_INT(helpful.n + harmful.n, 0);
        knowledge_release(&k);
        knowledge_time_release(&p.time);
    }

    /* unknown entry */
    added = -1;
    CHECK_INT(store_knowledge_add_case(st, "C", "missing", &c, ACTOR, &added), STORE_NOT_FOUND);
    CHECK_INT(added, 0);

    /* score: a revision only when it changes */
    CHECK_INT(store_knowledge_set_score(st, "C", "case-e", 3, ACTOR), STORE_OK);
    CHECK_INT(version_of(st, "C", "case-e"), 1);
    CHECK_INT(revisions(st, "C", "case-e", &v), STORE_OK);
    CHECK_INT(v.n, 1);
    CHECK_INT(store_knowledge_set_score(st, "C", "case-e", 5, ACTOR), STORE_OK);
    CHECK_INT(version_of(st, "C", "case-e"), 2);
    CHECK_INT(store_knowledge_set_score(st, "C", "case-e", 5, ACTOR), STORE_OK);
    CHECK_INT(version_of(st, "C", "case-e"), 2);
    CHECK_INT(revisions(st, "C", "case-e", &v), STORE_OK);
    CHECK_INT(v.n, 2);
    if (v.n == 2) {
        CHECK_INT(v.version[0], 2); /* newest first */
        CHECK_STR(v.reason[0], "score");
        CHECK_STR(doc_field(v.doc[0], "score"), "5");
        CHECK_INT(v.version[1], 1);
        CHECK_STR(v.reason[1], "create");
        CHECK_STR(doc_field(v.doc[1], "score"), "3");
        CHECK_STR(doc_field(v.doc[1], "path"), "c.md");
        CHECK_STR(doc_field(v.doc[1], "status"), "active");
        CHECK_STR(doc_field(v.doc[1], "category"), "experiences");
        CHECK_STR(doc_field(v.doc[1], "tags"), "[ \"t1\", \"t2\" ]");
    }
    revs_release(&v);
    CHECK_INT(store_knowledge_get(st, "C", "case-e", 0, &k), STORE_OK);
    CHECK_INT(k.score, 5);
    CHECK_INT(k.helpful, 2); /* counters survive a score change */
    knowledge_release(&k);
    CHECK_INT(store_knowledge_set_score(st, "C", "missing", 4, ACTOR), STORE_NOT_FOUND);

    /* feedback rows get increasing ids */
    CHECK_INT(store_knowledge_add_feedback(st, "C", "case-e", "make it shorter", ACTOR, &fid1),
              STORE_OK);
    CHECK_INT(store_knowledge_add_feedback(st, "C", "case-e", "and clearer", ACTOR, &fid2),
              STORE_OK);
    CHECK(fid1 > 0 && fid2 > fid1);
    CHECK_INT(store_knowledge_add_feedback(st, "C", "missing", "x", ACTOR, &fid1), STORE_NOT_FOUND);
    CHECK_INT(store_audit(st, "C", ACTOR, "test.action", "case-e"), STORE_OK);

    /* the history shown is the latest `limit` cases, oldest of them first */
    for (int i = 0; i < 40; i++) {
        char cid[16];
        snprintf(cid, sizeof cid, "many-%02d", i);
        c.kind = "harmful";
        c.case_id = cid;
        CHECK_INT(store_knowledge_add_case(st, "C", "case-e", &c, ACTOR, &added), STORE_OK);
    }
    l.n = 0;
    CHECK_INT(store_knowledge_cases_each(st, "case-e", "harmful", 3, collect_case, &l), STORE_OK);
    CHECK_INT(l.n, 3);
    if (l.n == 3) {
        CHECK_STR(l.id[0], "many-37");
        CHECK_STR(l.id[2], "many-39");
    }
    ids_release(&l);
}

/* ---- delete, revisions, revert ---- */

static void test_delete_revert(struct store *st)
{
    struct knowledge k;
    struct revs v = {0};

    CHECK_INT(insert_entry(st, "D", "del-1", "experiences", "d/x.md", 0, NULL), STORE_OK);
    CHECK_INT(store_knowledge_set_score(st, "D", "del-1", 1, ACTOR), STORE_OK); /* v2 */
    CHECK_INT(store_knowledge_delete(st, "D", "del-1", ACTOR), STORE_OK);       /* v3 */

    /* soft: gone for active reads, still there in any status */
    CHECK(!active(st, "D", "del-1"));
    CHECK_INT(store_knowledge_get(st, "D", "del-1", 1, &k), STORE_OK);
    CHECK_STR(k.status, "deleted");
    CHECK_INT(k.version, 3);
    CHECK_STR(k.path, "d/x.md");
    knowledge_release(&k);
    CHECK_INT(store_knowledge_delete(st, "D", "del-1", ACTOR), STORE_NOT_FOUND);
    CHECK_INT(store_knowledge_delete(st, "D", "never", ACTOR), STORE_NOT_FOUND);
    /* writes to a deleted entry are refused */
    CHECK_INT(store_knowledge_set_score(st, "D", "del-1", 4, ACTOR), STORE_NOT_FOUND);

    CHECK_INT(revisions(st, "D", "del-1", &v), STORE_OK);
    CHECK_INT(v.n, 3);
    if (v.n == 3) {
        CHECK_INT(v.version[0], 3);
        CHECK_STR(v.reason[0], "delete");
        CHECK_STR(doc_field(v.doc[0], "status"), "deleted");
        CHECK_INT(v.version[2], 1);
        CHECK(v.doc[0] && v.doc[1] && v.doc[2]); /* every document is JSON */
    }
    CHECK_INT(revisions(st, "D", "never", &v), STORE_NOT_FOUND);

    /* revert a deleted entry to version 1: it comes back, as a new revision */
    CHECK_INT(store_knowledge_revert(st, "D", "del-1", 1, ACTOR), STORE_OK);
    CHECK_INT(store_knowledge_get(st, "D", "del-1", 0, &k), STORE_OK);
    CHECK_STR(k.status, "active");
    CHECK_INT(k.version, 4);
    CHECK_INT(k.score, 3); /* version 1's score */
    CHECK_STR(k.path, "d/x.md");
    CHECK_STR(k.tags, "[\"t1\",\"t2\"]");
    knowledge_release(&k);
    CHECK_INT(revisions(st, "D", "del-1", &v), STORE_OK);
    CHECK_INT(v.n, 4);
    if (v.n == 4) {
        CHECK_INT(v.version[0], 4);
        CHECK_STR(v.reason[0], "revert");
        CHECK_STR(doc_field(v.doc[0], "status"), "active");
    }
    /* revert to a revision that does not exist */
    CHECK_INT(store_knowledge_revert(st, "D", "del-1", 99, ACTOR), STORE_NOT_FOUND);
    CHECK_INT(store_knowledge_revert(st, "D", "never", 1, ACTOR), STORE_NOT_FOUND);
    CHECK_INT(version_of(st, "D", "del-1"), 4);

    /* the path is taken meanwhile: CONFLICT, and nothing changes */
    CHECK_INT(store_knowledge_delete(st, "D", "del-1", ACTOR), STORE_OK); /* v5 */
    CHECK_INT(insert_entry(st, "D", "del-2", "experiences", "d/x.md", 0, NULL), STORE_OK);
    CHECK_INT(store_knowledge_revert(st, "D", "del-1", 1, ACTOR), STORE_CONFLICT);
    CHECK_INT(store_knowledge_get(st, "D", "del-1", 1, &k), STORE_OK);
    CHECK_STR(k.status, "deleted");
    CHECK_INT(k.version, 5);
    knowledge_release(&k);
    CHECK_INT(revisions(st, "D", "del-1", &v), STORE_OK);
    CHECK_INT(v.n, 5);
    CHECK(active(st, "D", "del-2"));
    /* once the path is free again, the revert works */
    CHECK_INT(store_knowledge_delete(st, "D", "del-2", ACTOR), STORE_OK);
    CHECK_INT(store_knowledge_revert(st, "D", "del-1", 1, ACTOR), STORE_OK);
    CHECK(active(st, "D", "del-1"));
    revs_release(&v);
}

/* ---- typed links and supersede (migration 20) ---- */

static void count_link(const struct knowledge_link *l, void *ctx)
{
    int *n = ctx;
    (*n)++;
    CHECK(strcmp(l->direction, "out") == 0 || strcmp(l->direction, "in") == 0);
}

/* Counts the ids linked to lk-a (index 0); one linked to lk-none (1) counts 100. */
static void count_id(size_t i, const char *id, void *ctx)
{
    int *n = ctx;
    (void)id;
    *n += i == 0 ? 1 : 100;
}

/* Records the places (in the ids asked) of the entries read, in order. */
static int note_place(struct knowledge *k, size_t i, void *ctx)
{
    struct buf *b = ctx;
    buf_addf(b, "%zu:%s ", i, k->id);
    return 0;
}

/* store_knowledge_get_many: the ids' order, not the rows'; a missing or
 * deleted id (or one of another space) left out. */
static void test_get_many(struct store *st)
{
    const char *const ids[] = {"gm-b", "gm-none", "gm-a", "gm-c"};
    struct buf got;
    buf_init(&got, 4096);
    CHECK_INT(insert_entry(st, "G", "gm-a", "experiences", "g/a.md", 0, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "G", "gm-b", "experiences", "g/b.md", 0, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "other", "gm-c", "experiences", "g/c.md", 0, NULL), STORE_OK);
    CHECK_INT(store_knowledge_get_many(st, "G", ids, 4, note_place, &got), STORE_OK);
    CHECK_STR(got.data, "0:gm-b 2:gm-a ");
    buf_release(&got);
}

static void test_links_supersede(struct store *st)
{
    struct link_key c = {"lk-a", "lk-b", "contradicts"}, sup = {"lk-a", "lk-b", "supersedes"};
    struct link_row row;
    struct knowledge k;
    struct revs v = {0};
    const char *const ids[] = {"lk-a", "lk-none"};
    int added = -1, removed = -1, n = 0;

    CHECK_INT(insert_entry(st, "L", "lk-a", "experiences", "l/a.md", 0, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "L", "lk-b", "experiences", "l/b.md", 0, NULL), STORE_OK);
    CHECK_INT(store_links_contradicts_of(st, "L", ids, 2, count_id, &n), STORE_OK);
    CHECK_INT(n, 0);
    CHECK_INT(store_link_add(st, "L", &c, ACTOR, "why", "2026-12-06T10:00:00", &added), STORE_OK);
    CHECK_INT(added, 1);
    /* again: nothing changes, the first reason stays */
    CHECK_INT(store_link_add(st, "L", &c, "other", "again", "2026-12-06T11:00:00", &added),
              STORE_OK);
    CHECK_INT(added, 0);
    CHECK_INT(store_link_get(st, "L", &c, &row), STORE_OK);
    CHECK_STR(row.reason, "why");
    CHECK_STR(row.actor, ACTOR);
    link_row_release(&row);
    CHECK_INT(store_link_get(st, "other", &c, &row), STORE_NOT_FOUND);
    link_row_release(&row);
    CHECK_INT(store_links_of(st, "L", "lk-b", 10, count_link, &n), STORE_OK);
    CHECK_INT(n, 1);
    n = 0;
    CHECK_INT(store_links_contradicts_of(st, "L", ids, 2, count_id, &n), STORE_OK);
    CHECK_INT(n, 1);

    /* supersede: b is a tombstone into a, counters untouched, revision "supersede" */
    CHECK_INT(store_link_add(st, "L", &sup, ACTOR, "", "2026-12-06T10:00:01", &added), STORE_OK);
    CHECK_INT(store_knowledge_supersede(st, "L", "lk-a", "lk-b", ACTOR), STORE_OK);
    CHECK(!active(st, "L", "lk-b"));
    CHECK_INT(store_knowledge_get(st, "L", "lk-b", 1, &k), STORE_OK);
    CHECK_STR(k.status, "merged");
    CHECK_STR(k.merged_into, "lk-a");
    knowledge_release(&k);
    CHECK_INT(revisions(st, "L", "lk-b", &v), STORE_OK);
    if (CHECK(v.n >= 2))
        CHECK_STR(v.reason[0], "supersede");
    CHECK_INT(store_knowledge_supersede(st, "L", "lk-a", "lk-b", ACTOR), STORE_NOT_FOUND);
    /* a retired side is not named by conflicts_with */
    n = 0;
    CHECK_INT(store_links_contradicts_of(st, "L", ids, 2, count_id, &n), STORE_OK);
    CHECK_INT(n, 0);
    /* the revert brings it back and drops the supersedes link, not the others */
    CHECK_INT(store_knowledge_revert(st, "L", "lk-b", version_of(st, "L", "lk-b") - 1, ACTOR),
              STORE_OK);
    CHECK(active(st, "L", "lk-b"));
    CHECK_INT(store_link_get(st, "L", &sup, &row), STORE_NOT_FOUND);
    link_row_release(&row);
    CHECK_INT(store_link_get(st, "L", &c, &row), STORE_OK);
    link_row_release(&row);
    CHECK_INT(store_link_remove(st, "L", &c, &removed), STORE_OK);
    CHECK_INT(removed, 1);
    CHECK_INT(store_link_remove(st, "L", &c, &removed), STORE_OK);
    CHECK_INT(removed, 0);
    revs_release(&v);
}

/* ---- transactions ---- */

static void test_transactions(struct store *st)
{
    int taken;

    CHECK_INT(store_commit(st), STORE_ERROR); /* nothing to commit */
    store_rollback(st);                       /* harmless */

    /* rollback of the inner keeps the outer's work */
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(insert_entry(st, "T", "t-outer", "experiences", "o.md", 0, NULL), STORE_OK);
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(insert_entry(st, "T", "t-inner", "experiences", "i.md", 0, NULL), STORE_OK);
    CHECK(active(st, "T", "t-inner"));
    store_rollback(st);
    CHECK(!active(st, "T", "t-inner"));
    CHECK(active(st, "T", "t-outer"));
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK(active(st, "T", "t-outer"));
    CHECK(!active(st, "T", "t-inner"));

    /* rollback of the outer discards an inner that was committed */
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(insert_entry(st, "T", "t-gone", "experiences", "g.md", 0, NULL), STORE_OK);
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK(active(st, "T", "t-gone"));
    store_rollback(st);
    CHECK(!active(st, "T", "t-gone"));

    /* three levels */
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(insert_entry(st, "T", "t-l1", "experiences", "l1.md", 0, NULL), STORE_OK);
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(insert_entry(st, "T", "t-l2", "experiences", "l2.md", 0, NULL), STORE_OK);
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(insert_entry(st, "T", "t-l3", "experiences", "l3.md", 0, NULL), STORE_OK);
    store_rollback(st);
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK(active(st, "T", "t-l1"));
    CHECK(active(st, "T", "t-l2"));
    CHECK(!active(st, "T", "t-l3"));
    CHECK_INT(store_commit(st), STORE_ERROR); /* depth is back to 0 */

    /* a failed write inside a transaction undoes only itself */
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(insert_entry(st, "T", "t-a", "experiences", "a.md", 0, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "T", "t-a", "experiences", "a2.md", 0, &taken), STORE_CONFLICT);
    CHECK_INT(taken, 1);
    CHECK_INT(insert_entry(st, "T", "t-b", "experiences", "a.md", 0, &taken), STORE_CONFLICT);
    CHECK_INT(taken, 0);
    CHECK_INT(insert_entry(st, "T", "t-c", "experiences", "c.md", 0, NULL), STORE_OK);
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK(active(st, "T", "t-a"));
    CHECK(!active(st, "T", "t-b"));
    CHECK(active(st, "T", "t-c"));
}

/* ---- space scoping ---- */

static void test_space_scoping(struct store *st)
{
    struct knowledge k;
    struct knowledge_case c = {.kind = "helpful", .case_id = "x"};
    struct revs v = {0};
    struct ids l = {0};
    long total, fid = 0;
    int added = -1;

    CHECK_INT(insert_entry(st, "mine", "own-1", "rules", "own.md", KTYPE_TOOL, NULL), STORE_OK);

    CHECK_INT(store_knowledge_get(st, "theirs", "own-1", 0, &k), STORE_NOT_FOUND);
    knowledge_release(&k);
    CHECK_INT(store_knowledge_get(st, "theirs", "own-1", 1, &k), STORE_NOT_FOUND);
    knowledge_release(&k);
    CHECK_INT(store_knowledge_add_case(st, "theirs", "own-1", &c, ACTOR, &added), STORE_NOT_FOUND);
    CHECK_INT(added, 0);
    CHECK_INT(store_knowledge_set_score(st, "theirs", "own-1", 5, ACTOR), STORE_NOT_FOUND);
    CHECK_INT(store_knowledge_add_feedback(st, "theirs", "own-1", "f", ACTOR, &fid),
              STORE_NOT_FOUND);
    CHECK_INT(store_knowledge_delete(st, "theirs", "own-1", ACTOR), STORE_NOT_FOUND);
    CHECK_INT(revisions(st, "theirs", "own-1", &v), STORE_NOT_FOUND);
    CHECK_INT(v.n, 0);
    CHECK_INT(store_knowledge_revert(st, "theirs", "own-1", 1, ACTOR), STORE_NOT_FOUND);
    CHECK_INT(list(st, "theirs", 0, NULL, 100, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 0);
    CHECK_INT(l.n, 0);

    /* and the owner's entry is untouched */
    CHECK_INT(store_knowledge_get(st, "mine", "own-1", 0, &k), STORE_OK);
    CHECK_INT(k.version, 1);
    CHECK_INT(k.score, 3);
    CHECK_INT(k.helpful, 0);
    CHECK_STR(k.status, "active");
    knowledge_release(&k);
    CHECK_INT(revisions(st, "mine", "own-1", &v), STORE_OK);
    CHECK_INT(v.n, 1);
    CHECK_INT(list(st, "mine", 0, NULL, 100, 0, &l, &total), STORE_OK);
    CHECK_INT(total, 1);
    ids_release(&l);
    revs_release(&v);

    /* a deleted entry of another space cannot be reverted from here either */
    CHECK_INT(store_knowledge_delete(st, "mine", "own-1", ACTOR), STORE_OK);
    CHECK_INT(store_knowledge_revert(st, "theirs", "own-1", 1, ACTOR), STORE_NOT_FOUND);
    CHECK(!active(st, "mine", "own-1"));
}

/* ---- knowledge_create (ids and derived paths) ---- */

/* knowledge_create of an entry of space K titled title, without a path, into k. */
static void create_titled(struct store *st, const char *title, struct knowledge *k)
{
    knowledge_init(k);
    k->space = xstrdup("K");
    k->category = xstrdup("experiences");
    k->title = xstrdup(title);
    k->score = 3;
    CHECK_INT(knowledge_create(st, k, ACTOR), STORE_OK);
}

static void test_knowledge_create(struct store *st)
{
    struct knowledge k, got;
    CHECK_INT(sodium_init() >= 0, 1);
    knowledge_init(&k);
    k.space = xstrdup("K");
    k.category = xstrdup("experiences");
    k.title = xstrdup("t");
    k.agent_id = xstrdup("Agent 7/x");
    k.score = 4;
    CHECK_INT(knowledge_create(st, &k, ACTOR), STORE_OK);
    CHECK(k.id && strncmp(k.id, "knowledge-", 10) == 0 && strlen(k.id) == 27);
    /* the path is derived from the title, at the top of the category */
    CHECK_STR(k.path, "t.md");
    CHECK_INT(store_knowledge_get(st, "K", k.id, 0, &got), STORE_OK);
    CHECK_STR(got.path, k.path);
    CHECK_INT(got.score, 4);
    CHECK_STR(got.agent_id, "Agent 7/x");
    knowledge_release(&got);
    knowledge_release(&k);
    /* the same title again: "-2"; a title without letters: the id */
    create_titled(st, "T!", &k);
    CHECK_STR(k.path, "t-2.md");
    knowledge_release(&k);
    create_titled(st, "—?", &k);
    if (k.id && k.path) {
        char expect[64];
        snprintf(expect, sizeof expect, "%s.md", k.id);
        CHECK_STR(k.path, expect);
    }
    knowledge_release(&k);
}

/* A move changes only where an entry is: guarded by its version, never its text. */
static void test_move(struct store *st)
{
    struct knowledge k, got;
    CHECK_INT(insert_entry(st, "M", "mv-1", "experiences", "a/one.md", 0, NULL), STORE_OK);
    knowledge_init(&k);
    k.category = xstrdup("experiences");
    k.path = xstrdup("b/two.md");
    k.title = xstrdup("two");
    k.scenario = xstrdup("two");
    /* a stale version: CONFLICT, nothing moved */
    CHECK_INT(store_knowledge_move(st, "M", "mv-1", 7, &k, ACTOR), STORE_CONFLICT);
    CHECK_INT(store_knowledge_move(st, "M", "mv-1", 0, &k, ACTOR), STORE_ERROR);
    CHECK_INT(store_knowledge_move(st, "M", "mv-1", 1, &k, ACTOR), STORE_OK);
    CHECK_INT(store_knowledge_get(st, "M", "mv-1", 0, &got), STORE_OK);
    CHECK_STR(got.path, "b/two.md");
    CHECK_STR(got.title, "two");
    CHECK_STR(got.content, "body"); /* the text is never written by a move */
    CHECK_STR(got.tags, "[\"t1\",\"t2\"]");
    CHECK_INT(got.version, 2);
    knowledge_release(&got);
    /* another space's entry is not found */
    CHECK_INT(store_knowledge_move(st, "other", "mv-1", 2, &k, ACTOR), STORE_NOT_FOUND);
    knowledge_release(&k);
}

/* A name is a file or a folder, never both: every write refuses a clash. */
static void test_path_clash(struct store *st)
{
    enum path_clash clash;
    struct knowledge k;
    int taken;
    CHECK_INT(insert_entry(st, "P", "pc-file", "experiences", "x.md", 0, NULL), STORE_OK);
    CHECK_INT(insert_entry(st, "P", "pc-in", "experiences", "y.md/in.md", 0, NULL), STORE_OK);
    CHECK_INT(store_knowledge_path_clash(st, "P", "experiences", "x.md/a.md", NULL, &clash),
              STORE_OK);
    CHECK_INT(clash, PATH_CLASH_FILE);
    CHECK_INT(store_knowledge_path_clash(st, "P", "experiences", "y.md", NULL, &clash), STORE_OK);
    CHECK_INT(clash, PATH_CLASH_FOLDER);
    /* "y.md0" and "y.mdz/..." are other names; the entry itself does not count */
    CHECK_INT(store_knowledge_path_clash(st, "P", "experiences", "y.m", NULL, &clash), STORE_OK);
    CHECK_INT(clash, PATH_CLASH_NONE);
    CHECK_INT(store_knowledge_path_clash(st, "P", "experiences", "x.md/x.md", "pc-file", &clash),
              STORE_OK);
    CHECK_INT(clash, PATH_CLASH_NONE);
    CHECK_INT(store_knowledge_path_clash(st, "P", "rules", "y.md", NULL, &clash), STORE_OK);
    CHECK_INT(clash, PATH_CLASH_NONE);
    CHECK_INT(store_knowledge_path_clash(st, "Q", "experiences", "y.md", NULL, &clash), STORE_OK);
    CHECK_INT(clash, PATH_CLASH_NONE);
    /* the writes refuse it themselves */
    CHECK_INT(insert_entry(st, "P", "pc-2", "experiences", "x.md/a.md", 0, &taken), STORE_CONFLICT);
    CHECK_INT(taken, 0);
    CHECK_INT(insert_entry(st, "P", "pc-3", "experiences", "y.md", 0, NULL), STORE_CONFLICT);
    knowledge_init(&k);
    k.category = xstrdup("experiences");
    k.path = xstrdup("y.md");
    k.title = xstrdup("t");
    CHECK_INT(store_knowledge_move(st, "P", "pc-file", 1, &k, ACTOR), STORE_CONFLICT);
    CHECK_INT(store_knowledge_update(st, "P", "pc-file", &k, 0, ACTOR, "write"), STORE_CONFLICT);
    knowledge_release(&k);
    CHECK(active(st, "P", "pc-file"));
    CHECK_INT(version_of(st, "P", "pc-file"), 1);
    /* once the file is gone, the folder may be made; reverting the file back clashes */
    CHECK_INT(store_knowledge_delete(st, "P", "pc-file", ACTOR), STORE_OK);
    CHECK_INT(insert_entry(st, "P", "pc-4", "experiences", "x.md/a.md", 0, NULL), STORE_OK);
    CHECK_INT(store_knowledge_revert(st, "P", "pc-file", 1, ACTOR), STORE_CONFLICT);
}

/* ---- full-text segments (fts_compact.c) ---- */

static int count_row(const struct match_row *r, void *ctx)
{
    (void)r;
    ++*(int *)ctx;
    return 0;
}

/* Rows of the space whose text holds "testing" (every insert_entry's
 * scenario), or whose head holds "fts" (the test's titles). */
static int matching(struct store *st, const char *space, enum match_index index)
{
    static const char *const body[] = {"test"}, *const head[] = {"fts"};
    struct store_match_query q = {
        index, index == MATCH_HEAD ? head : body, 1, MATCH_AND, 0, 0, NULL, 1000, 0};
    int n = 0;
    CHECK_INT(store_knowledge_match(st, space, &q, NULL, count_row, &n), STORE_OK);
    return n;
}

static void test_fts_compact(void)
{
    struct store *st = NULL;
    char id[64];
    int steps = 0;
    if (!CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return;
    CHECK_INT(store_space_ensure(st, "fts"), STORE_OK);
    /* one entry per write transaction: one segment each, merged by levels */
    for (int i = 0; i < 30; i++) {
        snprintf(id, sizeof id, "fts-entry-%d", i);
        CHECK_INT(insert_entry(st, "fts", id, "experiences", id, 0, NULL), STORE_OK);
    }
    CHECK(store_fts_segments(st, "knowledge_fts") > 1);
    CHECK(store_fts_segments(st, "knowledge_head") > 1);
    CHECK_INT(matching(st, "fts", MATCH_ALL), 30);
    CHECK_INT(matching(st, "fts", MATCH_HEAD), 30);
    /* the first look waits for a quiet second; then a step per call */
    CHECK_INT(store_fts_compact(st), 0);
    for (int waited = 0;
         waited < 50 &&
         store_fts_segments(st, "knowledge_fts") + store_fts_segments(st, "knowledge_head") > 2;) {
        if (store_fts_compact(st) == 1)
            steps++;
        else
            waited++, usleep(50 * 1000);
    }
    CHECK(steps >= 2);                   /* a step per index at least */
    CHECK_INT(store_fts_compact(st), 0); /* nothing left: the merge is over */
    CHECK_INT((int)store_fts_segments(st, "knowledge_fts"), 1);
    CHECK_INT((int)store_fts_segments(st, "knowledge_head"), 1);
    CHECK_INT(matching(st, "fts", MATCH_ALL), 30); /* the same rows */
    CHECK_INT(matching(st, "fts", MATCH_HEAD), 30);
    /* new segments wait for the gap after a merge (its time share) */
    for (int i = 30; i < 33; i++) {
        snprintf(id, sizeof id, "fts-entry-%d", i);
        CHECK_INT(insert_entry(st, "fts", id, "experiences", id, 0, NULL), STORE_OK);
    }
    CHECK(store_fts_segments(st, "knowledge_fts") > 1);
    CHECK_INT(store_fts_compact(st), 0);
    CHECK_INT(matching(st, "fts", MATCH_ALL), 33);
    store_close(st);
}

static void job_seen(const struct job_info *j, void *ctx)
{
    char **out = ctx;
    free(*out);
    *out = xstrdup(j->error ? j->error : j->status);
}

static void job_id_seen(const struct job_info *j, void *ctx)
{
    char **out = ctx;
    free(*out);
    *out = xstrdup(j->id);
}

/* One queued or running job per space and kind: a second is refused
 * (STORE_CONFLICT) until the first ends; migration 11 fails the extra open
 * jobs an older knowhub queued, keeping the oldest. */
static void test_one_open_job(void)
{
    char dir[] = "/tmp/knowhub-test-jobs-XXXXXX", path[128], *seen = NULL;
    struct store *st = NULL;
    sqlite3 *db;
    if (!CHECK(mkdtemp(dir) != NULL))
        return;
    snprintf(path, sizeof path, "%s/k.db", dir);
    CHECK_INT(store_open(path, &st), STORE_OK);
    CHECK_INT(store_job_create(st, "job-a1", "a", "slim", "{}", ACTOR), STORE_OK);
    CHECK_INT(store_job_create(st, "job-a2", "a", "slim", "{}", ACTOR), STORE_CONFLICT);
    CHECK_INT(store_job_create(st, "job-a3", "a", "embed", "{}", ACTOR),
              STORE_OK); /* another kind */
    CHECK_INT(store_job_create(st, "job-b1", "b", "slim", "{}", ACTOR),
              STORE_OK); /* another space */
    CHECK_INT(store_job_open(st, "a", "slim", job_id_seen, &seen), STORE_OK);
    CHECK_STR(seen, "job-a1");
    CHECK_INT(store_job_merge(st, "job-a1", "{\"force\":true}"), STORE_OK);
    CHECK_INT(store_job_claim(st, job_id_seen, &seen), STORE_OK); /* the oldest: a1 */
    CHECK_STR(seen, "job-a1");
    CHECK_INT(store_job_merge(st, "job-a1", "{}"), STORE_NOT_FOUND); /* running: as it is */
    CHECK_INT(store_job_create(st, "job-a2", "a", "slim", "{}", ACTOR), STORE_CONFLICT);
    CHECK_INT(store_job_finish(st, "job-a1", "done", "{}", NULL), STORE_OK);
    CHECK_INT(store_job_open(st, "a", "slim", job_id_seen, &seen), STORE_NOT_FOUND);
    CHECK_INT(store_job_create(st, "job-a2", "a", "slim", "{}", ACTOR), STORE_OK);
    store_close(st);
    st = NULL;

    /* an older knowhub's queue: three open slim jobs of space c, back to schema 10 */
    if (CHECK(sqlite3_open(path, &db) == SQLITE_OK)) {
        CHECK(sqlite3_exec(
                  db,
                  "DROP INDEX jobs_open;"
                  "INSERT INTO jobs(id, space, kind, status, params, actor, created_at,"
                  " updated_at) VALUES"
                  " ('job-c2', 'c', 'slim', 'queued', '{}', 'x', '2026-01-02', '2026-01-02'),"
                  " ('job-c1', 'c', 'slim', 'running', '{}', 'x', '2026-01-01', '2026-01-01'),"
                  " ('job-c3', 'c', 'slim', 'queued', '{}', 'x', '2026-01-03', '2026-01-03');"
                  "PRAGMA user_version = 10;",
                  NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(db);
    }
    CHECK_INT(store_open(path, &st), STORE_OK);
    if (st) {
        CHECK_INT(store_schema_version(st), store_schema_latest());
        CHECK_INT(store_job_open(st, "c", "slim", job_id_seen, &seen), STORE_OK);
        CHECK_STR(seen, "job-c1");
        CHECK_INT(store_job_get(st, "c", "job-c3", job_seen, &seen), STORE_OK);
        CHECK(seen && strstr(seen, "Merged into an earlier job"));
        CHECK_INT(store_job_open(st, "a", "slim", job_id_seen, &seen), STORE_OK);
        CHECK_STR(seen, "job-a2");
    }
    store_close(st);
    free(seen);
    remove_db(dir, path);
}

/* No statement stores text that is not valid UTF-8 (PostgreSQL refuses it,
 * json-c and the copy to PostgreSQL would later): the write fails and
 * changes nothing; a job whose error is such text still ends, "failed". */
static void test_invalid_utf8(struct store *st)
{
    char *seen = NULL;
    int taken;
    CHECK_INT(insert_entry(st, "u8", "knowledge-20260101-0000aaaa", "experiences", "ok", 1, &taken),
              STORE_OK);
    CHECK_INT(store_job_create(st, "job-u8-1", "u8", "slim", "{}", ACTOR), STORE_OK);
    CHECK_INT(store_job_create(st, "job-u8-\xe4\xb8", "u8", "slim", "{}", ACTOR), STORE_ERROR);
    CHECK_INT(store_job_get(st, "u8", "job-u8-\xe4\xb8", job_seen, &seen), STORE_ERROR);
    CHECK_INT(store_job_claim(st, job_seen, &seen), STORE_OK);
    CHECK_STR(seen, "running");
    /* a cut message: the job ends failed with the generic error */
    CHECK_INT(store_job_finish(st, "job-u8-1", "failed", NULL,
                               "{\"code\":\"X\",\"message\":\"\xe5\xb5\"}"),
              STORE_OK);
    CHECK_INT(store_job_get(st, "u8", "job-u8-1", job_seen, &seen), STORE_OK);
    CHECK(seen && strstr(seen, "INTERNAL_ERROR") && strstr(seen, "could not be stored"));
    /* the statement refused runs again with good text: nothing is stuck */
    CHECK_INT(store_job_create(st, "job-u8-2", "u8", "slim", "{}", ACTOR), STORE_OK);
    CHECK_INT(store_job_claim(st, job_seen, &seen), STORE_OK);
    CHECK_INT(store_job_finish(st, "job-u8-2", "failed", NULL, "{\"message\":\"\xe5\xb5\x8c\"}"),
              STORE_OK);
    CHECK_INT(store_job_get(st, "u8", "job-u8-2", job_seen, &seen), STORE_OK);
    CHECK_STR(seen, "{\"message\":\"\xe5\xb5\x8c\"}");
    free(seen);
}

int main(void)
{
    struct store *st = NULL;
    store_global_init();
    if (sodium_init() < 0) {
        CHECK(0);
        return test_summary();
    }
    test_open_and_migrations();
    if (!CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return test_summary();
    test_tokens(st);
    test_insert_get(st);
    test_list(st);
    test_cases_and_score(st);
    test_delete_revert(st);
    test_links_supersede(st);
    test_get_many(st);
    test_transactions(st);
    test_space_scoping(st);
    test_knowledge_create(st);
    test_move(st);
    test_path_clash(st);
    test_invalid_utf8(st);
    store_close(st);
    test_fts_compact();
    test_one_open_job();
    return test_summary();
}
