/* store/pg_terms.c: KnowHub's own tokenizer in PostgreSQL's full-text
 * search. An entry's words are made in C, by the tokenizer FTS5 uses, and
 * stored as a tsvector (knowledge_terms, a GIN index); a search's terms
 * become a tsquery. PostgreSQL's parsers never see the text, so both
 * backends find the same candidates ("sales_data_2024" stays one word, a
 * Han run becomes bigrams). Weights stand for FTS5's columns: A title,
 * B tags, C the file stem, D scenario and body. */
#include "store/store_int.h"
#include "domain/tokenize.h"

#include <string.h>

/* PostgreSQL's limits: a lexeme under 2 KiB, positions up to 16,383. */
#define LEXEME_MAX 2046
#define POSITION_MAX 16383

/* A quoted lexeme: inside '...', a quote or backslash is escaped with a backslash. */
static void add_lexeme(struct buf *out, const char *t, size_t n)
{
    buf_addch(out, '\'');
    for (size_t i = 0; i < n; i++) {
        if (t[i] == '\'' || t[i] == '\\')
            buf_addch(out, '\\');
        buf_addch(out, t[i]);
    }
    buf_addch(out, '\'');
}

struct vector_ctx {
    struct buf *out;
    char weight;
    long *position;
};

static int add_token(void *arg, const char *token, size_t n, size_t start, size_t end)
{
    struct vector_ctx *c = arg;
    (void)start;
    (void)end;
    if (n == 0 || n > LEXEME_MAX)
        return 0; /* PostgreSQL refuses longer words; no query holds one */
    if (c->out->len)
        buf_addch(c->out, ' ');
    add_lexeme(c->out, token, n);
    if (*c->position < POSITION_MAX)
        ++*c->position;
    buf_addf(c->out, ":%ld%c", *c->position, c->weight);
    return 0;
}

static void add_field(struct buf *out, const char *text, size_t len, char weight, long *position)
{
    struct vector_ctx c = {out, weight, position};
    tokenize(text, len, add_token, &c);
}

/* The file stem of a path as migrate.c's STEM_SQL makes it for FTS5: after
 * the first '/', without the last three characters (".md"). */
static void stem_of(const char *path, const char **stem, size_t *len)
{
    const char *slash = strchr(path, '/');
    const char *p = slash ? slash + 1 : path;
    size_t n = strlen(p);
    *stem = p;
    *len = n > 3 ? n - 3 : 0;
}

int terms_refresh(struct store *st, const char *id)
{
    struct cursor *s;
    struct buf tsv;
    long position = 0;
    int rc;
    if (!st->pg)
        return STORE_OK; /* SQLite: triggers keep FTS5 in step */
    if (!(s = stmt_bind(st, S_K_TERMS_SOURCE, "t", id)))
        return STORE_ERROR;
    if ((rc = step(s)) != STEP_ROW)
        return row_end(s, rc) == STORE_NOT_FOUND ? STORE_OK : step_status(rc);
    if (strcmp(col_text(s, 2), "active") != 0)
        return row_end(s, rc);        /* a trigger took its terms away */
    buf_init(&tsv, (size_t)64 << 20); /* grows as needed; an entry is far smaller */
    {
        const char *stem;
        size_t stem_len;
        const char *title = col_text(s, 5), *tags = col_text(s, 6);
        const char *scenario = col_text(s, 8), *content = col_text(s, 9);
        stem_of(col_text(s, 7), &stem, &stem_len);
        add_field(&tsv, title, strlen(title), 'A', &position);
        add_field(&tsv, tags, strlen(tags), 'B', &position);
        add_field(&tsv, stem, stem_len, 'C', &position);
        add_field(&tsv, scenario, strlen(scenario), 'D', &position);
        add_field(&tsv, content, strlen(content), 'D', &position);
    }
    {
        long long seq = col_int64(s, 0), types = col_int64(s, 3);
        char *space = col_dup(s, 1), *category = col_dup(s, 4);
        stmt_finish(s);
        rc = stmt_run(st, S_K_TERMS_PUT, "LtLtt", seq, space, types, category, tsv.data);
        free(space);
        free(category);
    }
    buf_release(&tsv);
    return rc;
}

/* One term of a query: 'word', a prefix 'word':*, in the weights given. */
static void add_query_term(struct buf *out, const char *term, int prefix, const char *weights)
{
    add_lexeme(out, term, strlen(term));
    if (prefix || *weights)
        buf_addch(out, ':');
    if (prefix)
        buf_addch(out, '*');
    buf_adds(out, weights);
}

/* The terms joined by the query's operator, each in weights. */
static void add_terms(struct buf *out, const struct store_match_query *q, const char *weights)
{
    buf_addch(out, '(');
    for (size_t i = 0; i < q->n_terms; i++) {
        if (i)
            buf_adds(out, q->op == MATCH_OR ? " | " : " & ");
        add_query_term(out, q->terms[i], q->prefix, weights);
    }
    buf_addch(out, ')');
}

void pg_match_query(struct buf *out, const struct store_match_query *q)
{
    static const struct {
        unsigned field;
        const char *weight;
    } fields[] = {{MATCH_TITLE, "A"}, {MATCH_TAGS, "B"}, {MATCH_STEM, "C"}};
    buf_reset(out);
    if (!q->fields) {
        /* anywhere, or anywhere in the head (title, tags, stem) */
        add_terms(out, q, q->index == MATCH_HEAD ? "ABC" : "");
        return;
    }
    /* in each field named, as FTS5's "{title} : (...) AND {tags} : (...)" */
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        if (!(q->fields & fields[f].field))
            continue;
        if (out->len)
            buf_adds(out, " & ");
        add_terms(out, q, fields[f].weight);
    }
}
