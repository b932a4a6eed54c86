/* interop: knowledge to and from AGENTS.md / CLAUDE.md sections, Cursor's
 * .mdc rules and Agent Skills folders. */
#include "domain/interop.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/frontmatter.h"
#include "domain/paths.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MARKER_RULE "<!-- knowhub:rule "
#define MARKER_EXPORT "<!-- knowhub:export "
#define MARKER_END " -->"
#define APPLIES_WHEN "*Applies when: "
#define DOC_MAX (4 * 1024 * 1024)

enum interop_format interop_format_parse(const char *name)
{
    if (!name)
        return INTEROP_NONE;
    if (strcmp(name, "agents_md") == 0)
        return INTEROP_AGENTS_MD;
    if (strcmp(name, "claude_md") == 0)
        return INTEROP_CLAUDE_MD;
    if (strcmp(name, "cursor") == 0)
        return INTEROP_CURSOR;
    if (strcmp(name, "skills") == 0)
        return INTEROP_SKILLS;
    return INTEROP_NONE;
}

const char *interop_format_name(enum interop_format f)
{
    static const char *const names[] = {"", "agents_md", "claude_md", "cursor", "skills"};
    return names[f];
}

int interop_format_is_archive(enum interop_format f)
{
    return f == INTEROP_CURSOR || f == INTEROP_SKILLS;
}

const char *interop_format_category(enum interop_format f)
{
    return f == INTEROP_SKILLS ? "experiences" : "rules";
}

const char *interop_not_carried(enum interop_format f)
{
    switch (f) {
    case INTEROP_AGENTS_MD:
    case INTEROP_CLAUDE_MD:
        return "experiences (use the skills format); front matter other than title, description, "
               "alwaysApply and tags (created, updated, source, scenario, other keys); ids, "
               "revisions, feedback counts and scores";
    case INTEROP_CURSOR:
        return "experiences (use the skills format); tags, scenario and front matter other than "
               "title, description, alwaysApply and globs (created, updated, source, other keys); "
               "ids, revisions, feedback counts and scores";
    case INTEROP_SKILLS:
        return "rules (use agents_md, claude_md or cursor); front matter other than title, "
               "description, tags and scenario (created, updated, source, types, urls, other "
               "keys); ids, revisions, feedback counts and scores";
    case INTEROP_NONE:
        break;
    }
    return "";
}

int interop_skill_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > INTEROP_SKILL_NAME_MAX || name[0] == '-' || name[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return 0;
        if (c == '-' && name[i + 1] == '-')
            return 0;
    }
    return 1;
}

/* ---- Markdown lines ---- */

/* A fence line (``` or ~~~ after at most three spaces). */
static int is_fence(const char *line, size_t n)
{
    size_t i = 0;
    while (i < n && i < 3 && line[i] == ' ')
        i++;
    return n - i >= 3 && (strncmp(line + i, "```", 3) == 0 || strncmp(line + i, "~~~", 3) == 0);
}

static int starts(const char *line, size_t n, const char *prefix)
{
    size_t p = strlen(prefix);
    return n >= p && strncmp(line, prefix, p) == 0;
}

/* A line that splits sections: "# " or "## " (or the bare "#", "##"). */
static int is_split_heading(const char *line, size_t n)
{
    if (n >= 1 && line[0] == '#' && (n == 1 || line[1] == ' ' || line[1] == '\t'))
        return 1;
    return n >= 2 && line[0] == '#' && line[1] == '#' &&
           (n == 2 || line[2] == ' ' || line[2] == '\t');
}

static int is_marker(const char *line, size_t n, const char *marker)
{
    size_t e = strlen(MARKER_END);
    return starts(line, n, marker) && n >= strlen(marker) + e &&
           strncmp(line + n - e, MARKER_END, e) == 0;
}

/* The length of the line at p (without its '\n' and a '\r' before it) and
 * where the next starts. */
static size_t line_at(const char *p, const char *end, const char **next)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    *next = nl ? nl + 1 : end;
    if (n && p[n - 1] == '\r')
        n--;
    return n;
}

/* 1 when text has, outside code fences, a line that would split it from
 * the rule it belongs to in AGENTS.md: a # or ## heading or a marker. */
static int body_splits(const char *text)
{
    const char *p = text, *end = text + strlen(text), *next;
    int fence = 0;
    for (; p < end; p = next) {
        size_t n = line_at(p, end, &next);
        if (is_fence(p, n))
            fence = !fence;
        else if (!fence && (is_split_heading(p, n) || starts(p, n, "<!-- knowhub:")))
            return 1;
    }
    return 0;
}

/* text[0..n) without blank space around it. */
static void trim(const char **s, size_t *n)
{
    while (*n && strchr(" \t\r\n", (*s)[0])) {
        (*s)++;
        (*n)--;
    }
    while (*n && strchr(" \t\r\n", (*s)[*n - 1]))
        (*n)--;
}

/* ---- export ---- */

struct interop_export {
    enum interop_format f;
    char *space;
    struct buf sections;   /* AGENTS.md / CLAUDE.md: the rules */
    struct fileset files;  /* cursor, skills */
    struct buf left_lines; /* "- category/path: why\n" */
    long written, left_out, other_category;
};

struct interop_export *interop_export_new(enum interop_format f, const char *space)
{
    struct interop_export *ex = xcalloc(1, sizeof *ex);
    ex->f = f;
    ex->space = xstrdup(space);
    buf_init(&ex->sections, FILESET_MAX_FILE);
    fileset_init(&ex->files);
    buf_init(&ex->left_lines, 256 * 1024);
    return ex;
}

void interop_export_free(struct interop_export *ex)
{
    if (!ex)
        return;
    free(ex->space);
    buf_release(&ex->sections);
    fileset_release(&ex->files);
    buf_release(&ex->left_lines);
    free(ex);
}

long interop_export_written(const struct interop_export *ex)
{
    return ex->written;
}

long interop_export_left_out(const struct interop_export *ex)
{
    return ex->left_out;
}

void interop_export_leave_out(struct interop_export *ex, const struct knowledge *k, const char *why)
{
    ex->left_out++;
    buf_addf(&ex->left_lines, "- %s/%s: %s\n", k->category, k->path, why);
}

/* A JSON array of k->tags, or NULL when it has none. Caller puts it. */
static struct json_object *tags_of(const struct knowledge *k)
{
    struct json_object *t = json_parse_stored(k->tags);
    if (t && json_object_is_type(t, json_type_array) && json_object_array_length(t) > 0)
        return t;
    json_object_put(t);
    return NULL;
}

/* The value of key in k's front matter (NULL when absent); caller puts meta. */
static struct json_object *meta_get(const struct knowledge *k, struct json_object **meta,
                                    const char *key)
{
    struct json_object *v = NULL;
    *meta = json_parse_stored(k->meta);
    if (*meta && json_object_is_type(*meta, json_type_object))
        json_object_object_get_ex(*meta, key, &v);
    return v;
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* "*Applies when: ...*" names what a rule that is not always applied is for. */
static void applies_when(const struct knowledge *k, struct buf *out)
{
    const char *d = *or_empty(k->description) ? k->description : or_empty(k->title);
    buf_adds(out, APPLIES_WHEN);
    buf_add_one_line(out, d);
    buf_adds(out, "*\n\n");
}

static void export_section(struct interop_export *ex, const struct knowledge *k)
{
    struct json_object *m = json_object_new_object(), *tags = tags_of(k);
    const char *text;
    json_object_object_add(m, "path", json_object_new_string(k->path));
    json_object_object_add(m, "alwaysApply", json_object_new_boolean(k->always_apply));
    json_object_object_add(m, "description", json_object_new_string(or_empty(k->description)));
    if (tags)
        json_object_object_add(m, "tags", tags);
    buf_adds(&ex->sections, MARKER_RULE);
    /* '>' only in strings: escaped, so no text closes the comment early */
    for (text = json_text(m); *text; text++)
        if (*text == '>')
            buf_adds(&ex->sections, "\\u003e");
        else
            buf_addch(&ex->sections, *text);
    buf_adds(&ex->sections, MARKER_END "\n## ");
    buf_add_one_line(&ex->sections, or_empty(k->title));
    buf_adds(&ex->sections, "\n\n");
    if (!k->always_apply)
        applies_when(k, &ex->sections);
    buf_addf(&ex->sections, "%s\n\n", or_empty(k->content));
    json_object_put(m);
    ex->written++;
}

/* The file stem of a rule path ("roi.md" -> "roi"). */
static void stem_of(const char *path, struct buf *out)
{
    size_t n = strlen(path);
    buf_reset(out);
    buf_add(out, path, n > 3 && strcmp(path + n - 3, ".md") == 0 ? n - 3 : n);
}

static void add_file(struct interop_export *ex, const struct knowledge *k, const char *name,
                     struct buf *text)
{
    const char *why = NULL;
    if (buf_failed(text))
        interop_export_leave_out(ex, k, "larger than 1 MiB in this format");
    else if (fileset_add(&ex->files, name, text->data, text->len, &why))
        interop_export_leave_out(ex, k, why);
    else
        ex->written++;
}

static void export_cursor(struct interop_export *ex, const struct knowledge *k)
{
    struct json_object *fm = json_object_new_object(), *meta = NULL, *globs;
    struct buf text, name, stem;
    const char *desc = or_empty(k->description);
    buf_init(&text, FILESET_MAX_FILE);
    buf_init(&name, FILESET_MAX_NAME + 1);
    buf_init(&stem, 4096);
    /* Cursor applies a rule that is not always applied by its description. */
    if (!*desc && !k->always_apply)
        desc = or_empty(k->title);
    json_object_object_add(fm, "description", json_object_new_string(desc));
    globs = meta_get(k, &meta, "globs");
    if (globs && (json_object_is_type(globs, json_type_string) ||
                  json_object_is_type(globs, json_type_array)))
        json_object_object_add(fm, "globs", json_object_get(globs));
    else
        json_object_object_add(fm, "globs", json_object_new_string(""));
    json_object_object_add(fm, "alwaysApply", json_object_new_boolean(k->always_apply));
    frontmatter_render(fm, &text);
    buf_adds(&text, "# ");
    buf_add_one_line(&text, or_empty(k->title));
    buf_addf(&text, "\n\n%s\n", or_empty(k->content));
    stem_of(k->path, &stem);
    buf_addf(&name, ".cursor/rules/%s.mdc", stem.data);
    add_file(ex, k, name.data, &text);
    json_object_put(fm);
    json_object_put(meta);
    buf_release(&text);
    buf_release(&name);
    buf_release(&stem);
}

/* An Agent Skills name for path: its ASCII letters and digits, lower-cased,
 * every other run one '-', at most 64; a name taken gets -2, -3, ... */
static void skill_name(const struct fileset *files, const char *path, struct buf *out)
{
    struct buf base, file;
    size_t n = strlen(path);
    buf_init(&base, INTEROP_SKILL_NAME_MAX + 1);
    buf_init(&file, 256);
    if (n > 3 && strcmp(path + n - 3, ".md") == 0)
        n -= 3;
    for (size_t i = 0; i < n && base.len < INTEROP_SKILL_NAME_MAX; i++) {
        char c = path[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            buf_addch(&base, c);
        else if (base.len && base.data[base.len - 1] != '-')
            buf_addch(&base, '-');
    }
    while (base.len && base.data[base.len - 1] == '-')
        buf_truncate(&base, base.len - 1);
    if (!base.len)
        buf_adds(&base, "experience");
    for (int i = 1;; i++) {
        buf_reset(out);
        if (i == 1) {
            buf_adds(out, base.data);
        } else {
            struct buf suffix;
            size_t keep;
            buf_init(&suffix, 16);
            buf_addf(&suffix, "-%d", i);
            keep = base.len + suffix.len > INTEROP_SKILL_NAME_MAX
                       ? INTEROP_SKILL_NAME_MAX - suffix.len
                       : base.len;
            while (keep && base.data[keep - 1] == '-')
                keep--;
            buf_add(out, base.data, keep);
            buf_adds(out, suffix.data);
            buf_release(&suffix);
        }
        buf_reset(&file);
        buf_addf(&file, "%s/SKILL.md", out->data);
        if (!fileset_find(files, file.data))
            break;
    }
    buf_release(&base);
    buf_release(&file);
}

static void export_skill(struct interop_export *ex, const struct knowledge *k)
{
    struct json_object *fm = json_object_new_object(), *md = json_object_new_object(), *tags;
    struct json_object *meta = NULL, *meta2 = NULL;
    struct buf text, name, file;
    /* what the front matter says, not the defaults the entry view fills in */
    const char *written_desc = jf_str(meta_get(k, &meta, "description"));
    const char *scenario = jf_str(meta_get(k, &meta2, "scenario"));
    const char *desc = written_desc && *written_desc ? written_desc
                       : scenario && *scenario       ? scenario
                                                     : or_empty(k->title);
    size_t dlen = strlen(desc), cut = utf8_prefix(desc, dlen, INTEROP_SKILL_DESCRIPTION_MAX);
    buf_init(&text, FILESET_MAX_FILE);
    buf_init(&name, 256);
    buf_init(&file, 256);
    skill_name(&ex->files, k->path, &name);
    json_object_object_add(fm, "name", json_object_new_string(name.data));
    if (cut == 0) /* a description is required: the name says what it is */
        json_object_object_add(fm, "description", json_object_new_string(name.data));
    else
        json_object_object_add(fm, "description", json_object_new_string_len(desc, (int)cut));
    json_object_object_add(md, "knowhub-path", json_object_new_string(k->path));
    if ((tags = tags_of(k))) {
        json_object_object_add(md, "knowhub-tags", json_object_new_string(json_text(tags)));
        json_object_put(tags);
    }
    if (scenario && *scenario)
        json_object_object_add(md, "knowhub-scenario", json_object_new_string(scenario));
    json_object_object_add(fm, "metadata", md);
    frontmatter_render(fm, &text);
    buf_adds(&text, "# ");
    buf_add_one_line(&text, or_empty(k->title));
    buf_addf(&text, "\n\n%s\n", or_empty(k->content));
    buf_addf(&file, "%s/SKILL.md", name.data);
    if (cut < dlen) {
        ex->left_out++; /* written, but not whole: said in the report */
        buf_addf(&ex->left_lines, "- %s/%s: description cut to %d characters\n", k->category,
                 k->path, INTEROP_SKILL_DESCRIPTION_MAX);
    }
    add_file(ex, k, file.data, &text);
    json_object_put(fm);
    json_object_put(meta);
    json_object_put(meta2);
    buf_release(&text);
    buf_release(&name);
    buf_release(&file);
}

void interop_export_add(struct interop_export *ex, const struct knowledge *k)
{
    if (strcmp(k->category, interop_format_category(ex->f)) != 0) {
        ex->other_category++;
        return;
    }
    switch (ex->f) {
    case INTEROP_AGENTS_MD:
    case INTEROP_CLAUDE_MD:
        if (body_splits(or_empty(k->content)))
            interop_export_leave_out(
                ex, k,
                "its body has a # or ## heading (or a knowhub marker) outside a code "
                "fence, which would split it in this format");
        else
            export_section(ex, k);
        break;
    case INTEROP_CURSOR:
        export_cursor(ex, k);
        break;
    case INTEROP_SKILLS:
        export_skill(ex, k);
        break;
    case INTEROP_NONE:
        break;
    }
}

/* What the export left out, as Markdown (the archive's report). */
static void report_text(const struct interop_export *ex, struct buf *out)
{
    const char *other =
        strcmp(interop_format_category(ex->f), "rules") == 0 ? "experiences" : "rules";
    buf_addf(out,
             "# KnowHub export\n\nSpace `%s`, format `%s`: %ld %s written.\n\n"
             "Not carried by this format: %s.\n",
             ex->space, interop_format_name(ex->f), ex->written, interop_format_category(ex->f),
             interop_not_carried(ex->f));
    if (ex->other_category)
        buf_addf(out, "\n%ld %s not in this format.\n", ex->other_category, other);
    if (ex->left_lines.len)
        buf_addf(out, "\nLeft out or changed:\n\n%s", ex->left_lines.data);
}

int interop_export_finish(struct interop_export *ex, struct fileset *out)
{
    struct buf text;
    const char *why;
    int rc = 0;
    buf_init(&text, 2 * FILESET_MAX_FILE);
    if (interop_format_is_archive(ex->f)) {
        for (size_t i = 0; i < ex->files.n; i++)
            fileset_add(out, ex->files.v[i].name, ex->files.v[i].data, ex->files.v[i].len, &why);
        report_text(ex, &text);
        fileset_add(out, INTEROP_REPORT_NAME, text.data, text.len, &why);
    } else {
        struct json_object *h = json_object_new_object();
        const char *file = ex->f == INTEROP_CLAUDE_MD ? "CLAUDE.md" : "AGENTS.md";
        json_object_object_add(h, "format", json_object_new_string(interop_format_name(ex->f)));
        json_object_object_add(h, "space", json_object_new_string(ex->space));
        json_object_object_add(h, "rules", json_object_new_int64(ex->written));
        json_object_object_add(h, "experiences_not_carried",
                               json_object_new_int64(ex->other_category));
        json_object_object_add(h, "not_carried",
                               json_object_new_string(interop_not_carried(ex->f)));
        buf_addf(&text, "# %s\n\n" MARKER_EXPORT, file);
        for (const char *t = json_text(h); *t; t++)
            if (*t == '>')
                buf_adds(&text, "\\u003e");
            else
                buf_addch(&text, *t);
        buf_adds(&text, MARKER_END "\n\n");
        if (ex->left_lines.len) {
            /* a path holding "-->" must not end the comment early */
            buf_adds(&text, "<!-- left out:\n");
            for (const char *t = ex->left_lines.data; *t; t++)
                if (*t == '>')
                    buf_adds(&text, "&gt;");
                else
                    buf_addch(&text, *t);
            buf_adds(&text, "-->\n\n");
        }
        buf_addf(&text,
                 "Rules of the KnowHub space `%s`. Follow every rule below; a rule marked "
                 "*Applies when* only when the task matches it.\n\n",
                 ex->space);
        buf_add(&text, ex->sections.data, ex->sections.len);
        if (buf_failed(&text) || fileset_add(out, file, text.data, text.len, &why))
            rc = -1;
        json_object_put(h);
    }
    buf_release(&text);
    return rc;
}

/* ---- import ---- */

void interop_docs_init(struct interop_docs *d)
{
    d->v = NULL;
    d->n = d->cap = 0;
}

void interop_docs_release(struct interop_docs *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].category);
        free(d->v[i].path);
        free(d->v[i].text);
        free(d->v[i].from);
    }
    free(d->v);
    interop_docs_init(d);
}

enum interop_format interop_detect(const struct fileset *fs)
{
    enum interop_format f = INTEROP_NONE;
    for (size_t i = 0; i < fs->n; i++) {
        const char *name = fs->v[i].name, *base = strrchr(name, '/');
        size_t n = strlen(name);
        base = base ? base + 1 : name;
        if (n > 4 && strcmp(name + n - 4, ".mdc") == 0)
            return INTEROP_CURSOR;
        if (strcmp(base, "SKILL.md") == 0)
            f = INTEROP_SKILLS;
    }
    if (f == INTEROP_NONE && fs->n == 1) {
        const char *base = strrchr(fs->v[0].name, '/');
        base = base ? base + 1 : fs->v[0].name;
        if (strcasecmp(base, "AGENTS.md") == 0)
            f = INTEROP_AGENTS_MD;
        else if (strcasecmp(base, "CLAUDE.md") == 0)
            f = INTEROP_CLAUDE_MD;
    }
    return f;
}

struct parse {
    struct interop_docs *out;
    struct buf *report;
    long *skipped, *refused;
};

static void refuse(struct parse *p, const char *name, const char *why)
{
    buf_addf(p->report, "refused %s: %s\n", name, why);
    (*p->refused)++;
}

static void skip(struct parse *p, const char *name, const char *why)
{
    buf_addf(p->report, "skipped %s: %s\n", name, why);
    (*p->skipped)++;
}

/* A path taken by an earlier document of the same import. */
static int path_taken(const struct parse *p, const char *category, const char *path)
{
    for (size_t i = 0; i < p->out->n; i++)
        if (strcmp(p->out->v[i].category, category) == 0 && strcmp(p->out->v[i].path, path) == 0)
            return 1;
    return 0;
}

/* Add the document "front matter fm, a blank line, body" (takes fm). */
static void add_doc(struct parse *p, const char *category, const char *path, const char *from,
                    struct json_object *fm, const char *body, size_t body_len)
{
    struct buf text;
    struct interop_doc *d;
    buf_init(&text, DOC_MAX);
    if (path_taken(p, category, path)) {
        struct buf why;
        buf_init(&why, 4096);
        buf_addf(&why, "%s/%s comes earlier in this import", category, path);
        refuse(p, from, why.data);
        buf_release(&why);
        goto out;
    }
    frontmatter_render(fm, &text);
    buf_addch(&text, '\n');
    buf_add(&text, body, body_len);
    buf_addch(&text, '\n');
    if (buf_failed(&text)) {
        refuse(p, from, "larger than 1 MiB");
        goto out;
    }
    if (p->out->n == p->out->cap) {
        p->out->cap = p->out->cap ? 2 * p->out->cap : 16;
        p->out->v = xrealloc(p->out->v, p->out->cap * sizeof *p->out->v);
    }
    d = &p->out->v[p->out->n++];
    d->category = xstrdup(category);
    d->path = xstrdup(path);
    d->from = xstrdup(from);
    d->text = buf_detach(&text, &d->len);
out:
    json_object_put(fm);
    buf_release(&text);
}

/* A leading "# Title" line of body: the title into title (reset), and the
 * body after it; else body as it is and title untouched. */
static void title_heading(const char **body, size_t *len, struct buf *title)
{
    const char *end = *body + *len, *next;
    size_t n;
    trim(body, len);
    end = *body + *len;
    n = line_at(*body, end, &next);
    if (n >= 2 && (*body)[0] == '#' && (*body)[1] == ' ') {
        const char *t = *body + 2;
        size_t tn = n - 2;
        trim(&t, &tn);
        if (tn) {
            buf_reset(title);
            buf_add(title, t, tn);
            *len = (size_t)(end - next);
            *body = next;
            trim(body, len);
        }
    }
}

/* Front matter of a file of name: 0 with *meta (a mapping, caller puts
 * it) and the body, or -1 after a refusal. */
static int read_front(struct parse *p, const struct fileset_entry *e, struct json_object **meta,
                      const char **body, size_t *body_len)
{
    size_t off = 0;
    const char *why = NULL;
    enum frontmatter_status st;
    if (!utf8_valid(e->data, e->len)) {
        refuse(p, e->name, "not valid UTF-8 (or contains NUL bytes)");
        return -1;
    }
    st = frontmatter_read(e->data, e->len, meta, &off, &why);
    if (st == FRONTMATTER_REFUSED) {
        struct buf msg;
        buf_init(&msg, 1024);
        buf_addf(&msg, "Front matter refused: %s", why);
        refuse(p, e->name, msg.data);
        buf_release(&msg);
        return -1;
    }
    if (st == FRONTMATTER_NONE) {
        refuse(p, e->name,
               "no front matter, or front matter that is not valid YAML or not a mapping "
               "(the file must start with a --- block)");
        return -1;
    }
    *body = e->data + off;
    *body_len = e->len - off;
    return 0;
}

static void cursor_file(struct parse *p, const struct fileset_entry *e)
{
    struct json_object *meta = NULL, *fm, *v;
    struct buf title, path, notes;
    const char *base = strrchr(e->name, '/'), *body, *desc = "";
    size_t body_len, n;
    int always = 0;
    base = base ? base + 1 : e->name;
    n = strlen(base);
    if (read_front(p, e, &meta, &body, &body_len))
        return;
    buf_init(&title, 4096);
    buf_init(&path, 4096);
    buf_init(&notes, 4096);
    buf_add(&title, base, n - 4);
    buf_addf(&path, "%s.md", title.data);
    {
        json_object_object_foreach(meta, key, val)
        {
            (void)val;
            if (strcmp(key, "description") && strcmp(key, "globs") && strcmp(key, "alwaysApply"))
                buf_addf(&notes,
                         "note %s: front matter key '%.64s' is not a Cursor field; "
                         "not imported\n",
                         e->name, key);
        }
    }
    if (json_object_object_get_ex(meta, "description", &v) && v) {
        if (!json_object_is_type(v, json_type_string)) {
            refuse(p, e->name, "front matter 'description' must be text");
            goto out;
        }
        desc = json_object_get_string(v);
    }
    if (json_object_object_get_ex(meta, "alwaysApply", &v) && v) {
        if (!json_object_is_type(v, json_type_boolean)) {
            refuse(p, e->name, "front matter 'alwaysApply' must be true or false");
            goto out;
        }
        always = json_object_get_boolean(v);
    }
    title_heading(&body, &body_len, &title);
    fm = json_object_new_object();
    json_object_object_add(fm, "title", json_object_new_string(title.data));
    json_object_object_add(fm, "description",
                           json_object_new_string(strcmp(desc, title.data) ? desc : ""));
    json_object_object_add(fm, "alwaysApply", json_object_new_boolean(always));
    if (json_object_object_get_ex(meta, "globs", &v) && v &&
        ((json_object_is_type(v, json_type_string) && json_object_get_string_len(v) > 0) ||
         (json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0)))
        json_object_object_add(fm, "globs", json_object_get(v));
    buf_add(p->report, notes.data, notes.len);
    add_doc(p, "rules", path.data, e->name, fm, body, body_len);
out:
    json_object_put(meta);
    buf_release(&title);
    buf_release(&path);
    buf_release(&notes);
}

/* The string member key of a mapping, NULL when absent; -1 when present
 * but not text (refused). */
static int string_member(struct parse *p, const char *file, struct json_object *o, const char *key,
                         const char **out)
{
    struct json_object *v;
    *out = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !v)
        return 0;
    if (!json_object_is_type(v, json_type_string)) {
        struct buf why;
        buf_init(&why, 256);
        buf_addf(&why, "front matter '%s' must be text", key);
        refuse(p, file, why.data);
        buf_release(&why);
        return -1;
    }
    *out = json_object_get_string(v);
    return 0;
}

static void skill_file(struct parse *p, const struct fileset_entry *e)
{
    struct json_object *meta = NULL, *md = NULL, *fm, *tags = NULL;
    struct buf title, path, folder, why;
    const char *name, *desc, *kpath = NULL, *ktags = NULL, *scenario = NULL, *body, *slash;
    size_t body_len;
    if (read_front(p, e, &meta, &body, &body_len))
        return;
    buf_init(&title, 4096);
    buf_init(&path, 4096);
    buf_init(&folder, 4096);
    buf_init(&why, 4096);
    if (string_member(p, e->name, meta, "name", &name) ||
        string_member(p, e->name, meta, "description", &desc))
        goto out;
    if (!name || !interop_skill_name_valid(name)) {
        buf_addf(&why,
                 "front matter 'name' must be 1-64 lowercase letters, digits and single "
                 "hyphens, not starting or ending with one (got '%.80s')",
                 name ? name : "");
        refuse(p, e->name, why.data);
        goto out;
    }
    if (!desc || !*desc || utf8_length(desc, strlen(desc)) > INTEROP_SKILL_DESCRIPTION_MAX) {
        refuse(p, e->name, "front matter 'description' must be 1-1024 characters");
        goto out;
    }
    slash = strrchr(e->name, '/');
    if (slash) {
        const char *start = slash;
        while (start > e->name && start[-1] != '/')
            start--;
        buf_add(&folder, start, (size_t)(slash - start));
        if (strcmp(folder.data, name) != 0) {
            buf_addf(&why, "front matter 'name' %s is not the name of its folder (%s)", name,
                     folder.data);
            refuse(p, e->name, why.data);
            goto out;
        }
    }
    if (json_object_object_get_ex(meta, "metadata", &md) && md) {
        if (!json_object_is_type(md, json_type_object)) {
            refuse(p, e->name, "front matter 'metadata' must be a mapping");
            goto out;
        }
        if (string_member(p, e->name, md, "knowhub-path", &kpath) ||
            string_member(p, e->name, md, "knowhub-tags", &ktags) ||
            string_member(p, e->name, md, "knowhub-scenario", &scenario))
            goto out;
    }
    if (ktags) {
        tags = json_parse_stored(ktags);
        if (!tags || !json_object_is_type(tags, json_type_array)) {
            buf_addf(p->report,
                     "note %s: metadata knowhub-tags is not a JSON list; tags not "
                     "imported\n",
                     e->name);
            json_object_put(tags);
            tags = NULL;
        }
    }
    buf_adds(&title, name);
    title_heading(&body, &body_len, &title);
    if (kpath && *kpath)
        buf_adds(&path, kpath);
    else
        buf_addf(&path, "%s.md", name);
    fm = json_object_new_object();
    json_object_object_add(fm, "title", json_object_new_string(title.data));
    if (tags)
        json_object_object_add(fm, "tags", tags);
    if (scenario && *scenario)
        json_object_object_add(fm, "scenario", json_object_new_string(scenario));
    /* the export fills description from the scenario or the title when
     * there is none: the same text back is not a description of its own */
    if (strcmp(desc, title.data) && (!scenario || strcmp(desc, scenario)) && strcmp(desc, name))
        json_object_object_add(fm, "description", json_object_new_string(desc));
    add_doc(p, "experiences", path.data, e->name, fm, body, body_len);
out:
    json_object_put(meta);
    buf_release(&title);
    buf_release(&path);
    buf_release(&folder);
    buf_release(&why);
}

/* One ## section of AGENTS.md / CLAUDE.md. */
struct section {
    const char *title, *body;
    size_t title_len, body_len;
    struct json_object *marker; /* NULL: none */
    int marker_bad;
};

static void section_doc(struct parse *p, const char *file, const struct section *s, long no)
{
    struct json_object *fm, *v;
    struct buf title, path, from;
    const char *body = s->body, *desc = "", *next;
    size_t body_len = s->body_len;
    int always = 1;
    buf_init(&title, 4096);
    buf_init(&path, 4096);
    buf_init(&from, 8192);
    buf_add(&title, s->title, s->title_len);
    buf_addf(&from, "%s section %ld (%.200s)", file, no, title.data);
    if (s->marker_bad) {
        refuse(p, from.data, "its knowhub:rule marker is not a JSON object");
        goto out;
    }
    if (!title.len) {
        refuse(p, from.data, "the ## heading has no title");
        goto out;
    }
    if (s->marker) {
        if (json_object_object_get_ex(s->marker, "path", &v) &&
            json_object_is_type(v, json_type_string))
            buf_adds(&path, json_object_get_string(v));
        if (json_object_object_get_ex(s->marker, "alwaysApply", &v) &&
            json_object_is_type(v, json_type_boolean))
            always = json_object_get_boolean(v);
        if (json_object_object_get_ex(s->marker, "description", &v) &&
            json_object_is_type(v, json_type_string))
            desc = json_object_get_string(v);
    }
    if (!path.len) {
        if (path_slug(title.data, &path) == 0)
            buf_adds(&path, ".md");
        else
            buf_addf(&path, "rule-%ld.md", no);
    }
    trim(&body, &body_len);
    if (!always) {
        size_t n = line_at(body, body + body_len, &next);
        if (starts(body, n, APPLIES_WHEN) && body[n - 1] == '*') {
            body_len -= (size_t)(next - body);
            body = next;
            trim(&body, &body_len);
        }
    }
    fm = json_object_new_object();
    json_object_object_add(fm, "title", json_object_new_string(title.data));
    json_object_object_add(fm, "description", json_object_new_string(desc));
    json_object_object_add(fm, "alwaysApply", json_object_new_boolean(always));
    if (s->marker && json_object_object_get_ex(s->marker, "tags", &v) &&
        json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0)
        json_object_object_add(fm, "tags", json_object_get(v));
    add_doc(p, "rules", path.data, from.data, fm, body, body_len);
out:
    buf_release(&title);
    buf_release(&path);
    buf_release(&from);
}

static void markdown_file(struct parse *p, const struct fileset_entry *e)
{
    const char *q = e->data, *end = e->data + e->len, *next;
    struct section cur = {0};
    struct json_object *pending = NULL;
    int fence = 0, in_section = 0, pending_bad = 0, exported = 0;
    long no = 0, outside = 0;
    if (!utf8_valid(e->data, e->len)) {
        refuse(p, e->name, "not valid UTF-8 (or contains NUL bytes)");
        return;
    }
    for (; q < end; q = next) {
        size_t n = line_at(q, end, &next);
        int split = 0;
        if (is_fence(q, n)) {
            fence = !fence;
        } else if (!fence && is_marker(q, n, MARKER_EXPORT)) {
            exported = 1;
            split = 1;
        } else if (!fence && is_marker(q, n, MARKER_RULE)) {
            const char *why;
            size_t off = strlen(MARKER_RULE), len = n - off - strlen(MARKER_END);
            json_object_put(pending);
            pending = NULL;
            pending_bad = json_parse_whole(q + off, len, &pending, &why) ||
                          !json_object_is_type(pending, json_type_object);
            split = 1;
        } else if (!fence && is_split_heading(q, n)) {
            split = 1;
        }
        if (split && in_section) {
            cur.body_len = (size_t)(q - cur.body);
            section_doc(p, e->name, &cur, ++no);
            json_object_put(cur.marker);
            memset(&cur, 0, sizeof cur);
            in_section = 0;
        }
        if (!fence && n >= 2 && q[0] == '#' && q[1] == '#' && is_split_heading(q, n)) {
            cur.title = q + 2;
            cur.title_len = n - 2;
            trim(&cur.title, &cur.title_len);
            cur.body = next;
            cur.marker = pending;
            cur.marker_bad = pending_bad;
            pending = NULL;
            pending_bad = 0;
            in_section = 1;
        } else if (!in_section && !split && !fence) {
            const char *t = q;
            size_t tn = n;
            trim(&t, &tn);
            if (tn && !(t[0] == '#' && is_split_heading(t, tn)))
                outside++;
        }
    }
    if (in_section) {
        cur.body_len = (size_t)(end - cur.body);
        section_doc(p, e->name, &cur, ++no);
        json_object_put(cur.marker);
    }
    json_object_put(pending);
    if (outside && !exported) {
        struct buf why;
        buf_init(&why, 256);
        buf_addf(&why, "%ld line(s) outside a ## section are not a rule", outside);
        skip(p, e->name, why.data);
        buf_release(&why);
    }
    if (no == 0)
        refuse(p, e->name, "no ## section: each rule is a ## heading and the text below it");
}

void interop_import_parse(enum interop_format f, const struct fileset *fs, struct interop_docs *out,
                          struct buf *report, long *skipped, long *refused)
{
    struct parse p = {out, report, skipped, refused};
    for (size_t i = 0; i < fs->n; i++) {
        const struct fileset_entry *e = &fs->v[i];
        const char *base = strrchr(e->name, '/');
        size_t n = strlen(e->name);
        base = base ? base + 1 : e->name;
        if (strcmp(e->name, INTEROP_REPORT_NAME) == 0) {
            skip(&p, e->name, "the report of a KnowHub export");
        } else if (f == INTEROP_CURSOR) {
            if (n > 4 && strcmp(e->name + n - 4, ".mdc") == 0 && strlen(base) > 4)
                cursor_file(&p, e);
            else
                skip(&p, e->name, "not a .mdc rule");
        } else if (f == INTEROP_SKILLS) {
            if (strcmp(base, "SKILL.md") == 0)
                skill_file(&p, e);
            else
                skip(&p, e->name, "only the SKILL.md of a skill is imported");
        } else if (f == INTEROP_AGENTS_MD || f == INTEROP_CLAUDE_MD) {
            markdown_file(&p, e);
        }
    }
}
