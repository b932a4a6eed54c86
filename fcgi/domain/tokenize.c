/* tokenize: the tokenizer shared by the FTS5 index and queries. */
#include "domain/tokenize.h"
#include "base/buf.h"
#include "base/util.h"

#include <libstemmer.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const english_stop[] = {
    "a",     "an",    "the",  "is",    "are",    "was",    "were",    "be",    "been",   "being",
    "have",  "has",   "had",  "do",    "does",   "did",    "will",    "would", "shall",  "should",
    "may",   "might", "must", "can",   "could",  "i",      "me",      "my",    "we",     "our",
    "you",   "your",  "he",   "him",   "his",    "she",    "her",     "it",    "its",    "they",
    "them",  "their", "what", "which", "who",    "whom",   "this",    "that",  "these",  "those",
    "am",    "if",    "or",   "but",   "not",    "no",     "nor",     "so",    "too",    "very",
    "and",   "as",    "at",   "by",    "for",    "from",   "in",      "into",  "of",     "on",
    "to",    "up",    "with", "about", "after",  "before", "between", "down",  "during", "each",
    "few",   "more",  "most", "other", "some",   "such",   "than",    "then",  "how",    "when",
    "where", "why",   "all",  "any",   "both",   "every",  "here",    "there", "just",   "only",
    "also",  "over",  "own",  "same",  "out",    "show",   "find",    "get",   "use",    "make",
    "help",  "let",   "want", "need",  "please", "like",   "using",   "used",
};

/* Chinese function words: a Han run is cut where one of these stands. Longer
 * entries first so "帮我" wins over "我". */
static const char *const chinese_stop[] = {
    "帮我", "请问", "一下", "什么", "怎么", "如何", "我们", "你们", "他们", "这个",
    "那个", "的",   "了",   "和",   "是",   "在",   "请",   "我",   "你",   "他",
    "她",   "它",   "吗",   "呢",   "吧",   "啊",   "与",   "及",   "或",   "把",
    "被",   "给",   "也",   "都",   "就",   "又",   "还",   "之",   "其",
};

/* Words that questions are full of, dropped from search terms only (the
 * reference score keeps its 118 words above): the rest of the question
 * words and the stems of negated auxiliaries ("didn't" -> "didn" "t"). */
static const char *const term_stop[] = {
    "whose", "whats", "didn", "doesn", "don",    "isn",    "wasn",    "weren", "aren",
    "hasn",  "haven", "hadn", "won",   "wouldn", "couldn", "shouldn", "yes",
};

enum cclass { C_SEP, C_WORD, C_HAN };

/* Decode one code point; invalid bytes give U+FFFD and length 1. */
static size_t decode(const unsigned char *s, size_t n, unsigned *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF && n >= 2 && (s[1] & 0xC0) == 0x80) {
        *cp = ((s[0] & 0x1Fu) << 6) | (s[1] & 0x3Fu);
        return 2;
    }
    if (s[0] >= 0xE0 && s[0] <= 0xEF && n >= 3 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
        *cp = ((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
        return *cp >= 0x800 && (*cp < 0xD800 || *cp > 0xDFFF) ? 3 : (*cp = 0xFFFD, 1);
    }
    if (s[0] >= 0xF0 && s[0] <= 0xF4 && n >= 4 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 &&
        (s[3] & 0xC0) == 0x80) {
        *cp = ((s[0] & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) |
              (s[3] & 0x3Fu);
        return *cp >= 0x10000 && *cp <= 0x10FFFF ? 4 : (*cp = 0xFFFD, 1);
    }
    *cp = 0xFFFD;
    return 1;
}

static size_t encode(unsigned cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Lower-case / fold one code point. */
static unsigned fold(unsigned cp)
{
    if (cp >= 0xFF01 && cp <= 0xFF5E) /* full-width ASCII */
        cp -= 0xFEE0;
    if (cp >= 'A' && cp <= 'Z')
        return cp + 32;
    if (cp < 0x80)
        return cp;
    if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) || (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) ||
        (cp >= 0x410 && cp <= 0x42F))
        return cp + 32;
    if (cp >= 0x400 && cp <= 0x40F)
        return cp + 80;
    if (cp == 0x178) /* Y with diaeresis: its small letter is U+00FF, not U+0179 */
        return 0xFF;
    if (cp >= 0x100 && cp <= 0x17F && cp != 0x130 && cp != 0x131 && cp != 0x138 && cp != 0x149 &&
        cp != 0x17F) {
        /* Latin Extended-A alternates capital/small, with the parity flipped
         * between U+0139 and U+0148 and from U+0179 on. */
        int odd_capital = (cp >= 0x139 && cp <= 0x148) || cp >= 0x179;
        if ((cp & 1) == (unsigned)odd_capital)
            return cp + 1;
    }
    return cp;
}

static int is_han(unsigned cp)
{
    return (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x2FA1F);
}

/* The class of a folded ASCII character (cp < 0x80): lower-case letters,
 * digits and _ make words, the rest separates. */
#define ASCII_WORD(cp) (((cp) >= 'a' && (cp) <= 'z') || ((cp) >= '0' && (cp) <= '9') || (cp) == '_')

static enum cclass classify(unsigned cp)
{
    if (cp < 0x80)
        return ASCII_WORD(cp) ? C_WORD : C_SEP;
    if (cp == 0xFFFD)
        return C_SEP;
    if (is_han(cp))
        return C_HAN;
    /* Punctuation and symbol blocks separate; every other letter is a word letter. */
    if (cp <= 0xBF || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x2BFF) ||
        (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
        (cp >= 0xFF00 && cp <= 0xFF65) || (cp >= 0xE000 && cp <= 0xF8FF) ||
        (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0x1F000 && cp <= 0x1FAFF))
        return C_SEP;
    return C_WORD;
}

struct piece {
    unsigned cp;
    enum cclass cls;
    size_t start, end; /* input byte range */
};

/* The stop lists made ready for lookup, once: the English words in small
 * open-addressing hash sets, the Chinese ones as code points, in the list's
 * order (longest first). */
#define N_ENGLISH (sizeof english_stop / sizeof *english_stop)
#define N_TERM (sizeof term_stop / sizeof *term_stop)
#define N_CHINESE (sizeof chinese_stop / sizeof *chinese_stop)
#define CHINESE_STOP_MAX 4 /* characters in a Chinese stop word, at most */
#define STOP_SLOTS 512     /* a power of two, four times the longest list */

struct stop_set {
    const char *word[STOP_SLOTS]; /* NULL: an empty slot */
    unsigned char len[STOP_SLOTS];
    size_t max; /* the longest word, in bytes */
};

static struct {
    struct stop_set english, term;
    unsigned chinese[N_CHINESE][CHINESE_STOP_MAX]; /* code points, 0 after the last */
    uint64_t chinese_first[16]; /* bit cp % 1024: a Chinese stop word may start with cp */
    unsigned char ascii[128];   /* a folded ASCII byte that makes words, else 0 */
} stops;
static pthread_once_t stops_once = PTHREAD_ONCE_INIT;

/* n >= 1 */
static size_t stop_hash(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    return (n * 37 + u[0] * 11u + u[n / 2] * 5u + u[n - 1]) & (STOP_SLOTS - 1);
}

static void stop_set_make(struct stop_set *set, const char *const *list, size_t count)
{
    if (4 * count > STOP_SLOTS)
        abort(); /* a list too long for the set: a programming error */
    for (size_t i = 0; i < count; i++) {
        size_t n = strlen(list[i]), h = stop_hash(list[i], n);
        while (set->word[h])
            h = (h + 1) & (STOP_SLOTS - 1);
        set->word[h] = list[i];
        set->len[h] = (unsigned char)n;
        set->max = n > set->max ? n : set->max;
    }
}

static int in_set(const struct stop_set *set, const char *s, size_t n)
{
    if (n == 0 || n > set->max)
        return 0;
    for (size_t h = stop_hash(s, n); set->word[h]; h = (h + 1) & (STOP_SLOTS - 1))
        if (set->len[h] == n && memcmp(set->word[h], s, n) == 0)
            return 1;
    return 0;
}

static void stops_make(void)
{
    for (unsigned c = 0; c < 128; c++) {
        unsigned f = c + (c >= 'A' && c <= 'Z' ? 32 : 0);
        stops.ascii[c] = (unsigned char)(ASCII_WORD(f) ? f : 0);
    }
    stop_set_make(&stops.english, english_stop, N_ENGLISH);
    stop_set_make(&stops.term, term_stop, N_TERM);
    for (size_t i = 0; i < N_CHINESE; i++) {
        const unsigned char *w = (const unsigned char *)chinese_stop[i];
        size_t len = strlen(chinese_stop[i]), off = 0;
        for (size_t k = 0; k < CHINESE_STOP_MAX && off < len; k++)
            off += decode(w + off, len - off, &stops.chinese[i][k]);
        if (off < len)
            abort(); /* a word longer than CHINESE_STOP_MAX: a programming error */
        stops.chinese_first[stops.chinese[i][0] % 1024 / 64] |= 1ULL << (stops.chinese[i][0] % 64);
    }
}

static int english_stop_word(const char *s, size_t n)
{
    pthread_once(&stops_once, stops_make);
    return in_set(&stops.english, s, n);
}

/* The first byte of code point cp in UTF-8. */
static unsigned char lead_byte(unsigned cp)
{
    return (unsigned char)(cp < 0x80      ? cp
                           : cp < 0x800   ? 0xC0 | (cp >> 6)
                           : cp < 0x10000 ? 0xE0 | (cp >> 12)
                                          : 0xF0 | (cp >> 18));
}

/* 1 when f (NULL: every token) lets through a token starting with byte b /
 * with Han character cp. */
static int wanted(const struct token_filter *f, unsigned char b)
{
    return !f || f->first[b / 8] >> (b % 8) & 1;
}

static int wanted_han(const struct token_filter *f, unsigned cp)
{
    return !f || f->han[cp % 4096 / 8] >> (cp % 8) & 1;
}

void token_filter_add(struct token_filter *f, const char *term, size_t n)
{
    unsigned cp;
    if (n == 0)
        return;
    f->first[(unsigned char)term[0] / 8] |= (unsigned char)(1u << ((unsigned char)term[0] % 8));
    decode((const unsigned char *)term, n, &cp);
    if (is_han(cp))
        f->han[cp % 4096 / 8] |= (unsigned char)(1u << (cp % 8));
}

/* Emit a word made of pieces [a, b). */
static int emit_word(const struct piece *p, size_t a, size_t b, const struct token_filter *f,
                     token_fn emit, void *ctx)
{
    char word[256];
    size_t n = 0;
    int ascii = 1;
    if (!wanted(f, lead_byte(p[a].cp)))
        return 0;
    for (size_t i = a; i < b && n + 4 <= sizeof word; i++) {
        if (p[i].cp < 0x80) {
            word[n++] = (char)p[i].cp;
        } else {
            n += encode(p[i].cp, word + n);
            ascii = 0;
        }
    }
    if (ascii && (n <= 2 || english_stop_word(word, n)))
        return 0;
    return emit(ctx, word, n, p[a].start, p[b - 1].end);
}

/* Length in pieces of a Chinese stop word starting at piece i, or 0. */
static size_t chinese_stop_at(const struct piece *p, size_t i, size_t end)
{
    unsigned cp = p[i].cp;
    pthread_once(&stops_once, stops_make);
    if (!(stops.chinese_first[cp % 1024 / 64] >> (cp % 64) & 1))
        return 0;
    for (size_t s = 0; s < N_CHINESE; s++) {
        const unsigned *w = stops.chinese[s];
        size_t k = 0;
        while (k < CHINESE_STOP_MAX && w[k] && i + k < end && p[i + k].cp == w[k])
            k++;
        if (k && (k == CHINESE_STOP_MAX || !w[k]))
            return k;
    }
    return 0;
}

/* Emit bigrams (or a unigram) of Han pieces [a, b). */
static int emit_han(const struct piece *p, size_t a, size_t b, const struct token_filter *f,
                    token_fn emit, void *ctx)
{
    char gram[8];
    int rc;
    if (b - a == 1) {
        size_t n = encode(p[a].cp, gram);
        return wanted_han(f, p[a].cp) ? emit(ctx, gram, n, p[a].start, p[a].end) : 0;
    }
    for (size_t i = a; i + 1 < b; i++) {
        size_t n;
        if (!wanted_han(f, p[i].cp))
            continue;
        n = encode(p[i].cp, gram);
        n += encode(p[i + 1].cp, gram + n);
        if ((rc = emit(ctx, gram, n, p[i].start, p[i + 1].end)))
            return rc;
    }
    return 0;
}

/* Cut a Han run [a, b) at stop words and emit the pieces between. */
static int emit_han_run(const struct piece *p, size_t a, size_t b, const struct token_filter *f,
                        token_fn emit, void *ctx)
{
    size_t seg = a, i = a;
    int rc;
    while (i < b) {
        size_t k = chinese_stop_at(p, i, b);
        if (k) {
            if (i > seg && (rc = emit_han(p, seg, i, f, emit, ctx)))
                return rc;
            i += k;
            seg = i;
        } else {
            i++;
        }
    }
    return seg < b ? emit_han(p, seg, b, f, emit, ctx) : 0;
}

#define CHUNK 512
#define ASCII_WORD_MAX 253 /* bytes of an ASCII word emit_word keeps */

/* The length of the chunk tokenize() would fill from text[0..len) when all
 * of it is ASCII (one piece per byte, the same end), or 0. */
static size_t ascii_chunk(const char *text, size_t len)
{
    size_t i = 0;
    /* eight bytes at a time while none of them can end the chunk */
    for (; i + 8 <= len && i + 8 <= CHUNK - 65; i += 8) {
        uint64_t w;
        memcpy(&w, text + i, sizeof w);
        if (w & 0x8080808080808080ULL)
            return 0;
    }
    for (; i < len && i < CHUNK; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x80)
            return 0;
        if (i + 1 >= CHUNK - 64 && !stops.ascii[c])
            return i + 1;
    }
    return i;
}

/* Emit the words of an all-ASCII chunk text[0..n) at offset base, exactly as
 * the pieces would (emit_word): most text, without decoding or pieces. */
static int ascii_words(const char *text, size_t base, size_t n, const struct token_filter *f,
                       token_fn emit, void *ctx)
{
    char word[ASCII_WORD_MAX];
    int rc;
    for (size_t i = 0, j; i < n; i = j) {
        size_t w = 0;
        unsigned char c = stops.ascii[(unsigned char)text[i]];
        if (c && !wanted(f, c)) { /* a word the caller does not want: skip it */
            for (j = i + 1; j < n && stops.ascii[(unsigned char)text[j]]; j++)
                ;
            continue;
        }
        for (j = i; j < n && (c = stops.ascii[(unsigned char)text[j]]); j++)
            if (w < sizeof word)
                word[w++] = (char)c;
        if (j == i) {
            j++;
            continue;
        }
        if (w > 2 && !english_stop_word(word, w) && (rc = emit(ctx, word, w, base + i, base + j)))
            return rc;
    }
    return 0;
}

int tokenize(const char *text, size_t len, token_fn emit, void *ctx)
{
    return tokenize_only(text, len, NULL, emit, ctx);
}

int tokenize_only(const char *text, size_t len, const struct token_filter *f, token_fn emit,
                  void *ctx)
{
    struct piece p[CHUNK + 1];
    size_t pos = 0;
    int rc;
    pthread_once(&stops_once, stops_make);
    while (pos < len) {
        size_t n = ascii_chunk(text + pos, len - pos), run;
        if (n) {
            if ((rc = ascii_words(text + pos, pos, n, f, emit, ctx)))
                return rc;
            pos += n;
            continue;
        }
        /* Fill a chunk, never ending it inside a run (unless the run is huge). */
        while (pos < len && n < CHUNK) {
            unsigned cp = (unsigned char)text[pos];
            size_t k = 1;
            if (cp < 0x80) { /* ASCII, most of most texts: fold() and classify() inline */
                cp += cp >= 'A' && cp <= 'Z' ? 32 : 0;
                p[n].cls = ASCII_WORD(cp) ? C_WORD : C_SEP;
            } else {
                k = decode((const unsigned char *)text + pos, len - pos, &cp), cp = fold(cp);
                p[n].cls = classify(cp);
            }
            p[n].cp = cp;
            p[n].start = pos;
            p[n].end = pos + k;
            pos += k;
            n++;
            if (n >= CHUNK - 64 && p[n - 1].cls == C_SEP)
                break;
        }
        for (size_t i = 0; i < n; i = run) {
            enum cclass cls = p[i].cls;
            run = i + 1;
            while (run < n && p[run].cls == cls)
                run++;
            if (cls == C_WORD) {
                if ((rc = emit_word(p, i, run, f, emit, ctx)))
                    return rc;
            } else if (cls == C_HAN) {
                if ((rc = emit_han_run(p, i, run, f, emit, ctx)))
                    return rc;
            }
        }
    }
    return 0;
}

void tokenize_fold(const char *text, size_t len, struct buf *out)
{
    size_t pos = 0;
    buf_reset(out);
    while (pos < len) {
        unsigned cp;
        char enc[4];
        pos += decode((const unsigned char *)text + pos, len - pos, &cp);
        buf_add(out, enc, encode(fold(cp), enc));
    }
}

/* ---- search terms: stemmed ---- */

/* A Snowball stemmer is not thread-safe: one per thread, made on first use
 * and deleted when the thread ends. */
static pthread_key_t stemmer_key;
static pthread_once_t stemmer_once = PTHREAD_ONCE_INIT;

static void stemmer_free(void *p)
{
    sb_stemmer_delete(p);
}

static void stemmer_key_make(void)
{
    (void)pthread_key_create(&stemmer_key, stemmer_free);
}

static struct sb_stemmer *stemmer(void)
{
    struct sb_stemmer *s;
    pthread_once(&stemmer_once, stemmer_key_make);
    s = pthread_getspecific(stemmer_key);
    if (!s && (s = sb_stemmer_new("english", NULL)))
        (void)pthread_setspecific(stemmer_key, s);
    return s;
}

struct term_ctx {
    token_fn emit;
    void *ctx;
};

static int letters_only(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < 'a' || s[i] > 'z')
            return 0;
    return 1;
}

/* The thread's last stems, by word (direct-mapped): a text's words repeat,
 * and a stem costs more than the lookup. Words of up to STEM_WORD bytes. */
#define STEM_SLOTS 1024
#define STEM_WORD 23
struct stem_slot {
    unsigned char wlen, slen; /* wlen 0: empty */
    char word[STEM_WORD], stem[STEM_WORD];
};
static _Thread_local struct stem_slot stem_cache[STEM_SLOTS];

int tokenize_term(const char *token, size_t n, const char **term, size_t *tn)
{
    struct sb_stemmer *s;
    const sb_symbol *stem;
    struct stem_slot *slot = NULL;
    *term = token;
    *tn = n;
    if (!letters_only(token, n))
        return 1; /* identifiers, numbers, other scripts */
    pthread_once(&stops_once, stops_make);
    if (in_set(&stops.term, token, n))
        return 0;
    if (n <= STEM_WORD) {
        slot = &stem_cache[hash_fnv1a(token, n) & (STEM_SLOTS - 1)];
        if (slot->wlen == n && memcmp(slot->word, token, n) == 0) {
            *term = slot->stem;
            *tn = slot->slen;
            return 1;
        }
    }
    if ((s = stemmer()) && (stem = sb_stemmer_stem(s, (const sb_symbol *)token, (int)n))) {
        *term = (const char *)stem;
        *tn = (size_t)sb_stemmer_length(s);
        if (slot && *tn <= STEM_WORD) {
            slot->wlen = (unsigned char)n;
            slot->slen = (unsigned char)*tn;
            memcpy(slot->word, token, n);
            memcpy(slot->stem, stem, *tn);
        }
    } /* else out of memory: the word as it is */
    return 1;
}

static int emit_term(void *arg, const char *token, size_t n, size_t start, size_t end)
{
    struct term_ctx *c = arg;
    const char *term;
    size_t tn;
    return tokenize_term(token, n, &term, &tn) ? c->emit(c->ctx, term, tn, start, end) : 0;
}

int tokenize_terms(const char *text, size_t len, token_fn emit, void *ctx)
{
    struct term_ctx c = {emit, ctx};
    return tokenize(text, len, emit_term, &c);
}

int tokenize_han_bigram(const char *term, size_t n)
{
    unsigned a, b;
    size_t k;
    if (n == 0)
        return 0;
    k = decode((const unsigned char *)term, n, &a);
    if (k >= n || !is_han(a))
        return 0;
    return k + decode((const unsigned char *)term + k, n - k, &b) == n && is_han(b);
}
