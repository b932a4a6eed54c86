/* remote: the content commands. Each parses its arguments, makes one or two
 * REST calls through app/client and prints the answer: a table or text for
 * people (cut to the terminal's width, control characters shown as '?'), or
 * with --json the answer's data, pretty. Results go to stdout, everything
 * else (errors, the next page's hint) to stderr. */
#include "app/remote.h"
#include "app/client.h"
#include "base/buf.h"
#include "base/jfield.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* add reads at most this much content (a file or stdin): an entry's
 * content is at most 2000 characters, so anything larger is a mistake. */
#define ADD_MAX_INPUT ((size_t)64 << 10)

enum opt {
    O_URL,
    O_TOKEN_FILE,
    O_CATEGORY,
    O_LIMIT,
    O_OFFSET,
    O_PAGE,
    O_MODE,
    O_MIN_SCORE,
    O_TITLE,
    O_TAGS,
    O_FILE,
    O_SCENARIO,
    O_PATH,
    O_COUNT
};

static const char *const opt_names[O_COUNT] = {
    "url",       "token-file", "category", "limit", "offset",   "page", "mode",
    "min-score", "title",      "tags",     "file",  "scenario", "path",
};

#define BIT(o) (1u << (o))

struct args {
    const char *val[O_COUNT];
    const char *pos[2];
    int npos;
    int json;
};

struct command {
    const char *name;
    /* Check the arguments and build the query string ("&k=v..."): run
     * before the client is made, so a usage error is always exit 2. NULL:
     * nothing to check. */
    int (*query)(const struct args *a, struct buf *q);
    int (*run)(struct client *c, const struct args *a, struct buf *q);
    unsigned opts; /* besides --url, --token-file and --json */
    int min_pos, max_pos;
    const char *synopsis;
    const char *help;
};

/* ---- output ---------------------------------------------------------------- */

/* Write s[0..n) to stdout with control characters as '?' (C1 ones too: a
 * server's text cannot drive the terminal); line breaks and tabs are kept
 * when keep_lines, else each is a space. */
static void put_clean(const char *s, size_t n, int keep_lines)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\n' || ch == '\t' || ch == '\r')
            putchar(keep_lines && ch != '\r' ? ch : ' ');
        else if (ch < 0x20 || ch == 0x7f)
            putchar('?');
        else if (ch == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                 (unsigned char)s[i + 1] <= 0x9f) {
            putchar('?');
            i++;
        } else
            putchar(ch);
    }
}

/* One cell of width characters: s cut with "…" when longer, padded with
 * spaces when pad. */
static void put_cell(const char *s, size_t width, int pad)
{
    size_t n = strlen(s), chars, take;
    if (!utf8_valid(s, n))
        s = "?", n = 1;
    chars = utf8_length(s, n);
    take = chars > width ? utf8_prefix(s, n, width ? width - 1 : 0) : n;
    put_clean(s, take, 0);
    if (chars > width && width)
        fputs("\xe2\x80\xa6", stdout);
    for (size_t i = chars > width ? width : chars; pad && i < width; i++)
        putchar(' ');
}

/* The width of a table: the terminal's, else $COLUMNS, else 100. */
static size_t table_width(void)
{
    struct winsize ws;
    const char *columns = getenv("COLUMNS");
    long w = 100;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        w = ws.ws_col;
    else if (columns && parse_long(columns, 1, 10000, &w))
        w = 100;
    return w < 40 ? 40 : w > 1000 ? 1000 : (size_t)w;
}

/* A member as text: a string as is, a number or boolean as JSON writes it,
 * a number with a fraction with 3 decimals, "-" when absent or null. */
static const char *text_of(struct json_object *o, const char *key, char tmp[static 32])
{
    struct json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, key, &v) || !v)
        return "-";
    if (json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    if (json_object_is_type(v, json_type_double)) {
        snprintf(tmp, 32, "%.3f", json_object_get_double(v));
        return tmp;
    }
    if (json_object_is_type(v, json_type_int)) {
        snprintf(tmp, 32, "%lld", (long long)json_object_get_int64(v));
        return tmp;
    }
    if (json_object_is_type(v, json_type_boolean))
        return json_object_get_boolean(v) ? "true" : "false";
    return "-";
}

static struct json_object *member(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Member key of o when it is an array, else NULL: an answer of another
 * shape prints as empty rather than tripping json-c's type asserts. */
static struct json_object *rows_of(struct json_object *o, const char *key)
{
    struct json_object *v = member(o, key);
    return json_object_is_type(v, json_type_array) ? v : NULL;
}

/* The length of rows (0 for NULL). */
static size_t count_of(struct json_object *rows)
{
    return rows ? json_object_array_length(rows) : 0;
}

/* The entry's quality score: "score" (search results), else eval.score. */
static const char *score_of(struct json_object *e, char tmp[static 32])
{
    const char *s = text_of(e, "score", tmp);
    return strcmp(s, "-") ? s : text_of(member(e, "eval"), "score", tmp);
}

static void print_json(struct json_object *data)
{
    puts(json_object_to_json_string_ext(data, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                  JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* A table: columns of fixed widths, the last one taking the rest of the
 * line (at least 10). keys[i] is each row's member; NULL for the score. */
struct column {
    const char *head;
    const char *key;
    size_t width; /* 0: the rest */
};

static void print_table(const struct column *cols, size_t ncols, struct json_object *rows)
{
    size_t total = table_width(), used = 0;
    char tmp[32];
    for (size_t i = 0; i + 1 < ncols; i++)
        used += cols[i].width + 2;
    for (size_t i = 0; i < ncols; i++) {
        size_t w = cols[i].width ? cols[i].width : (total > used + 10 ? total - used : 10);
        put_cell(cols[i].head, w, i + 1 < ncols);
        fputs(i + 1 < ncols ? "  " : "\n", stdout);
    }
    for (size_t r = 0; r < count_of(rows); r++) {
        struct json_object *row = json_object_array_get_idx(rows, r);
        for (size_t i = 0; i < ncols; i++) {
            size_t w = cols[i].width ? cols[i].width : (total > used + 10 ? total - used : 10);
            const char *v = cols[i].key ? text_of(row, cols[i].key, tmp) : score_of(row, tmp);
            put_cell(v, w, i + 1 < ncols);
            fputs(i + 1 < ncols ? "  " : "\n", stdout);
        }
    }
}

/* "entries 11-20 of 42; the next page: --offset 20" on stderr (the rows
 * are data's member key). */
static void say_page(struct json_object *data, const char *key, const char *what)
{
    char a[32], b[32], t[32];
    long offset, limit, total, shown;
    if (parse_long(text_of(data, "offset", a), 0, LONG_MAX, &offset) ||
        parse_long(text_of(data, "limit", b), 0, LONG_MAX, &limit) ||
        parse_long(text_of(data, "total", t), 0, LONG_MAX, &total))
        return;
    shown = (long)count_of(rows_of(data, key));
    if (shown == 0)
        fprintf(stderr, "knowhub: no %s here (%ld in all)\n", what, total);
    else if (offset + shown < total)
        fprintf(stderr, "knowhub: %s %ld-%ld of %ld; the next page: --offset %ld\n", what,
                offset + 1, offset + shown, total, offset + shown);
    else
        fprintf(stderr, "knowhub: %s %ld-%ld of %ld\n", what, offset + 1, offset + shown, total);
}

/* ---- arguments -------------------------------------------------------------- */

/* A category as the API spells it: rule(s) -> rules, experience(s) -> experiences. */
static const char *category_of(const char *s)
{
    if (!strcmp(s, "rule") || !strcmp(s, "rules"))
        return "rules";
    if (!strcmp(s, "experience") || !strcmp(s, "experiences"))
        return "experiences";
    return NULL;
}

/* Check a number option (when given) and append "&name=value" to q. */
static int add_number(const struct args *a, enum opt o, const char *name, long min, long max,
                      struct buf *q)
{
    long v;
    if (!a->val[o])
        return 0;
    if (parse_long(a->val[o], min, max, &v)) {
        fprintf(stderr, "knowhub: --%s must be a whole number from %ld to %ld (got '%.40s')\n",
                opt_names[o], min, max, a->val[o]);
        return -1;
    }
    buf_addf(q, "&%s=%ld", name, v);
    return 0;
}

static int add_category(const struct args *a, struct buf *q)
{
    const char *c;
    if (!a->val[O_CATEGORY])
        return 0;
    if (!(c = category_of(a->val[O_CATEGORY]))) {
        fprintf(stderr, "knowhub: --category must be rule or experience (got '%.40s')\n",
                a->val[O_CATEGORY]);
        return -1;
    }
    buf_addf(q, "&category=%s", c);
    return 0;
}

/* Paging: --limit, and --offset or --page (1-based, of --limit rows). */
static int add_paging(const struct args *a, long max_limit, long default_limit, struct buf *q)
{
    long limit = default_limit, page;
    if (add_number(a, O_LIMIT, "limit", 1, max_limit, q))
        return -1;
    if (a->val[O_LIMIT])
        parse_long(a->val[O_LIMIT], 1, max_limit, &limit);
    if (a->val[O_PAGE] && a->val[O_OFFSET]) {
        fputs("knowhub: give --offset or --page, not both\n", stderr);
        return -1;
    }
    if (a->val[O_PAGE]) {
        if (parse_long(a->val[O_PAGE], 1, 1000000, &page)) {
            fprintf(stderr,
                    "knowhub: --page must be a whole number from 1 to 1000000 (got '%.40s')\n",
                    a->val[O_PAGE]);
            return -1;
        }
        buf_addf(q, "&offset=%ld", (page - 1) * limit);
        return 0;
    }
    return add_number(a, O_OFFSET, "offset", 0, 1000000000L, q);
}

/* The query part "?a=b&..." of q: its first '&' becomes '?'. */
static const char *query_text(struct buf *q)
{
    if (q->len && q->data[0] == '&')
        q->data[0] = '?';
    return q->data;
}

/* Call METHOD path (no body); the path is checked here once. */
static int call(struct client *c, const char *method, struct buf *path, struct json_object **data)
{
    if (buf_failed(path)) {
        fputs("knowhub: the request is too long\n", stderr);
        return CLIENT_EXIT_USAGE;
    }
    return client_call(c, method, path->data, NULL, data);
}

static int get(struct client *c, struct buf *path, struct json_object **data)
{
    return call(c, "GET", path, data);
}

/* GET head + arg (escaped; NULL: none) + query and print the answer: the
 * data with --json, else the table of its member key, then the page's
 * place on stderr (page_what, e.g. "entries"), or "nothing found" when
 * there is no row and no page. */
static int show_rows(struct client *c, const struct args *a, const char *head, const char *arg,
                     const char *query, const char *key, const struct column *cols, size_t ncols,
                     const char *page_what)
{
    struct json_object *data = NULL;
    struct buf path;
    int rc;
    buf_init(&path, 16384);
    buf_adds(&path, head);
    if (arg)
        client_add_escaped(c, &path, arg);
    buf_adds(&path, query);
    if ((rc = get(c, &path, &data)) == CLIENT_EXIT_OK) {
        if (a->json)
            print_json(data);
        else if (!page_what && count_of(rows_of(data, key)) == 0)
            fputs("knowhub: nothing found\n", stderr);
        else
            print_table(cols, ncols, rows_of(data, key));
        if (!a->json && page_what)
            say_page(data, key, page_what);
    }
    json_object_put(data);
    buf_release(&path);
    return rc;
}

/* ---- the commands ----------------------------------------------------------- */

/* --mode: the server checks the value; here only that it is a word. */
static int add_mode(const struct args *a, struct buf *q)
{
    const char *m = a->val[O_MODE];
    if (!m)
        return 0;
    if (!*m || strlen(m) > 32 || strspn(m, "abcdefghijklmnopqrstuvwxyz") != strlen(m)) {
        fprintf(stderr, "knowhub: --mode must be a word such as lexical (got '%.40s')\n", m);
        return -1;
    }
    buf_addf(q, "&mode=%s", m);
    return 0;
}

static int search_query(const struct args *a, struct buf *q)
{
    return add_number(a, O_LIMIT, "top_k", 1, 50, q) ||
                   add_number(a, O_MIN_SCORE, "min_score", 1, 5, q) || add_category(a, q) ||
                   add_mode(a, q)
               ? -1
               : 0;
}

static int cmd_search(struct client *c, const struct args *a, struct buf *q)
{
    static const struct column cols[] = {
        {"ID", "id", 27},      {"CATEGORY", "category", 11},
        {"SCORE", NULL, 5},    {"RELEVANCE", "relevance", 9},
        {"TITLE", "title", 0},
    };
    return show_rows(c, a, "/api/knowledge/search?q=", a->pos[0], q->data, "results", cols,
                     sizeof cols / sizeof cols[0], NULL);
}

/* path = prefix + the escaped id (+ suffix). */
static void id_path(struct client *c, struct buf *path, const char *prefix, const char *id,
                    const char *suffix)
{
    buf_adds(path, prefix);
    client_add_escaped(c, path, id);
    buf_adds(path, suffix);
}

static void print_meta(const char *name, const char *value)
{
    printf("%-12s ", name);
    put_cell(*value ? value : "-", 1000, 0);
    putchar('\n');
}

/* The strings of a JSON array, joined by ", " (at most 4 KiB). */
static void join_strings(struct json_object *list, struct buf *out)
{
    for (size_t i = 0; i < count_of(list); i++) {
        const char *s = jf_str(json_object_array_get_idx(list, i));
        if (s)
            buf_addf(out, "%s%s", out->len ? ", " : "", s);
    }
    if (buf_failed(out)) {
        buf_truncate(out, 0);
        buf_adds(out, "(too many to show)");
    }
}

static int cmd_get(struct client *c, const struct args *a, struct buf *q)
{
    struct buf path, tags;
    struct json_object *e = NULL;
    char tmp[32], tmp2[32];
    const char *text;
    int rc;
    (void)q;
    buf_init(&path, 16384);
    buf_init(&tags, 4096);
    id_path(c, &path, "/api/knowledge/", a->pos[0], "");
    if ((rc = get(c, &path, &e)))
        goto out;
    if (a->json) {
        print_json(e);
        goto out;
    }
    put_cell(text_of(e, "title", tmp), 1000, 0);
    putchar('\n');
    print_meta("id:", text_of(e, "id", tmp));
    print_meta("category:", text_of(e, "category", tmp));
    print_meta("path:", text_of(e, "path", tmp));
    if (member(e, "description")) /* a rule's */
        print_meta("description:", text_of(e, "description", tmp));
    if (member(e, "always_apply"))
        print_meta("always:", text_of(e, "always_apply", tmp));
    join_strings(rows_of(member(e, "tags"), "labels"), &tags);
    print_meta("tags:", tags.len ? tags.data : "-");
    buf_truncate(&tags, 0);
    join_strings(rows_of(member(e, "tags"), "type"), &tags);
    print_meta("types:", tags.len ? tags.data : "-");
    printf("%-12s ", "score:");
    put_cell(score_of(e, tmp), 32, 0);
    fputs(" (helpful ", stdout);
    put_cell(text_of(member(e, "eval"), "helpful", tmp2), 32, 0);
    fputs(", harmful ", stdout);
    put_cell(text_of(member(e, "eval"), "harmful", tmp2), 32, 0);
    fputs(")\n", stdout);
    print_meta("version:", text_of(e, "version", tmp));
    print_meta("created:", text_of(e, "created_at", tmp));
    print_meta("updated:", text_of(e, "updated_at", tmp));
    text = text_of(e, "scenario", tmp);
    fputs("\nscenario:\n", stdout);
    put_clean(text, strlen(text), 1);
    text = text_of(e, "content", tmp);
    fputs("\n\ncontent:\n", stdout);
    put_clean(text, strlen(text), 1);
    putchar('\n');
out:
    json_object_put(e);
    buf_release(&tags);
    buf_release(&path);
    return rc;
}

/* Read all of fd into b (at most ADD_MAX_INPUT); said on stderr on failure. */
static int read_input(int fd, const char *name, struct buf *b)
{
    char chunk[16384];
    ssize_t got;
    while ((got = read(fd, chunk, sizeof chunk)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            fprintf(stderr, "knowhub: cannot read %s: %s\n", name, strerror(errno));
            return CLIENT_EXIT_USAGE;
        }
        if (buf_add(b, chunk, (size_t)got)) {
            fprintf(stderr,
                    "knowhub: LIMIT_EXCEEDED: %s is larger than %zu KiB, the most add reads (an "
                    "entry's content is at most 2000 characters); nothing was sent\n",
                    name, ADD_MAX_INPUT >> 10);
            return CLIENT_EXIT_REFUSED;
        }
    }
    return 0;
}

/* The content of add: --file F (- for stdin), else stdin. */
static int add_content(const struct args *a, struct buf *content)
{
    const char *file = a->val[O_FILE];
    int fd, rc;
    if (!file || !strcmp(file, "-")) {
        if (isatty(STDIN_FILENO))
            fputs("knowhub: reading the content from stdin (end it with Ctrl-D)\n", stderr);
        return read_input(STDIN_FILENO, "stdin", content);
    }
    fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "knowhub: cannot open %s: %s\n", file, strerror(errno));
        return CLIENT_EXIT_USAGE;
    }
    rc = read_input(fd, file, content);
    close(fd);
    return rc;
}

/* tags "a, b,c" as a JSON list (empty pieces dropped). */
static struct json_object *tag_list(const char *s)
{
    struct json_object *list = json_object_new_array();
    while (*s) {
        size_t n = strcspn(s, ",");
        const char *start = s, *end = s + n;
        while (start < end && (*start == ' ' || *start == '\t'))
            start++;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        if (end > start)
            json_object_array_add(list, json_object_new_string_len(start, (int)(end - start)));
        s += n;
        if (*s == ',')
            s++;
    }
    return list;
}

/* add's checks: a title, a known category (the query string stays empty). */
static int add_query(const struct args *a, struct buf *q)
{
    if (!a->val[O_TITLE]) {
        fputs("knowhub: add needs --title TITLE\n", stderr);
        return -1;
    }
    return add_category(a, q);
}

static int cmd_add(struct client *c, const struct args *a, struct buf *q)
{
    struct buf content;
    struct json_object *body = json_object_new_object(), *e = NULL;
    const char *category = a->val[O_CATEGORY] ? category_of(a->val[O_CATEGORY]) : NULL;
    char tmp[32];
    int rc;
    (void)q;
    buf_init(&content, ADD_MAX_INPUT);
    if ((rc = add_content(a, &content)))
        goto out;
    json_object_object_add(body, "title", json_object_new_string(a->val[O_TITLE]));
    json_object_object_add(
        body, "scenario",
        json_object_new_string(a->val[O_SCENARIO] ? a->val[O_SCENARIO] : a->val[O_TITLE]));
    /* With its length: a NUL in the input reaches the server, which refuses it. */
    json_object_object_add(body, "content",
                           json_object_new_string_len(content.data, (int)content.len));
    if (category)
        json_object_object_add(body, "category", json_object_new_string(category));
    if (a->val[O_TAGS])
        json_object_object_add(body, "tags", tag_list(a->val[O_TAGS]));
    if (a->val[O_PATH])
        json_object_object_add(body, "path", json_object_new_string(a->val[O_PATH]));
    if ((rc = client_call(c, "POST", "/api/knowledge", json_text(body), &e)))
        goto out;
    if (a->json)
        print_json(e);
    else {
        put_cell(text_of(e, "id", tmp), 200, 0);
        putchar('\n');
    }
out:
    json_object_put(e);
    json_object_put(body);
    buf_release(&content);
    return rc;
}

static int list_query(const struct args *a, struct buf *q)
{
    return add_paging(a, 100, 10, q) || add_category(a, q) ? -1 : 0;
}

static int cmd_list(struct client *c, const struct args *a, struct buf *q)
{
    static const struct column cols[] = {
        {"ID", "id", 27},      {"CATEGORY", "category", 11},
        {"SCORE", NULL, 5},    {"UPDATED", "updated_at", 19},
        {"TITLE", "title", 0},
    };
    return show_rows(c, a, "/api/knowledge", NULL, query_text(q), "items", cols,
                     sizeof cols / sizeof cols[0], "entries");
}

static int cmd_delete(struct client *c, const struct args *a, struct buf *q)
{
    struct buf path;
    struct json_object *data = NULL;
    char tmp[32];
    int rc;
    (void)q;
    buf_init(&path, 16384);
    id_path(c, &path, "/api/knowledge/", a->pos[0], "");
    if ((rc = call(c, "DELETE", &path, &data)))
        goto out;
    if (a->json)
        print_json(data);
    else {
        fputs("deleted ", stdout);
        put_cell(text_of(data, "id", tmp), 200, 0);
        fputs(" (version ", stdout);
        put_cell(text_of(data, "version", tmp), 32, 0);
        fputs(")\n", stdout);
    }
out:
    json_object_put(data);
    buf_release(&path);
    return rc;
}

/* traces: a page of the list (--limit 1-100, default 20) or of one
 * trace's log (1-1000, default 100). */
static int traces_query(const struct args *a, struct buf *q)
{
    return add_paging(a, a->npos ? 1000 : 100, a->npos ? 100 : 20, q);
}

static int cmd_traces(struct client *c, const struct args *a, struct buf *q)
{
    static const struct column list_cols[] = {
        {"TRACE", "trace_id", 30}, {"CREATED", "created_at", 26}, {"INJECTED", "injections", 8},
        {"PENDING", "pending", 7}, {"TASK", "task", 0},
    };
    static const struct column log_cols[] = {
        {"KNOWLEDGE", "knowledge_id", 27}, {"GOAL", "goal_id", 8}, {"INJECTED", "injected_at", 26},
        {"VERDICT", "verdict", 10},        {"TASK", "task", 0},
    };
    struct buf path;
    struct json_object *trace = NULL, *log = NULL, *both = NULL;
    char tmp[32];
    int rc;
    buf_init(&path, 16384);
    if (!a->npos) {
        rc = show_rows(c, a, "/api/traces", NULL, query_text(q), "items", list_cols,
                       sizeof list_cols / sizeof list_cols[0], "traces");
        goto out;
    }
    id_path(c, &path, "/api/traces/", a->pos[0], "");
    if ((rc = get(c, &path, &trace)))
        goto out;
    buf_truncate(&path, 0);
    id_path(c, &path, "/api/traces/", a->pos[0], "/knowledge_log");
    buf_adds(&path, query_text(q));
    if ((rc = get(c, &path, &log)))
        goto out;
    if (a->json) {
        both = json_object_new_object();
        json_object_object_add(both, "trace", json_object_get(trace));
        json_object_object_add(both, "knowledge_log", json_object_get(log));
        print_json(both);
        goto out;
    }
    print_meta("trace:", text_of(trace, "trace_id", tmp));
    print_meta("task:", text_of(trace, "task", tmp));
    print_meta("created:", text_of(trace, "created_at", tmp));
    print_meta("injected:", text_of(trace, "injections", tmp));
    print_meta("pending:", text_of(trace, "pending", tmp));
    putchar('\n');
    /* The verdict of each log entry: eval_result.eval_status, "-" while pending. */
    for (size_t i = 0; i < count_of(rows_of(log, "entries")); i++) {
        struct json_object *e = json_object_array_get_idx(rows_of(log, "entries"), i);
        const char *v = text_of(member(e, "eval_result"), "eval_status", tmp);
        if (!json_object_is_type(e, json_type_object))
            continue;
        json_object_object_add(e, "verdict", json_object_new_string(v));
    }
    print_table(log_cols, sizeof log_cols / sizeof log_cols[0], rows_of(log, "entries"));
    say_page(log, "entries", "log entries");
out:
    json_object_put(both);
    json_object_put(log);
    json_object_put(trace);
    buf_release(&path);
    return rc;
}

static int cmd_sessions(struct client *c, const struct args *a, struct buf *q)
{
    static const struct column list_cols[] = {
        {"SESSION", "id", 40},
        {"UPDATED", "updated_at", 26},
        {"TITLE", "title", 0},
    };
    static const struct column table_cols[] = {
        {"TABLE", "id", 30},
        {"PARENT", "parent_id", 30},
        {"NAME", "name", 0},
    };
    struct buf path;
    struct json_object *data = NULL;
    char tmp[32];
    int rc;
    (void)q;
    if (!a->npos)
        return show_rows(c, a, "/api/sessions", NULL, "", "items", list_cols,
                         sizeof list_cols / sizeof list_cols[0], NULL);
    buf_init(&path, 16384);
    id_path(c, &path, "/api/sessions/", a->pos[0], "");
    if ((rc = get(c, &path, &data)))
        goto out;
    if (a->json)
        print_json(data);
    else {
        print_meta("session:", text_of(data, "id", tmp));
        print_meta("title:", text_of(data, "title", tmp));
        print_meta("created:", text_of(data, "created_at", tmp));
        print_meta("updated:", text_of(data, "updated_at", tmp));
        putchar('\n');
        print_table(table_cols, sizeof table_cols / sizeof table_cols[0], rows_of(data, "tables"));
    }
out:
    json_object_put(data);
    buf_release(&path);
    return rc;
}

/* ---- the table of commands ------------------------------------------------------ */

static const struct command commands[] = {
    {"search", search_query, cmd_search,
     BIT(O_CATEGORY) | BIT(O_LIMIT) | BIT(O_MODE) | BIT(O_MIN_SCORE), 1, 1,
     "QUERY [--category rule|experience] [--limit N] [--min-score N] [--mode M]",
     "Search the space's entries (GET /api/knowledge/search): the best --limit (1-50,\n"
     "default 5) with a quality score of at least --min-score (1-5, default 3).\n"
     "--mode lexical|vector|hybrid (vector and hybrid need embeddings; the server's\n"
     "default otherwise). The table: ID, CATEGORY, SCORE, RELEVANCE, TITLE."},
    {"get", NULL, cmd_get, 0, 1, 1, "ID",
     "Print one entry (GET /api/knowledge/{id}): its title, metadata, scenario and\n"
     "content."},
    {"add", add_query, cmd_add,
     BIT(O_TITLE) | BIT(O_CATEGORY) | BIT(O_TAGS) | BIT(O_FILE) | BIT(O_SCENARIO) | BIT(O_PATH), 0,
     0,
     "--title TITLE [--category rule|experience] [--tags a,b] [--scenario TEXT]\n"
     "              [--path PATH] [--file FILE | < FILE]",
     "Create an entry (POST /api/knowledge) and print its id. The content is read\n"
     "from --file FILE, or from stdin when there is no --file or it is -; at most\n"
     "64 KiB is read (an entry's content is at most 2000 characters, a rule's 350).\n"
     "The scenario defaults to the title. A rule needs an admin token and --path."},
    {"list", list_query, cmd_list, BIT(O_CATEGORY) | BIT(O_LIMIT) | BIT(O_OFFSET) | BIT(O_PAGE), 0,
     0, "[--category rule|experience] [--limit N] [--offset N | --page N]",
     "List the space's active entries, newest first (GET /api/knowledge): --limit\n"
     "(1-100, default 10) from --offset (default 0), or page --page (from 1) of\n"
     "--limit entries. Which entries were shown of how many, and the next page's\n"
     "--offset, are said on stderr."},
    {"delete", NULL, cmd_delete, 0, 1, 1, "ID",
     "Delete an entry (DELETE /api/knowledge/{id}; it keeps its revisions and can be\n"
     "brought back with POST /api/knowledge/{id}/revert). A rule needs an admin token."},
    {"traces", traces_query, cmd_traces, BIT(O_LIMIT) | BIT(O_OFFSET) | BIT(O_PAGE), 0, 1,
     "[TRACE_ID] [--limit N] [--offset N | --page N]",
     "Without TRACE_ID, list the traces, newest first (GET /api/traces; --limit 1-100,\n"
     "default 20). With it, print the trace and its knowledge log (GET\n"
     "/api/traces/{id} and .../knowledge_log; --limit 1-1000, default 100): which\n"
     "entries were injected for which goal, and their verdicts. With --json:\n"
     "{\"trace\": ..., \"knowledge_log\": ...}."},
    {"sessions", NULL, cmd_sessions, 0, 0, 1, "[SESSION_ID]",
     "Without SESSION_ID, list the analysis sessions, most recent first (GET\n"
     "/api/sessions). With it, print the session and its tables (GET\n"
     "/api/sessions/{id})."},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const char common_help[] =
    "\nCommon options:\n"
    "  --url URL          the server (else $KNOWHUB_URL, else the local server at\n"
    "                     http://$KNOWHUB_HOST:$KNOWHUB_PORT, default 127.0.0.1:8080)\n"
    "  --token-file FILE  the API token's file (else $KNOWHUB_TOKEN, the token itself,\n"
    "                     else $KNOWHUB_TOKEN_FILE; for the local server only, else\n"
    "                     $KNOWHUB_DATA/admin.token). A token is never an argument:\n"
    "                     every user of the host could read it in ps.\n"
    "  --json             print the answer's data as JSON (pretty) instead of a table\n"
    "  --help             this help, on stdout\n"
    "\nExit status: 0 ok; 1 server or network error; 2 usage; 3 not found;\n"
    "4 no token, or the token is refused (401/403); 5 the request was refused\n"
    "(invalid, conflict, over a limit).\n";

static const struct command *command_named(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

int remote_is_command(const char *name)
{
    return command_named(name) != NULL;
}

void remote_usage(FILE *out)
{
    fputs("Content commands (the REST API, on this host or --url; knowhub CMD --help):\n", out);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        size_t first = strcspn(commands[i].synopsis, "\n");
        fprintf(out, "  %-9s %.*s\n", commands[i].name, (int)first, commands[i].synopsis);
    }
}

static void command_help(const struct command *cmd, FILE *out)
{
    fprintf(out, "usage: knowhub %s %s [--url URL] [--token-file FILE] [--json]\n\n%s\n%s",
            cmd->name, cmd->synopsis, cmd->help, common_help);
}

static int usage_error(const struct command *cmd)
{
    fprintf(stderr, "usage: knowhub %s %s [--url URL] [--token-file FILE] [--json]\n", cmd->name,
            cmd->synopsis);
    fprintf(stderr, "(knowhub %s --help tells more)\n", cmd->name);
    return CLIENT_EXIT_USAGE;
}

/* Parse argv (after the command's name): 0 done, 1 --help asked, -1 a
 * usage error (said). */
static int parse_args(const struct command *cmd, int argc, char **argv, struct args *a)
{
    int options = 1;
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *value = NULL, *eq;
        size_t n;
        int o;
        if (!options || arg[0] != '-' || !strcmp(arg, "-")) {
            if (a->npos == 2 || a->npos == cmd->max_pos) {
                fprintf(stderr, "knowhub: %s: unexpected argument '%.80s'\n", cmd->name, arg);
                return -1;
            }
            a->pos[a->npos++] = arg;
            continue;
        }
        if (!strcmp(arg, "--")) {
            options = 0;
            continue;
        }
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
            return 1;
        if (!strcmp(arg, "--json")) {
            a->json = 1;
            continue;
        }
        if (!strncmp(arg, "--token", 7) && (arg[7] == '\0' || arg[7] == '=')) {
            fputs("knowhub: --token is refused: a token on the command line is seen by every "
                  "user of the host (ps); use --token-file FILE or KNOWHUB_TOKEN\n",
                  stderr);
            return -1;
        }
        eq = strchr(arg, '=');
        n = eq ? (size_t)(eq - arg) - 2 : strlen(arg) - 2;
        for (o = 0; o < O_COUNT; o++)
            if (arg[1] == '-' && strlen(opt_names[o]) == n && !strncmp(arg + 2, opt_names[o], n))
                break;
        if (o == O_COUNT || (o > O_TOKEN_FILE && !(cmd->opts & BIT(o)))) {
            fprintf(stderr, "knowhub: %s: unknown option '%.80s'\n", cmd->name, arg);
            return -1;
        }
        if (eq)
            value = eq + 1;
        else if (i + 1 < argc)
            value = argv[++i];
        else {
            fprintf(stderr, "knowhub: %s: --%s needs a value\n", cmd->name, opt_names[o]);
            return -1;
        }
        if (a->val[o]) {
            fprintf(stderr, "knowhub: %s: --%s given twice\n", cmd->name, opt_names[o]);
            return -1;
        }
        a->val[o] = value;
    }
    if (a->npos < cmd->min_pos) {
        fprintf(stderr, "knowhub: %s: missing argument\n", cmd->name);
        return -1;
    }
    return 0;
}

int remote_main(const struct config *cfg, int argc, char **argv)
{
    const struct command *cmd = command_named(argv[0]);
    struct client *c = NULL;
    struct args a;
    struct buf q;
    int rc;
    if (!cmd)
        return CLIENT_EXIT_USAGE;
    rc = parse_args(cmd, argc - 1, argv + 1, &a);
    if (rc == 1) {
        command_help(cmd, stdout);
        return fflush(stdout) ? CLIENT_EXIT_SERVER : CLIENT_EXIT_OK;
    }
    if (rc < 0)
        return usage_error(cmd);
    buf_init(&q, 4096);
    if (cmd->query && cmd->query(&a, &q))
        rc = CLIENT_EXIT_USAGE;
    else if (buf_failed(&q)) {
        fputs("knowhub: the options are too long\n", stderr);
        rc = CLIENT_EXIT_USAGE;
    } else if ((rc = client_open(cfg, a.val[O_URL], a.val[O_TOKEN_FILE], &c)) == 0)
        rc = cmd->run(c, &a, &q);
    client_free(c);
    buf_release(&q);
    if (fflush(stdout) && rc == CLIENT_EXIT_OK) {
        fprintf(stderr, "knowhub: cannot write the output: %s\n", strerror(errno));
        rc = CLIENT_EXIT_SERVER;
    }
    return rc;
}
