/* store/files.c: entries as files: where a (category, path) clashes, the
 * entry at a path, moves, and the scans the file views and export walk. */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

/* STORE_CONFLICT when s (bound) returns a row, STORE_OK when none; s is reset. */
static int row_means_conflict(struct cursor *s)
{
    int rc = stmt_step(s);
    stmt_finish(s);
    if (rc == STEP_ROW)
        return STORE_CONFLICT;
    return rc == STEP_DONE ? STORE_OK : step_status(rc);
}

int store_knowledge_path_clash(struct store *st, const char *space, const char *category,
                               const char *path, const char *except_id, enum path_clash *clash)
{
    const char *slash = strchr(path, '/');
    struct cursor *folder, *file;
    int rc;
    *clash = PATH_CLASH_NONE;
    except_id = except_id ? except_id : "";
    if (!(folder = stmt_bind(st, S_K_FOLDER_TAKEN, "tttt", space, category, path, except_id)))
        return STORE_ERROR;
    rc = row_means_conflict(folder);
    if (rc == STORE_CONFLICT)
        *clash = PATH_CLASH_FOLDER;
    if (rc != STORE_OK || !slash)
        return rc == STORE_CONFLICT ? STORE_OK : rc;
    /* ?3, the folder, is bound below: the path's first (slash - path) bytes */
    if (!(file = stmt_bind(st, S_K_FILE_TAKEN, "tt", space, category)))
        return STORE_ERROR;
    stmt_bind_text_n(file, 3, path, (size_t)(slash - path));
    stmt_bind_text(file, 4, except_id);
    rc = row_means_conflict(file);
    if (rc == STORE_CONFLICT)
        *clash = PATH_CLASH_FILE;
    return rc == STORE_CONFLICT ? STORE_OK : rc;
}

/* CONFLICT when the active entry id, at (category, path), shares its name
 * with a folder (or, a folder of its, with a file) of space. */
int store_place_clash_at(struct store *st, const char *space, const char *id, const char *category,
                         const char *path)
{
    enum path_clash clash = PATH_CLASH_NONE;
    int rc = store_knowledge_path_clash(st, space, category, path, id, &clash);
    if (rc == STORE_OK && clash != PATH_CLASH_NONE)
        rc = STORE_CONFLICT;
    return rc;
}

/* store_place_clash_at for entry id where it now is (nothing when it is not active). */
int store_place_clash(struct store *st, const char *space, const char *id)
{
    struct cursor *s = stmt_bind(st, S_K_PLACE, "t", id);
    char *category = NULL, *path = NULL;
    int rc;
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        category = stmt_col_dup(s, 0);
        path = stmt_col_dup(s, 1);
    }
    if ((rc = stmt_row_end(s, rc)))
        return rc == STORE_NOT_FOUND ? STORE_OK : rc; /* not active: nothing to place */
    rc = store_place_clash_at(st, space, id, category, path);
    free(category);
    free(path);
    return rc;
}

int store_knowledge_get_by_path(struct store *st, const char *space, const char *category,
                                const char *path, struct knowledge *out)
{
    return store_knowledge_row(stmt_bind(st, S_K_BY_PATH, "ttt", space, category, path), out);
}

int store_knowledge_row(struct cursor *s, struct knowledge *out)
{
    int rc;
    knowledge_init(out);
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        store_knowledge_from_row(s, out, 1);
    return stmt_row_end(s, rc);
}

/* Entries a page of a whole-space scan holds: PostgreSQL hands a statement's
 * result over whole, so a scan of a large space (an export, documents
 * included) is read a page at a time, never all at once. */
#define SCAN_PAGE 256

struct scan_page {
    int (*each)(const struct knowledge *, void *);
    void *ctx;
    long rows;
    int stopped;
    char *last_category, *last_path; /* the key of the page's last entry */
};

static int scan_page_row(const struct knowledge *k, void *arg)
{
    struct scan_page *p = arg;
    p->rows++;
    free(p->last_category);
    free(p->last_path);
    p->last_category = xstrdup(k->category);
    p->last_path = xstrdup(k->path);
    p->stopped = p->each(k, p->ctx);
    return p->stopped;
}

/* SCAN_CATEGORY and SCAN_ACTIVE, page after page by (category, path) in one
 * read snapshot: the same entries, in the same order, as one statement. */
static int scan_pages(struct store *st, const char *space, const char *category, int with_document,
                      int (*each)(const struct knowledge *, void *), void *ctx)
{
    char *after_category = xstrdup(category ? category : ""), *after_path = xstrdup("");
    int rc;
    store_read_begin(st);
    for (;;) {
        struct scan_page p = {each, ctx, 0, 0, NULL, NULL};
        /* the keys bound stay as they are until the page is read (not copied) */
        struct cursor *s = category ? stmt_bind(st, S_SCAN_CATEGORY, "ttti", space, category,
                                                after_path, SCAN_PAGE)
                                    : stmt_bind(st, S_SCAN_ACTIVE, "ttti", space, after_category,
                                                after_path, SCAN_PAGE);
        rc = store_knowledge_rows(s, with_document, scan_page_row, &p);
        if (p.rows) {
            free(after_category);
            free(after_path);
            after_category = p.last_category;
            after_path = p.last_path;
        }
        if (rc || p.stopped || p.rows < SCAN_PAGE)
            break;
    }
    store_read_end(st);
    free(after_category);
    free(after_path);
    return rc;
}

int store_knowledge_scan(struct store *st, const char *space, enum knowledge_scan what,
                         const char *category, int with_document,
                         int (*each)(const struct knowledge *, void *), void *ctx)
{
    if (what == SCAN_CATEGORY && !category)
        return STORE_OK; /* no category: no entry */
    if (what == SCAN_CATEGORY || what == SCAN_ACTIVE)
        return scan_pages(st, space, what == SCAN_CATEGORY ? category : NULL, with_document, each,
                          ctx);
    if (what == SCAN_DELETED)
        return store_knowledge_rows(stmt_bind(st, S_SCAN_DELETED, "tt", space, category),
                                    with_document, each, ctx);
    return store_knowledge_rows(stmt_bind(st, S_SCAN_ALWAYS_RULES, "t", space), with_document, each,
                                ctx);
}

int store_knowledge_rows(struct cursor *s, int with_document,
                         int (*each)(const struct knowledge *, void *), void *ctx)
{
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct knowledge k;
        int stop;
        knowledge_init(&k);
        store_knowledge_from_row(s, &k, with_document);
        stop = each(&k, ctx);
        knowledge_release(&k);
        if (stop)
            break;
    }
    return stmt_rows_end(s, rc);
}

/* Fill k from a row of KNOWLEDGE_COLUMNS; the document (last, and so never
 * read from its overflow pages unless asked) only with with_document. */
void store_knowledge_from_row(struct cursor *s, struct knowledge *k, int with_document)
{
    k->id = stmt_col_dup(s, 0);
    k->space = stmt_col_dup(s, 1);
    k->category = stmt_col_dup(s, 2);
    k->path = stmt_col_dup(s, 3);
    k->title = stmt_col_dup(s, 4);
    k->description = stmt_col_dup(s, 5);
    k->tags = stmt_col_dup(s, 6);
    k->types = (unsigned)stmt_col_int(s, 7);
    k->scenario = stmt_col_dup(s, 8);
    k->content = stmt_col_dup(s, 9);
    k->always_apply = stmt_col_int(s, 10);
    k->source = stmt_col_dup(s, 11);
    k->urls = stmt_col_dup(s, 12);
    k->agent_id = stmt_col_dup(s, 13);
    k->message_id = stmt_col_dup(s, 14);
    k->source_ts = stmt_col_dup(s, 15);
    k->score = stmt_col_int(s, 16);
    k->helpful = (long)stmt_col_int64(s, 17);
    k->harmful = (long)stmt_col_int64(s, 18);
    k->irrelevant = (long)stmt_col_int64(s, 19);
    k->unused = (long)stmt_col_int64(s, 20);
    k->neutral = (long)stmt_col_int64(s, 21);
    k->status = stmt_col_dup(s, 22);
    k->merged_into = stmt_col_dup(s, 23);
    k->version = (long)stmt_col_int64(s, 24);
    k->created_at = stmt_col_dup(s, 25);
    k->updated_at = stmt_col_dup(s, 26);
    k->meta = stmt_col_dup(s, 27);
    if (with_document)
        k->document = stmt_col_dup(s, 28);
}

int store_knowledge_paths_range(struct store *st, const char *space, const char *category,
                                const char *from, const char *to, long limit,
                                void (*each)(const char *path, void *), void *ctx)
{
    struct cursor *s;
    int rc;
    if (!(s = stmt_bind(st, S_K_PATHS_RANGE, "ttttl", space, category, from, to, limit)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW)
        each(stmt_col_text(s, 0), ctx);
    return stmt_rows_end(s, rc);
}
