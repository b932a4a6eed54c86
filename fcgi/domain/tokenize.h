/* tokenize: the one tokenizer of KnowHub, for indexing (the FTS5 tokenizer
 * "knowhub" in store.c) and for queries, so both always agree.
 *   - ASCII is lower-cased and full-width ASCII folded to half-width;
 *     Latin-1, Latin Extended-A, Greek and Cyrillic capitals are lower-cased;
 *   - words are runs of [a-z0-9_] and of other letters (é, ü, Cyrillic, kana,
 *     Hangul...): "café" stays "café"; Han characters always stand apart,
 *     so "帮我分析ROI" gives the Han piece and "roi";
 *   - Han runs are cut at Chinese stop words (的 了 和 是 在 帮我 请 ...) and
 *     each piece becomes overlapping bigrams (a lone character a unigram);
 *   - English stop words (the reference's list) and ASCII words of two
 *     characters or fewer are dropped. */
#ifndef KNOWHUB_TOKENIZE_H
#define KNOWHUB_TOKENIZE_H

#include <stddef.h>

/* Called for each token: the folded token text (n bytes, not NUL-terminated)
 * and the byte range [start, end) of the input it came from. A non-zero
 * return stops tokenizing and is returned by tokenize(). */
typedef int (*token_fn)(void *ctx, const char *token, size_t n, size_t start, size_t end);

/* Tokenize text[0..len) (UTF-8; invalid bytes are separators). */
int tokenize(const char *text, size_t len, token_fn emit, void *ctx);

/* Which tokens a caller looking for given ones may want: a token whose
 * first byte is not in `first` or, for a Han token, whose first character
 * is not in `han` (by code point modulo 4096) is skipped before it is made.
 * token_filter_add() lets through a term's tokens: a term starts with its
 * token's first byte, and a Han token is its own term. */
struct token_filter {
    unsigned char first[32];
    unsigned char han[512];
};
void token_filter_add(struct token_filter *f, const char *term, size_t n);

/* tokenize() with the tokens f lets through only: the same tokens at the
 * same places, fewer of them, for less work (the passages). */
int tokenize_only(const char *text, size_t len, const struct token_filter *f, token_fn emit,
                  void *ctx);

/* The search terms of a text: tokenize()'s tokens, then English words made
 * of letters only are stemmed (Snowball's English stemmer, libstemmer:
 * "recommendations" and "recommend" meet) and a few more stop words that
 * questions are full of ("whose", "didn", "doesn" ...) are dropped. The
 * indexes (FTS5, PostgreSQL's terms, the BM25F statistics) and a query's
 * candidate terms use these; the reference score matches tokenize()'s. A
 * change here changes TOKENIZER_VERSION, and the indexes are rebuilt. */
int tokenize_terms(const char *text, size_t len, token_fn emit, void *ctx);
#define TOKENIZER_VERSION 3

/* The search term of one tokenize() token, as tokenize_terms gives it: 1
 * with the term in *term (*tn bytes, valid until the thread's next call),
 * 0 when the token is no term (a question word). A term starts with its
 * token's first byte (stemming cuts and changes endings only), so a caller
 * looking for given terms may skip the tokens whose first byte starts none. */
int tokenize_term(const char *token, size_t n, const char **term, size_t *tn);

/* 1 when term[0..n) is two Han characters: Han runs give only bigrams and
 * lone characters, so no token begins with it but itself (a prefix search
 * for it finds what the exact one does). */
int tokenize_han_bigram(const char *term, size_t n);

/* Lower-case and fold text like the tokenizer does (for substring matching
 * of fields against tokens); the result goes to out. */
struct buf;
void tokenize_fold(const char *text, size_t len, struct buf *out);

#endif
