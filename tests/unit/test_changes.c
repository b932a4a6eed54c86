/* test_changes: store/changes.c on SQLite (store_open(":memory:")) and
 * service/streams.c's pure parts:
 *   - the changes followed from now on, in commit order: a write creates, a
 *     second write updates, a rename updates with the old path, a delete
 *     deletes; a helpful case (a counter) tells nothing, a score set (a new
 *     version) does; a change of another space is told with its space;
 *   - more than the 10,000 rows the table keeps, unread: the reader finds
 *     the gap (STORE_UNAVAILABLE) and reads on from the newest;
 *   - the resources a change touches (streams_change_uris) and whether the
 *     list changed; session ids as initialize hands them out. */
#include "harness.h"
#include "base/buf.h"
#include "base/config.h"
#include "service/files.h"
#include "service/knowledge.h"
#include "service/streams.h"
#include "store/store.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

static struct config cfg;

/* The changes read, one line each: "space action category/path <- old". */
static struct buf seen;
static int told;

static void on_change(void *arg, const struct store_change *c)
{
    (void)arg;
    told++;
    buf_addf(&seen, "%s %s %s/%s", c->space, c->action, c->category, c->path);
    if (strcmp(c->path, c->old_path) || strcmp(c->category, c->old_category))
        buf_addf(&seen, " <- %s/%s", c->old_category, c->old_path);
    buf_addch(&seen, '\n');
}

static int read_changes(struct store *st)
{
    buf_reset(&seen);
    told = 0;
    return store_changes_read(st, on_change, NULL);
}

static struct svc_ctx ctx_of(struct store *st, const char *space)
{
    struct svc_ctx c = {0};
    c.space = space;
    c.actor = "token:test:changes";
    c.role = ROLE_ADMIN;
    c.st = st;
    c.cfg = &cfg;
    return c;
}

/* Call a file view service with a body of key/value pairs (NULL-ended). */
static int files(int (*op)(const struct svc_ctx *, struct json_object *, struct json_object **,
                           struct error *),
                 const struct svc_ctx *c, ...)
{
    struct json_object *body = json_object_new_object(), *data = NULL;
    struct error err;
    va_list ap;
    const char *k;
    int rc;
    va_start(ap, c);
    while ((k = va_arg(ap, const char *)))
        json_object_object_add(body, k, json_object_new_string(va_arg(ap, const char *)));
    va_end(ap);
    error_init(&err);
    rc = op(c, body, &data, &err);
    if (rc)
        fprintf(stderr, "    service error: %s\n", err.message.data);
    json_object_put(data);
    json_object_put(body);
    error_release(&err);
    return rc;
}

static void test_follow(struct store *st)
{
    struct svc_ctx c = ctx_of(st, "s1"), other = ctx_of(st, "s2");
    /* Written before the follow: not told. */
    CHECK_INT(files(svc_files_write, &c, "category", "rules", "path", "before.md", "content",
                    "Before.", NULL),
              0);
    if (!CHECK_INT(store_changes_follow(st), STORE_OK))
        return;
    CHECK_INT(read_changes(st), STORE_OK);
    CHECK_INT(told, 0);
    CHECK_INT(
        files(svc_files_write, &c, "category", "rules", "path", "a.md", "content", "One.", NULL),
        0);
    CHECK_INT(
        files(svc_files_write, &c, "category", "rules", "path", "a.md", "content", "Two.", NULL),
        0);
    CHECK_INT(
        files(svc_files_rename, &c, "category", "rules", "path", "a.md", "new_path", "b.md", NULL),
        0);
    CHECK_INT(files(svc_files_write, &other, "category", "experiences", "path", "x/y.md", "content",
                    "Theirs.", NULL),
              0);
    CHECK_INT(files(svc_files_delete, &c, "category", "rules", "path", "b.md", NULL), 0);
    CHECK_INT(read_changes(st), STORE_OK);
    CHECK_STR(seen.data, "s1 created rules/a.md\n"
                         "s1 updated rules/a.md\n"
                         "s1 updated rules/b.md <- rules/a.md\n"
                         "s2 created experiences/x/y.md\n"
                         "s1 deleted rules/b.md\n");
    /* Read: nothing more until the next change. */
    CHECK_INT(read_changes(st), STORE_OK);
    CHECK_INT(told, 0);
}

/* An entry's vote moves counters, not what a reader sees: no change. */
static void test_vote(struct store *st)
{
    struct svc_ctx c = ctx_of(st, "s1");
    struct json_object *body = json_object_new_object(), *data = NULL;
    struct error err;
    char *id = NULL;
    error_init(&err);
    json_object_object_add(body, "scenario", json_object_new_string("Retry a flaky call"));
    json_object_object_add(body, "content", json_object_new_string("Back off and retry."));
    if (CHECK_INT(svc_knowledge_create(&c, body, &data, &err), 0))
        id = strdup(json_object_get_string(json_object_object_get(data, "id")));
    json_object_put(data);
    json_object_put(body);
    CHECK_INT(read_changes(st), STORE_OK);
    CHECK_INT(told, 1);
    /* A helpful case moves a counter: nothing a reader sees. */
    body = json_object_new_object();
    json_object_object_add(body, "add_helpful_case",
                           json_tokener_parse("{\"case_id\": \"c1\", \"result\": \"ok\"}"));
    data = NULL;
    if (id && !CHECK_INT(svc_knowledge_update(&c, id, body, &data, &err), 0))
        fprintf(stderr, "    %s\n", err.message.data);
    json_object_put(data);
    json_object_put(body);
    CHECK_INT(read_changes(st), STORE_OK);
    CHECK_INT(told, 0);
    /* A score set is an editor's change, a new version: told. */
    body = json_object_new_object();
    json_object_object_add(body, "update_score", json_object_new_int(5));
    data = NULL;
    if (id)
        CHECK_INT(svc_knowledge_update(&c, id, body, &data, &err), 0);
    json_object_put(data);
    json_object_put(body);
    CHECK_INT(read_changes(st), STORE_OK);
    CHECK_INT(told, 1);
    error_release(&err);
    free(id);
}

/* More than the table keeps goes by unread: the gap is found. */
static void test_gap(struct store *st)
{
    struct svc_ctx c = ctx_of(st, "s3");
    struct buf path;
    int failed = 0;
    buf_init(&path, 256);
    if (!CHECK_INT(store_begin(st), STORE_OK))
        return;
    for (int i = 0; i < 10005 && !failed; i++) {
        buf_reset(&path);
        buf_addf(&path, "bulk/%05d.md", i);
        failed = files(svc_files_write, &c, "category", "experiences", "path", path.data, "content",
                       "Bulk.", NULL);
    }
    CHECK_INT(failed, 0);
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK_INT(read_changes(st), STORE_UNAVAILABLE);
    CHECK_INT(told, 10000); /* what was kept, told all the same */
    CHECK_INT(files(svc_files_write, &c, "category", "experiences", "path", "after.md", "content",
                    "After.", NULL),
              0);
    CHECK_INT(read_changes(st), STORE_OK);
    CHECK_STR(seen.data, "s3 created experiences/after.md\n");
    buf_release(&path);
}

static struct buf uris;
static void on_uri(void *arg, const char *uri)
{
    (void)arg;
    buf_addf(&uris, "%s ", uri);
}

static void test_uris(void)
{
    struct store_change created = {"s", "k1", "rules", "a.md", "rules", "a.md", "created"};
    struct store_change edited = {"s",           "k2",     "experiences", "x/y.md",
                                  "experiences", "x/y.md", "updated"};
    struct store_change moved = {"s", "k3", "experiences", "b.md", "rules", "a.md", "updated"};
    buf_init(&uris, 4096);
    CHECK_INT(streams_change_uris(&created, on_uri, NULL), 1);
    CHECK_STR(uris.data, "knowhub://entries/k1 knowhub://rules/a.md knowhub://rules ");
    buf_reset(&uris);
    CHECK_INT(streams_change_uris(&edited, on_uri, NULL), 0);
    CHECK_STR(uris.data, "knowhub://entries/k2 knowhub://experiences/x/y.md ");
    buf_reset(&uris);
    CHECK_INT(streams_change_uris(&moved, on_uri, NULL), 1);
    CHECK_STR(uris.data, "knowhub://entries/k3 knowhub://experiences/b.md knowhub://rules/a.md "
                         "knowhub://rules ");
    buf_release(&uris);
}

static void test_sessions(void)
{
    char a[STREAMS_SESSION_LEN + 1], b[STREAMS_SESSION_LEN + 1];
    streams_new_session(a);
    streams_new_session(b);
    CHECK(streams_session_valid(a));
    CHECK(strcmp(a, b) != 0);
    CHECK(!streams_session_valid(NULL));
    CHECK(!streams_session_valid(""));
    CHECK(!streams_session_valid("ABCDEF0123456789abcdef0123456789"));
    CHECK(!streams_session_valid("abcdef0123456789abcdef012345678"));
    CHECK(!streams_session_valid("abcdef0123456789abcdef01234567890"));
}

int main(void)
{
    struct store *st = NULL;
    store_global_init();
    if (sodium_init() < 0 || !CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return test_summary();
    config_from_env(&cfg);
    buf_init(&seen, 1 << 20);
    test_follow(st);
    test_vote(st);
    test_gap(st);
    test_uris();
    test_sessions();
    buf_release(&seen);
    store_close(st);
    return test_summary();
}
