/* h_export: GET /api/knowledge/export — every active entry of the space as
 * JSON Lines (the entry JSON plus its full document), streamed, or in one
 * of the interop formats (?format=agents_md|claude_md|cursor|skills); and
 * POST /api/knowledge/import of those formats (docs/agents.md). */
#include "api/handlers.h"
#include "base/fileset.h"
#include "domain/interop.h"
#include "service/ctx.h"
#include "service/knowledge.h"
#include "service/reviewgate.h"
#include "service/transfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FORMATS_SAID "jsonl, agents_md, claude_md, cursor or skills"

static int export_line(struct json_object *o, void *ctx)
{
    struct response *res = ctx;
    const char *line = json_text(o);
    /* the client gone: the scan stops rather than read the rest for no one */
    if (reply_stream_write(res, line, strlen(line)) || reply_stream_write(res, "\n", 1))
        return -1;
    return 0;
}

/* The format named by ?format, INTEROP_NONE for jsonl (or none); -1 after
 * a 400 for any other name. */
static int format_or_400(const struct request *req, struct response *res, const char *allowed,
                         enum interop_format *f)
{
    const char *name = http_query(req, "format");
    *f = INTEROP_NONE;
    if (!name || (strcmp(name, "jsonl") == 0 && strstr(allowed, "jsonl")))
        return 0;
    if ((*f = interop_format_parse(name)) == INTEROP_NONE) {
        reply_error(res, 400, E_INVALID_REQUEST, "format must be %s (got '%.64s')", allowed, name);
        return -1;
    }
    return 0;
}

static void export_interop(struct request *req, struct response *res, const struct svc_ctx *c,
                           enum interop_format f)
{
    struct fileset files;
    struct buf tar;
    long written = 0, left_out = 0;
    enum transfer_status st;
    fileset_init(&files);
    buf_init(&tar, HTTP_MAX_RESPONSE);
    (void)req;
    st = transfer_export_interop(c->st, c->space, f, &files, &written, &left_out);
    if (st == TRANSFER_TOO_LARGE) {
        reply_error(res, 200, E_LIMIT_EXCEEDED,
                    "The rules would make %s larger than 1 MiB: use format cursor",
                    f == INTEROP_CLAUDE_MD ? "CLAUDE.md" : "AGENTS.md");
        goto out;
    }
    if (st != TRANSFER_OK) {
        reply_error(res, 500, E_INTERNAL, "The export failed: the database failed");
        goto out;
    }
    buf_reset(&res->body);
    if (interop_format_is_archive(f)) {
        if (fileset_to_tar(&files, (long)time(NULL), &tar)) {
            reply_error(res, 500, E_INTERNAL, "The export failed: the archive is too large");
            goto out;
        }
        buf_add(&res->body, tar.data, tar.len);
        res->content_type = "application/x-tar";
        buf_addf(&res->headers,
                 "Content-Disposition: attachment; filename=\"knowhub-%s-%s.tar\"\r\n", c->space,
                 interop_format_name(f));
    } else {
        buf_add(&res->body, files.v[0].data, files.v[0].len);
        res->content_type = "text/markdown; charset=utf-8";
        buf_addf(&res->headers, "Content-Disposition: attachment; filename=\"%s\"\r\n",
                 files.v[0].name);
    }
    buf_addf(&res->headers, "X-KnowHub-Exported: %ld\r\nX-KnowHub-Left-Out: %ld\r\n", written,
             left_out);
    if (buf_failed(&res->body)) {
        reply_too_large(res);
        goto out;
    }
    res->status = 200;
    res->done = 1;
out:
    fileset_release(&files);
    buf_release(&tar);
}

void h_knowledge_export(struct request *req, struct response *res)
{
    struct svc_ctx c;
    enum interop_format f;
    http_svc_ctx(req, &c);
    if (format_or_400(req, res, FORMATS_SAID, &f))
        return;
    if (f != INTEROP_NONE) {
        export_interop(req, res, &c, f);
        return;
    }
    reply_stream_begin(res, "application/x-ndjson; charset=utf-8");
    /* The head (200) has gone out: a failure can no longer be answered, and
     * an export that just stopped would look whole (every line sent is
     * complete). It is cut off instead: the client sees an incomplete answer. */
    if (svc_knowledge_export(&c, export_line, res))
        reply_stream_fail(res);
}

/* The report lines as a JSON array. */
static struct json_object *report_lines(const char *text)
{
    struct json_object *a = json_object_new_array();
    const char *p = text, *nl;
    while (*p) {
        nl = strchr(p, '\n');
        json_object_array_add(a,
                              json_object_new_string_len(p, nl ? (int)(nl - p) : (int)strlen(p)));
        if (!nl)
            break;
        p = nl + 1;
    }
    return a;
}

void h_knowledge_import(struct request *req, struct response *res)
{
    struct svc_ctx c;
    struct import_options opt = {0};
    struct transfer_counts counts = {0};
    enum interop_format f;
    enum transfer_status status;
    struct fileset files;
    struct buf why;
    const char *conflict = http_query(req, "on_conflict"), *reason = NULL;
    char *text = NULL;
    size_t text_len = 0;
    FILE *report;
    http_svc_ctx(req, &c);
    fileset_init(&files);
    buf_init(&why, 4096);
    if (format_or_400(req, res, "agents_md, claude_md, cursor or skills", &f))
        goto out;
    if (f == INTEROP_NONE) {
        reply_error(res, 400, E_INVALID_REQUEST,
                    "format is required: agents_md, claude_md, cursor or skills");
        goto out;
    }
    opt.space = c.space;
    opt.on_conflict = ON_CONFLICT_SKIP;
    if (conflict && strcmp(conflict, "overwrite") == 0) {
        opt.on_conflict = ON_CONFLICT_OVERWRITE;
    } else if (conflict && strcmp(conflict, "rename") == 0) {
        opt.on_conflict = ON_CONFLICT_RENAME;
    } else if (conflict && strcmp(conflict, "skip")) {
        reply_error(res, 400, E_INVALID_REQUEST,
                    "on_conflict must be skip, overwrite or rename (got '%.64s')", conflict);
        goto out;
    }
    if (req->body_len == 0) {
        reply_error(res, 400, E_INVALID_REQUEST, "The body is empty: send the %s",
                    interop_format_is_archive(f) ? "tar archive (plain or gzip)" : "Markdown file");
        goto out;
    }
    /* The whole body is read and checked before the database is touched:
     * a bad archive imports nothing. */
    if (interop_format_is_archive(f)) {
        if (fileset_from_tar(req->body, req->body_len, &files, &why)) {
            reply_error(res, 400, E_INVALID_REQUEST, "The archive is refused: %s", why.data);
            goto out;
        }
    } else if (fileset_add(&files, f == INTEROP_CLAUDE_MD ? "CLAUDE.md" : "AGENTS.md", req->body,
                           req->body_len, &reason)) {
        reply_error(res, 400, E_INVALID_REQUEST, "The file is refused: %s", reason);
        goto out;
    }
    /* the caller's review policy holds each document as a proposal */
    opt.caller = &c;
    if (!(report = open_memstream(&text, &text_len))) {
        reply_error(res, 500, E_INTERNAL, "Out of memory");
        goto out;
    }
    status = transfer_import_interop(c.st, &opt, f, &files, c.role >= ROLE_ADMIN, report, &counts);
    fclose(report);
    if (status != TRANSFER_OK) {
        reply_error(res, 500, E_INTERNAL,
                    "The import failed: the database failed (what this import wrote in its "
                    "last batch of up to 500 documents was rolled back)");
    } else {
        struct json_object *d = json_object_new_object();
        json_object_object_add(d, "format", json_object_new_string(interop_format_name(f)));
        json_object_object_add(d, "space", json_object_new_string(c.space));
        json_object_object_add(d, "imported", json_object_new_int64(counts.imported));
        json_object_object_add(d, "updated", json_object_new_int64(counts.updated));
        json_object_object_add(d, "unchanged", json_object_new_int64(counts.unchanged));
        json_object_object_add(d, "skipped", json_object_new_int64(counts.skipped));
        json_object_object_add(d, "refused", json_object_new_int64(counts.refused));
        json_object_object_add(d, "held", json_object_new_int64(counts.held));
        json_object_object_add(d, "not_imported", json_object_new_int64(counts.not_markdown));
        json_object_object_add(d, "conflicts", json_object_new_int64(counts.conflicts));
        json_object_object_add(d, "report", report_lines(text ? text : ""));
        json_object_object_add(d, "not_carried", json_object_new_string(interop_not_carried(f)));
        reply_data(res, d);
    }
out:
    free(text);
    fileset_release(&files);
    buf_release(&why);
}
