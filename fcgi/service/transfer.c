/* transfer: import and export of the knowledge directory layout. */
#include "service/transfer.h"
#include "base/buf.h"
#include "base/jfield.h"
#include "domain/document.h"
#include "domain/frontmatter.h"
#include "domain/paths.h"
#include "service/ctx.h"
#include "service/conflicts.h"
#include "service/knowledge.h"
#include "service/linkdoc.h"
#include "service/linkmatter.h"
#include "service/reviewgate.h"
#include "service/timing.h"
#include "store/store.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define IMPORT_MAX_FILE (1024 * 1024)
#define IMPORT_BATCH 500    /* files per transaction */
#define IMPORT_MAX_DEPTH 64 /* folders below a plain folder, with --flatten */
#define JSONL_MAX_LINE                                                                             \
    (16 * 1024 * 1024) /* an export line: a 1 MiB document, escaped, and its histories */

struct importer {
    struct store *st;
    const struct import_options *opt;
    enum import_layout layout;
    FILE *report;
    struct transfer_counts *counts;
    long in_batch;
    struct json_object *pending; /* [{id, category, shown, meta}]: link keys, applied at the end */
};

/* The caller an import writes as: the REST caller, or the operator. */
static void importer_ctx(const struct importer *im, struct svc_ctx *c)
{
    memset(c, 0, sizeof *c);
    if (im->opt->caller) {
        *c = *im->opt->caller;
    } else {
        c->actor = "import";
        c->role = ROLE_ADMIN;
    }
    c->space = im->opt->space;
    c->st = im->st;
}

/* The report lines of the conflicts an import finds, at most. */
#define IMPORT_CONFLICT_LINES 100

/* The conflict check (service/conflicts.h) of a document just imported:
 * each candidate counted, the first ones reported, contradictions linked. */
static void import_checked(struct importer *im, const struct knowledge *k, const char *id)
{
    struct svc_ctx c;
    struct knowledge probe = *k;
    struct json_object *found;
    if (im->opt->no_conflict_check)
        return;
    importer_ctx(im, &c);
    probe.id = (char *)id;
    found = conflicts_check(&c, &probe);
    for (size_t i = 0; i < json_object_array_length(found); i++) {
        struct json_object *f = json_object_array_get_idx(found, i);
        if (im->counts->conflicts++ < IMPORT_CONFLICT_LINES)
            fprintf(im->report, "conflict %s/%s: %s of %s/%s (%s)%s: %s\n", k->category, k->path,
                    jf_member_str(f, "verdict"), jf_member_str(f, "category"),
                    jf_member_str(f, "path"), jf_member_str(f, "id"),
                    json_object_object_get_ex(f, "link", NULL) ? ", linked contradicts" : "",
                    jf_member_str(f, "reason"));
    }
    json_object_put(found);
}

/* A document's link keys, kept to apply when every document is in (a
 * link's target may come later in the same import). */
static void import_links_later(struct importer *im, const struct knowledge *k, const char *id)
{
    struct json_object *meta = json_parse_stored(k->meta), *p;
    if (!linkdoc_present(meta)) {
        json_object_put(meta);
        return;
    }
    if (!im->pending)
        im->pending = json_object_new_array();
    p = json_object_new_object();
    json_object_object_add(p, "id", json_object_new_string(id));
    json_object_object_add(p, "category", json_object_new_string(k->category));
    json_object_object_add(p, "path", json_object_new_string(k->path));
    json_object_object_add(p, "meta", meta);
    json_object_array_add(im->pending, p);
}

/* The link keys of the imported documents, in the import's last
 * transaction: a line for each link that could not be made. */
static void import_links(struct importer *im)
{
    struct svc_ctx c;
    importer_ctx(im, &c);
    for (size_t i = 0; im->pending && i < json_object_array_length(im->pending); i++) {
        struct json_object *p = json_object_array_get_idx(im->pending, i), *meta;
        struct linkmatter_result res;
        json_object_object_get_ex(p, "meta", &meta);
        linkmatter_apply(&c, jf_member_str(p, "id"), jf_member_str(p, "category"), meta, 1, &res);
        im->counts->linked += res.added;
        for (size_t j = 0; j < json_object_array_length(res.warnings); j++) {
            struct json_object *w = json_object_array_get_idx(res.warnings, j);
            fprintf(im->report, "unlinked %s/%s: %s %s: %s\n", jf_member_str(p, "category"),
                    jf_member_str(p, "path"), jf_member_str(w, "type"), jf_member_str(w, "path"),
                    jf_member_str(w, "message"));
            im->counts->link_warnings++;
        }
        json_object_put(res.warnings);
    }
    json_object_put(im->pending);
    im->pending = NULL;
}

/* Sorted names of a directory (without . and ..); caller frees. NULL with
 * errno when it cannot be read (an empty directory gives a non-NULL list). */
static char **sorted_names(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t cap = 0;
    *n = 0;
    if (!d)
        return NULL;
    names = xrealloc(NULL, sizeof *names);
    cap = 1;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (*n == cap) {
            cap *= 2;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[(*n)++] = xstrdup(e->d_name);
    }
    closedir(d);
    for (size_t i = 1; i < *n; i++) /* insertion sort keeps this dependency-free and stable */
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    return names;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* shown names the source as the operator knows it: "rules/a.md" in a
 * knowledge tree, "notes/a.md" in a plain folder, "line 3" in JSON Lines. */
static void refuse(struct importer *im, const char *shown, const char *why)
{
    fprintf(im->report, "refused %s: %s\n", shown, why);
    im->counts->refused++;
}

/* Read a regular file (no symlink) of at most IMPORT_MAX_FILE bytes. */
static int read_file(const char *file, struct buf *out, const char **why)
{
    char chunk[65536];
    ssize_t got;
    int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    buf_reset(out);
    if (fd < 0) {
        *why = errno == ELOOP ? "symbolic links are not imported" : strerror(errno);
        return -1;
    }
    while ((got = read(fd, chunk, sizeof chunk)) > 0)
        if (buf_add(out, chunk, (size_t)got)) {
            close(fd);
            *why = "larger than 1 MiB";
            return -1;
        }
    if (got < 0)
        *why = strerror(errno);
    close(fd);
    if (got < 0)
        return -1;
    if (!utf8_valid(out->data, out->len)) {
        *why = "not valid UTF-8 (or contains NUL bytes)";
        return -1;
    }
    return 0;
}

/* A free path "<stem>-N.md" next to path, into out. */
static int free_path(struct importer *im, const char *category, const char *path, struct buf *out)
{
    size_t n = strlen(path) - 3; /* without ".md" */
    struct buf norm;
    struct error err;
    int bad;
    for (int i = 2; i < 1000; i++) {
        struct knowledge k;
        int rc;
        buf_reset(out);
        buf_add(out, path, n);
        buf_addf(out, "-%d.md", i);
        /* "-N" may push a long name past what the file view (and a disk) holds. */
        buf_init(&norm, 4096);
        error_init(&err);
        bad = path_check(category, out->data, &norm, &err);
        buf_release(&norm);
        error_release(&err);
        if (bad)
            return -1;
        rc = store_knowledge_get_by_path(im->st, im->opt->space, category, out->data, &k);
        knowledge_release(&k);
        if (rc == STORE_NOT_FOUND)
            return 0;
        if (rc)
            return -1;
    }
    return -1;
}

/* Commit every IMPORT_BATCH files so a huge import neither holds the write
 * lock for long nor loses more than one batch to a crash. */
static int batch_step(struct importer *im)
{
    if (++im->in_batch < IMPORT_BATCH)
        return 0;
    im->in_batch = 0;
    if (store_commit(im->st) || store_begin(im->st))
        return -1;
    return 0;
}

/* The end of a report line: where the document came from when that is not
 * its path (a plain folder, JSON Lines), and the name it was renamed from. */
static void origin(struct buf *out, const char *from, const char *renamed_from)
{
    if (from && renamed_from)
        buf_addf(out, " (renamed from %s; from %s)", renamed_from, from);
    else if (renamed_from)
        buf_addf(out, " (renamed from %s)", renamed_from);
    else if (from)
        buf_addf(out, " (from %s)", from);
}

/* The review gate on an imported document: the poisoning screen always,
 * and the review policy of the caller of POST /api/knowledge/import
 * (opt->caller; the CLI's import is the operator's, held by the screen
 * only). 1 when it was held as a proposal: quarantined (a line
 * "quarantined ..." in the report, counted with the refused: it was not
 * imported) or pending (a line "held ...", counted as held), 0 to import
 * it, -1 when the database failed. old is the live entry it would change. */
static int import_screened(struct importer *im, const char *category, const char *path,
                           const struct knowledge *old, const char *doc, const char *shown)
{
    struct svc_ctx c;
    struct review_write w = {0};
    struct json_object *held = NULL, *reasons;
    struct error err;
    int rc;
    importer_ctx(im, &c);
    w.write_path = "import";
    w.kind = old ? "update" : "create";
    w.knowledge_id = old ? old->id : NULL;
    w.base_version = old ? old->version : 0;
    w.category = category;
    w.path = path;
    w.document = doc;
    w.base_document = old ? old->document : NULL;
    w.source = "import";
    error_init(&err);
    rc = review_gate(&c, &w, &held, &err);
    if (rc == 1 && strcmp(jf_member_str(held, "status"), "pending") == 0) {
        fprintf(im->report, "held %s/%s: for review, as a proposal to %s (proposal %s)\n", category,
                path, old ? "update it" : "create it", jf_member_str(held, "proposal_id"));
        im->counts->held++;
    } else if (rc == 1) {
        json_object_object_get_ex(held, "reasons", &reasons);
        fprintf(im->report, "quarantined %s: the poisoning screen found %s (proposal %s)\n", shown,
                reasons ? json_object_to_json_string_ext(reasons, JSON_C_TO_STRING_PLAIN) : "[]",
                jf_member_str(held, "proposal_id"));
        im->counts->refused++;
    } else if (rc < 0 && err.code && strcmp(err.code, E_LIMIT_EXCEEDED) == 0) {
        refuse(im, shown, err.message.data);
        rc = 1;
    }
    json_object_put(held);
    error_release(&err);
    return rc;
}

/* Store text as category/dest. shown names the source in a refusal (NULL:
 * category/dest); from, when not NULL, ends the other lines ("(from x/a.md)").
 * -1 only when the database fails: a refused document is reported and counted. */
static int import_text(struct importer *im, const char *category, const char *dest,
                       const char *shown, const char *from, const char *text, size_t len)
{
    struct buf doc, norm, alt, refused_as, tail;
    struct error err;
    struct knowledge k, old;
    struct timing_change when;
    const char *path;
    int rc = 0, src;

    buf_init(&doc, 2 * IMPORT_MAX_FILE);
    error_init(&err);
    buf_init(&norm, 4096);
    buf_init(&alt, 4096);
    buf_init(&refused_as, 8192);
    buf_init(&tail, 16384);
    knowledge_init(&k);
    knowledge_init(&old);
    if (shown)
        buf_adds(&refused_as, shown);
    else
        buf_addf(&refused_as, "%s/%s", category, dest);
    if (path_check(category, dest, &norm, &err)) {
        refuse(im, refused_as.data, err.message.data);
        goto out;
    }
    if (document_prepare(category, norm.data, text, len, &doc, &err) ||
        timing_change_of_document(doc.data, &when, &err)) {
        refuse(im, refused_as.data, err.message.data);
        goto out;
    }
    path = norm.data;
    src = store_knowledge_get_by_path(im->st, im->opt->space, category, path, &old);
    if (src != STORE_OK && src != STORE_NOT_FOUND) {
        rc = -1;
        goto out;
    }
    if (src == STORE_OK) {
        origin(&tail, from, NULL);
        if (strcmp(old.document, doc.data) == 0) {
            fprintf(im->report, "unchanged %s/%s%s\n", category, path, tail.data);
            im->counts->unchanged++;
            goto out;
        }
        if (im->opt->on_conflict == ON_CONFLICT_SKIP) {
            fprintf(im->report, "skipped %s/%s%s: exists (use --on-conflict overwrite|rename)\n",
                    category, path, tail.data);
            im->counts->skipped++;
            goto out;
        }
        if (im->opt->on_conflict == ON_CONFLICT_RENAME) {
            if (free_path(im, category, path, &alt)) {
                refuse(im, refused_as.data, "no free name to rename to");
                goto out;
            }
            path = alt.data;
            src = STORE_NOT_FOUND;
        }
    }
    {
        /* A stored file where this file's folder would be, or the reverse:
         * refused here, as the API refuses it, rather than failing the import. */
        enum path_clash clash;
        if (store_knowledge_path_clash(im->st, im->opt->space, category, path,
                                       src == STORE_OK ? old.id : NULL, &clash)) {
            rc = -1;
            goto out;
        }
        if (clash != PATH_CLASH_NONE) {
            refuse(im, refused_as.data,
                   clash == PATH_CLASH_FOLDER
                       ? "a folder of that name holds documents (a name is a file or a folder)"
                       : "its folder is the name of a document (a name is a file or a folder)");
            goto out;
        }
    }
    switch (import_screened(im, category, path, src == STORE_OK ? &old : NULL, doc.data,
                            refused_as.data)) {
    case -1:
        rc = -1;
        goto out;
    case 1: /* held as a proposal: said and counted; a row of the batch too */
        rc = batch_step(im);
        goto out;
    default:
        break;
    }
    k.space = xstrdup(im->opt->space);
    k.category = xstrdup(category);
    k.path = xstrdup(path);
    k.score = 3;
    document_fill(&k, category, path, doc.data, doc.len);
    buf_reset(&tail);
    if (src == STORE_OK) {
        if (store_knowledge_update(im->st, im->opt->space, old.id, &k, 0, "import", "import") ||
            timing_apply(im->st, im->opt->space, old.id, &when)) {
            rc = -1;
            goto out;
        }
        origin(&tail, from, NULL);
        fprintf(im->report, "updated %s/%s%s\n", category, path, tail.data);
        im->counts->updated++;
        import_checked(im, &k, old.id);
        import_links_later(im, &k, old.id);
    } else {
        if (knowledge_create(im->st, &k, "import") ||
            timing_apply(im->st, im->opt->space, k.id, &when)) {
            rc = -1;
            goto out;
        }
        origin(&tail, from, path == alt.data ? norm.data : NULL);
        fprintf(im->report, "imported %s/%s%s\n", category, path, tail.data);
        im->counts->imported++;
        import_checked(im, &k, k.id);
        import_links_later(im, &k, k.id);
    }
    rc = batch_step(im);
out:
    knowledge_release(&k);
    knowledge_release(&old);
    buf_release(&doc);
    error_release(&err);
    buf_release(&norm);
    buf_release(&alt);
    buf_release(&refused_as);
    buf_release(&tail);
    return rc;
}

/* The category a plain folder's file asks for in its front matter
 * ("category: rule"), experiences when it says nothing; NULL with *why
 * when it names something else. */
static const char *category_of(const char *text, size_t len, struct buf *why)
{
    size_t body_off;
    struct json_object *meta = frontmatter_parse(text, len, &body_off), *v;
    const char *category = "experiences", *name;
    if (meta && json_object_object_get_ex(meta, "category", &v) && v) {
        name = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
        if (strcasecmp(name, "rule") == 0 || strcasecmp(name, "rules") == 0) {
            category = "rules";
        } else if (strcasecmp(name, "experience") && strcasecmp(name, "experiences")) {
            buf_addf(why, "front matter category must be rule or experience (got '%.64s')",
                     json_object_get_string(v));
            category = NULL;
        }
    }
    json_object_put(meta);
    return category;
}

/* One Markdown file found by the walk: rel is its path below the category
 * folder (knowledge tree) or below the plain folder. */
static int import_file(struct importer *im, const char *category, const char *rel, const char *file,
                       const char *shown)
{
    struct buf text, why;
    const char *err = NULL, *dest = rel, *slash;
    int rc = 0;
    buf_init(&text, IMPORT_MAX_FILE);
    buf_init(&why, 1024);
    if (read_file(file, &text, &err)) {
        refuse(im, shown, err);
        goto out;
    }
    if (im->layout == IMPORT_TREE) {
        rc = import_text(im, category, rel, NULL, NULL, text.data, text.len);
        goto out;
    }
    if (!(category = category_of(text.data, text.len, &why))) {
        refuse(im, shown, why.data);
        goto out;
    }
    /* rules are flat; --flatten keeps the file name alone */
    if ((strcmp(category, "rules") == 0 || im->opt->flatten) && (slash = strrchr(rel, '/')))
        dest = slash + 1;
    rc = import_text(im, category, dest, shown,
                     strcmp(category, "rules") == 0 || dest != rel ? rel : NULL, text.data,
                     text.len);
out:
    buf_release(&text);
    buf_release(&why);
    return rc;
}

/* How deep the walk goes below its root, and what a deeper folder is told. */
static int max_depth(const struct importer *im, const char *category, const char **why)
{
    if (im->layout == IMPORT_TREE && strcmp(category, "rules") == 0) {
        *why = "rules does not allow sub-directories";
        return 0;
    }
    if (im->layout == IMPORT_TREE) {
        *why = "experiences allows at most one level of sub-directories";
        return 1;
    }
    if (!im->opt->flatten) {
        *why = "experiences allows at most one level of sub-directories (use --flatten)";
        return 1;
    }
    *why = "more than 64 folders deep";
    return IMPORT_MAX_DEPTH;
}

static int is_markdown(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".md") == 0;
}

/* Import the files below dir; depth 0 is the category folder (knowledge
 * tree) or the plain folder itself. In a plain folder hidden names (.git,
 * .obsidian, ...) are counted and left out; a knowledge tree keeps them, as
 * the file view accepts them and export writes them. What is not Markdown
 * is skipped with a line. */
static int walk(struct importer *im, const char *category, const char *dir, const char *prefix,
                int depth)
{
    size_t n;
    char **names = sorted_names(dir, &n);
    struct buf file, rel, shown;
    const char *deep_why;
    int rc = 0, limit = max_depth(im, category, &deep_why);
    buf_init(&file, 8192);
    buf_init(&rel, 8192);
    buf_init(&shown, 8192);
    if (!names) {
        if (im->layout == IMPORT_TREE)
            buf_addf(&shown, "%s/", category);
        buf_addf(&shown, "%s", prefix);
        refuse(im, shown.len ? shown.data : ".", strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct stat sb;
        if (names[i][0] == '.' && im->layout == IMPORT_PLAIN) {
            im->counts->hidden++;
            continue;
        }
        buf_reset(&file);
        buf_reset(&rel);
        buf_reset(&shown);
        buf_addf(&file, "%s/%s", dir, names[i]);
        buf_addf(&rel, "%s%s", prefix, names[i]);
        if (im->layout == IMPORT_TREE)
            buf_addf(&shown, "%s/", category);
        buf_adds(&shown, rel.data);
        if (buf_failed(&file) || buf_failed(&shown)) {
            refuse(im, names[i], "the path is too long");
        } else if (lstat(file.data, &sb)) {
            refuse(im, shown.data, strerror(errno));
        } else if (S_ISLNK(sb.st_mode)) {
            refuse(im, shown.data, "symbolic links are not imported");
        } else if (S_ISDIR(sb.st_mode)) {
            buf_addch(&rel, '/');
            buf_addch(&shown, '/');
            if (depth >= limit)
                refuse(im, shown.data, deep_why);
            else
                rc = walk(im, category, file.data, rel.data, depth + 1);
        } else if (!S_ISREG(sb.st_mode)) {
            refuse(im, shown.data, "not a regular file");
        } else if (!is_markdown(names[i])) {
            fprintf(im->report, "skipped %s: not Markdown\n", shown.data);
            im->counts->not_markdown++;
        } else {
            rc = import_file(im, category, rel.data, file.data, shown.data);
        }
    }
out:
    if (names)
        free_names(names, n);
    buf_release(&file);
    buf_release(&rel);
    buf_release(&shown);
    return rc;
}

/* One line of an export: the entry JSON with category, path and document. */
static int import_line(struct importer *im, long line_no, const char *line, size_t len)
{
    struct json_object *o = NULL, *category, *path, *document;
    struct buf shown;
    const char *why = NULL;
    int rc = 0;
    buf_init(&shown, 8192);
    buf_addf(&shown, "line %ld", line_no);
    if (json_parse_whole(line, len, &o, &why)) {
        struct buf msg;
        buf_init(&msg, 1024);
        buf_addf(&msg, "not JSON (%s)", why);
        refuse(im, shown.data, msg.data);
        buf_release(&msg);
        goto out;
    }
    if (!json_object_is_type(o, json_type_object)) {
        refuse(im, shown.data, "not a JSON object");
        goto out;
    }
    if (!json_object_object_get_ex(o, "category", &category) ||
        !json_object_is_type(category, json_type_string) ||
        !category_valid(json_object_get_string(category)) ||
        !json_object_object_get_ex(o, "path", &path) ||
        !json_object_is_type(path, json_type_string) ||
        !json_object_object_get_ex(o, "document", &document) ||
        !json_object_is_type(document, json_type_string)) {
        refuse(im, shown.data,
               "not an export line (it needs category rules|experiences, path and document)");
        goto out;
    }
    buf_addf(&shown, " (%s/%s)", json_object_get_string(category), json_object_get_string(path));
    if ((size_t)json_object_get_string_len(document) > IMPORT_MAX_FILE)
        refuse(im, shown.data, "larger than 1 MiB");
    else if (strlen(json_object_get_string(document)) !=
             (size_t)json_object_get_string_len(document))
        refuse(im, shown.data, "not valid UTF-8 (or contains NUL bytes)");
    else
        rc = import_text(im, json_object_get_string(category), json_object_get_string(path),
                         shown.data, NULL, json_object_get_string(document),
                         (size_t)json_object_get_string_len(document));
out:
    json_object_put(o);
    buf_release(&shown);
    return rc;
}

/* Every line of in; a line over JSONL_MAX_LINE is refused and passed over.
 * -1 on a database failure, or on a read error with *source_errno. */
static int import_jsonl(struct importer *im, FILE *in, int *source_errno)
{
    struct buf line;
    long line_no = 0;
    int c, rc = 0, too_long = 0;
    buf_init(&line, JSONL_MAX_LINE);
    do {
        c = getc(in);
        if (c != '\n' && c != EOF) {
            if (!too_long && buf_addch(&line, (char)c))
                too_long = 1;
            continue;
        }
        if (c == EOF && line.len == 0 && !too_long)
            break;
        line_no++;
        if (too_long) {
            struct buf shown;
            buf_init(&shown, 64);
            buf_addf(&shown, "line %ld", line_no);
            refuse(im, shown.data, "longer than 16 MiB");
            buf_release(&shown);
        } else if (line.len && line.data[line.len - 1] == '\r') {
            buf_truncate(&line, line.len - 1);
        }
        if (!too_long && strspn(line.data, " \t") != line.len)
            rc = import_line(im, line_no, line.data, line.len);
        buf_reset(&line);
        too_long = 0;
    } while (c != EOF && rc == 0);
    if (rc == 0 && ferror(in)) {
        *source_errno = errno ? errno : EIO;
        rc = -1;
    }
    buf_release(&line);
    return rc;
}

/* A knowledge tree imports rules/ and experiences/ alone: what else is in
 * it gets a line, so notes beside them are not passed over in silence. */
static void outside_tree(struct importer *im, const char *src)
{
    size_t n;
    char **names = sorted_names(src, &n);
    if (!names)
        return; /* the walk of the categories says why */
    for (size_t i = 0; i < n; i++)
        if (names[i][0] != '.' && strcmp(names[i], "rules") && strcmp(names[i], "experiences")) {
            fprintf(im->report, "skipped %s: outside rules/ and experiences/\n", names[i]);
            im->counts->outside++;
        }
    free_names(names, n);
}

int transfer_import_layout(const char *src, enum import_layout *layout)
{
    static const char *const categories[] = {"rules", "experiences"};
    struct stat sb;
    struct buf sub;
    if (strcmp(src, "-") == 0) {
        *layout = IMPORT_JSONL;
        return 0;
    }
    if (stat(src, &sb))
        return -1;
    if (!S_ISDIR(sb.st_mode)) {
        *layout = IMPORT_JSONL;
        return 0;
    }
    *layout = IMPORT_PLAIN;
    buf_init(&sub, 8192);
    for (size_t c = 0; c < 2; c++) {
        buf_reset(&sub);
        buf_addf(&sub, "%s/%s", src, categories[c]);
        if (lstat(sub.data, &sb) == 0 && S_ISDIR(sb.st_mode))
            *layout = IMPORT_TREE;
    }
    buf_release(&sub);
    return 0;
}

enum transfer_status transfer_import(struct store *st, const struct import_options *opt,
                                     const char *src, enum import_layout layout, FILE *report,
                                     struct transfer_counts *counts, int *source_errno)
{
    static const char *const categories[] = {"rules", "experiences"};
    struct importer im = {st, opt, layout, report, counts, 0, NULL};
    FILE *in = NULL;
    DIR *d;
    int rc = 0;
    *source_errno = 0;
    /* The source first: one that cannot be read leaves the database alone. */
    if (layout == IMPORT_JSONL) {
        in = strcmp(src, "-") == 0 ? stdin : fopen(src, "re");
        if (!in) {
            *source_errno = errno;
            return TRANSFER_SOURCE_FAILED;
        }
    } else if (!(d = opendir(src))) {
        *source_errno = errno;
        return TRANSFER_SOURCE_FAILED;
    } else {
        closedir(d);
    }
    if (store_space_ensure(st, opt->space) || store_begin(st)) {
        if (in && in != stdin)
            fclose(in);
        return TRANSFER_STORE_FAILED;
    }
    if (layout == IMPORT_JSONL) {
        rc = import_jsonl(&im, in, source_errno);
        if (in != stdin)
            fclose(in);
    } else if (layout == IMPORT_PLAIN) {
        rc = walk(&im, NULL, src, "", 0);
    } else {
        struct buf sub;
        struct stat sb;
        outside_tree(&im, src);
        buf_init(&sub, 8192);
        for (size_t c = 0; c < 2 && rc == 0; c++) {
            buf_reset(&sub);
            buf_addf(&sub, "%s/%s", src, categories[c]);
            /* a tree may have one of the two */
            if (lstat(sub.data, &sb) == 0 || errno != ENOENT)
                rc = walk(&im, categories[c], sub.data, "", 0);
        }
        buf_release(&sub);
    }
    if (rc == 0)
        import_links(&im);
    json_object_put(im.pending);
    if (rc) {
        store_rollback(st);
        return *source_errno ? TRANSFER_SOURCE_FAILED : TRANSFER_STORE_FAILED;
    }
    return store_commit(st) ? TRANSFER_STORE_FAILED : TRANSFER_OK;
}

/* ---- export ---- */

struct exporter {
    struct store *st;
    const char *space;
    const char *dir;
    FILE *report;
    struct transfer_counts *counts;
    int failed;
};

static int mkdir_once(const char *path)
{
    struct stat sb;
    if (mkdir(path, 0755) && errno != EEXIST)
        return -1;
    /* Never write through a symbolic link planted in the target tree. */
    return lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) ? 0 : -1;
}

static int export_one(const struct knowledge *k, void *arg)
{
    struct exporter *ex = arg;
    struct buf file, norm, shown;
    struct error err;
    const char *slash;
    int fd, ok = 0;
    buf_init(&file, 8192);
    buf_init(&norm, 4096);
    buf_init(&shown, 8 * 1024 * 1024);
    error_init(&err);
    /* Paths were checked on the way in; check again before touching the disk. */
    if (path_check(k->category, k->path, &norm, &err) || strcmp(norm.data, k->path) != 0) {
        fprintf(ex->report, "refused %s/%s: %s\n", k->category, k->path, err.message.data);
        goto out;
    }
    buf_addf(&file, "%s/%s", ex->dir, k->category);
    if (mkdir_once(file.data))
        goto fail;
    if ((slash = strchr(k->path, '/'))) {
        buf_addch(&file, '/');
        buf_add(&file, k->path, (size_t)(slash - k->path));
        if (mkdir_once(file.data))
            goto fail;
        buf_adds(&file, slash);
    } else {
        buf_addf(&file, "/%s", k->path);
    }
    fd = open(file.data, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        goto fail;
    /* its time and outgoing links in the front matter (an import reads them there) */
    ok = linkdoc_shown(ex->st, ex->space, k, &shown) == STORE_OK &&
         write_all(fd, shown.data, shown.len) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok)
        goto fail;
    fprintf(ex->report, "exported %s/%s\n", k->category, k->path);
    ex->counts->exported++;
    /* the entries it superseded, so that an import retires them again */
    if (linkdoc_superseded(ex->st, ex->space, k, export_one, ex))
        ex->failed = 1;
    goto out;
fail:
    fprintf(ex->report, "failed %s/%s: %s\n", k->category, k->path, strerror(errno));
    ex->failed = 1;
out:
    buf_release(&file);
    buf_release(&norm);
    buf_release(&shown);
    error_release(&err);
    return 0;
}

int transfer_export(struct store *st, const char *space, const char *dir, FILE *report,
                    struct transfer_counts *counts)
{
    struct exporter ex = {st, space, dir, report, counts, 0};
    if (mkdir_once(dir))
        return -1;
    if (store_knowledge_scan(st, space, SCAN_ACTIVE, NULL, 1, export_one, &ex))
        return -1;
    return ex.failed ? -1 : 0;
}

struct jsonl_writer {
    FILE *out;
    struct transfer_counts *counts;
    int write_errno; /* the errno of a failed write, else 0 */
};

static int write_line(struct json_object *o, void *arg)
{
    struct jsonl_writer *w = arg;
    if (fputs(json_text(o), w->out) == EOF || putc('\n', w->out) == EOF) {
        w->write_errno = errno ? errno : EIO;
        return -1;
    }
    w->counts->exported++;
    return 0;
}

int transfer_export_jsonl(struct store *st, const char *space, FILE *out,
                          struct transfer_counts *counts, int *write_errno)
{
    struct svc_ctx c = {0};
    struct jsonl_writer w = {out, counts, 0};
    int rc;
    c.space = space;
    c.actor = "export";
    c.role = ROLE_ADMIN;
    c.st = st;
    /* The scan stops at a write error and says STORE_OK: w.write_errno says it. */
    errno = 0;
    rc = svc_knowledge_export(&c, write_line, &w);
    if (rc == STORE_OK && !w.write_errno && fflush(out))
        w.write_errno = errno ? errno : EIO;
    *write_errno = w.write_errno;
    return rc != STORE_OK || w.write_errno ? -1 : 0;
}

/* ---- interop formats ---- */

struct interop_scan {
    struct interop_export *ex;
    struct timing_expired expired;
};

static int interop_one(const struct knowledge *k, void *arg)
{
    struct interop_scan *is = arg;
    if (timing_expired_has(&is->expired, k->id))
        interop_export_leave_out(is->ex, k, "expired: agents are not given it");
    else
        interop_export_add(is->ex, k);
    return 0;
}

enum transfer_status transfer_export_interop(struct store *st, const char *space,
                                             enum interop_format f, struct fileset *out,
                                             long *written, long *left_out)
{
    struct interop_scan is = {interop_export_new(f, space), {0}};
    enum transfer_status rc = TRANSFER_OK;
    /* every category: the other one is counted as not carried; an expired
     * entry is left out (agents get it nowhere else either) */
    if (timing_expired_load(st, space, &is.expired) ||
        store_knowledge_scan(st, space, SCAN_ACTIVE, NULL, 1, interop_one, &is))
        rc = TRANSFER_STORE_FAILED;
    else if (interop_export_finish(is.ex, out))
        rc = TRANSFER_TOO_LARGE;
    *written = interop_export_written(is.ex);
    *left_out = interop_export_left_out(is.ex);
    interop_export_free(is.ex);
    timing_expired_release(&is.expired);
    return rc;
}

enum transfer_status transfer_import_interop(struct store *st, const struct import_options *opt,
                                             enum interop_format f, const struct fileset *fs,
                                             int rules_allowed, FILE *report,
                                             struct transfer_counts *counts)
{
    struct importer im = {st, opt, IMPORT_TREE, report, counts, 0, NULL};
    struct interop_docs docs;
    struct buf lines;
    long skipped = 0, refused = 0;
    int rc = 0;
    interop_docs_init(&docs);
    buf_init(&lines, 16 * 1024 * 1024);
    interop_import_parse(f, fs, &docs, &lines, &skipped, &refused);
    fputs(lines.data, report);
    counts->refused += refused;
    counts->not_markdown += skipped;
    buf_release(&lines);
    if (store_space_ensure(st, opt->space) || store_begin(st)) {
        interop_docs_release(&docs);
        return TRANSFER_STORE_FAILED;
    }
    for (size_t i = 0; i < docs.n && rc == 0; i++) {
        const struct interop_doc *d = &docs.v[i];
        if (!rules_allowed && strcmp(d->category, "rules") == 0)
            refuse(&im, d->from, "rules are written by admins only");
        else
            rc = import_text(&im, d->category, d->path, d->from, d->from, d->text, d->len);
    }
    interop_docs_release(&docs);
    if (rc == 0)
        import_links(&im);
    json_object_put(im.pending);
    if (rc) {
        store_rollback(st);
        return TRANSFER_STORE_FAILED;
    }
    return store_commit(st) ? TRANSFER_STORE_FAILED : TRANSFER_OK;
}
