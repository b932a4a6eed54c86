/* store/pg_terms.c: KnowHub's own tokenizer in PostgreSQL's full-text
 * search. An entry's words are made in C, by the tokenizer FTS5 uses, and
 * stored as tsvectors (knowledge_terms, GIN indexes); a search's terms
 * become a tsquery. PostgreSQL's parsers never see the text, so both
 * backends find the same candidates ("sales_data_2024" stays one word, a
 * Han run becomes bigrams).
 *
 * FTS5's two indexes become two columns: head (title, tags, stem) and tsv
 * (every field). Its column filters become lexemes of their own, not
 * weights: "T:word", "G:word", "S:word" for a word in the title, tags or
 * stem, beside the word itself. A weight is not in the GIN index (each
 * match would be read back from the table) nor in the planner's statistics
 * (it took a rare field match for a common word and scanned); a lexeme is in
 * both. Tokens are lower-cased, so an upper-case letter never starts one:
 * "T:..." never meets a word or a prefix of one. No positions: no query asks
 * for a phrase. */
#include "store/store_int.h"
#include "domain/tokenize.h"

#include <string.h>

/* PostgreSQL's limit: a lexeme under 2 KiB (with its 2-byte mark). */
#define LEXEME_MAX 2040

/* A quoted lexeme, mark (e.g. "H:", may be "") then the word: inside '...',
 * a quote or backslash is escaped with a backslash. */
static void add_lexeme(struct buf *out, const char *mark, const char *t, size_t n)
{
    buf_addch(out, '\'');
    buf_adds(out, mark);
    for (size_t i = 0; i < n; i++) {
        if (t[i] == '\'' || t[i] == '\\')
            buf_addch(out, '\\');
        buf_addch(out, t[i]);
    }
    buf_addch(out, '\'');
}

struct vector_ctx {
    struct buf *head, *all;
    const char *field; /* "T:", "G:", "S:" for a head field, NULL for scenario and body */
};

static void add_to(struct buf *out, const char *mark, const char *t, size_t n)
{
    buf_addch(out, ' ');
    add_lexeme(out, mark, t, n);
}

static int add_token(void *arg, const char *token, size_t n, size_t start, size_t end)
{
    struct vector_ctx *c = arg;
    (void)start;
    (void)end;
    if (n == 0 || n > LEXEME_MAX)
        return 0; /* PostgreSQL refuses longer words; no query holds one */
    /* repeated lexemes are fine: PostgreSQL keeps each once */
    add_to(c->all, "", token, n);
    if (c->field) {
        add_to(c->all, c->field, token, n);
        add_to(c->head, "", token, n);
        add_to(c->head, c->field, token, n);
    }
    return 0;
}

static void add_field(struct buf *head, struct buf *all, const char *text, size_t len,
                      const char *field)
{
    struct vector_ctx c = {head, all, field};
    tokenize_terms(text, len, add_token, &c);
}

/* The file stem of a path as migrate.c's STEM_SQL makes it for FTS5: after
 * the first '/', without the last three characters (".md"). */
void store_path_stem_of(const char *path, const char **stem, size_t *len)
{
    const char *slash = strchr(path, '/');
    const char *p = slash ? slash + 1 : path;
    size_t n = strlen(p);
    *stem = p;
    *len = n > 3 ? n - 3 : 0;
}

int store_terms_refresh(struct store *st, const char *id)
{
    struct cursor *s;
    struct buf head, tsv;
    int rc;
    if (!st->pg)
        return STORE_OK; /* SQLite: triggers keep FTS5 in step */
    if (!(s = stmt_bind(st, S_K_TERMS_SOURCE, "t", id)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) != STEP_ROW)
        return stmt_row_end(s, rc) == STORE_NOT_FOUND ? STORE_OK : step_status(rc);
    if (strcmp(stmt_col_text(s, 2), "active") != 0)
        return stmt_row_end(s, rc);    /* a trigger took its terms away */
    buf_init(&head, (size_t)64 << 20); /* grow as needed; an entry is far smaller */
    buf_init(&tsv, (size_t)64 << 20);
    {
        const char *stem;
        size_t stem_len;
        const char *title = stmt_col_text(s, 5), *tags = stmt_col_text(s, 6);
        const char *scenario = stmt_col_text(s, 8), *content = stmt_col_text(s, 9);
        store_path_stem_of(stmt_col_text(s, 7), &stem, &stem_len);
        add_field(&head, &tsv, title, strlen(title), "T:");
        add_field(&head, &tsv, tags, strlen(tags), "G:");
        add_field(&head, &tsv, stem, stem_len, "S:");
        add_field(&head, &tsv, scenario, strlen(scenario), NULL);
        add_field(&head, &tsv, content, strlen(content), NULL);
    }
    {
        long long seq = stmt_col_int64(s, 0), types = stmt_col_int64(s, 3);
        char *space = stmt_col_dup(s, 1), *category = stmt_col_dup(s, 4);
        stmt_finish(s);
        rc =
            stmt_run(st, S_K_TERMS_PUT, "LtLttt", seq, space, types, category, head.data, tsv.data);
        free(space);
        free(category);
    }
    buf_release(&head);
    buf_release(&tsv);
    return rc;
}

/* The terms joined by the query's operator, each with mark ("" the words
 * themselves, "T:" "G:" "S:" one field's), as prefixes with ":*". */
static void add_terms(struct buf *out, const struct store_match_query *q, const char *mark)
{
    buf_addch(out, '(');
    for (size_t i = 0; i < q->n_terms; i++) {
        if (i)
            buf_adds(out, q->op == MATCH_OR ? " | " : " & ");
        add_lexeme(out, mark, q->terms[i], strlen(q->terms[i]));
        if (q->prefix)
            buf_adds(out, ":*");
    }
    buf_addch(out, ')');
}

void pg_match_query(struct buf *out, const struct store_match_query *q)
{
    static const struct {
        unsigned field;
        const char *mark;
    } fields[] = {{MATCH_TITLE, "T:"}, {MATCH_TAGS, "G:"}, {MATCH_STEM, "S:"}};
    buf_reset(out);
    if (!q->fields) {
        /* anywhere in the index's column (head or tsv: S_MATCH_HEAD, S_MATCH) */
        add_terms(out, q, "");
        return;
    }
    /* in each field named, as FTS5's "{title} : (...) AND {tags} : (...)" */
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        if (!(q->fields & fields[f].field))
            continue;
        if (out->len)
            buf_adds(out, " & ");
        add_terms(out, q, fields[f].mark);
    }
}
