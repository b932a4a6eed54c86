/* conflict: the local contradiction detector (domain/conflict.h). Each entry
 * is read once into a side: its clauses, its cue words and numbers (found in
 * the text, since the tokenizer drops "not", "must" and short numbers as
 * stop words), its words (tokenize_terms, minus the cues and numbers), and
 * the statements built from them. Then the two sides are compared. */
#include "domain/conflict.h"

#include "base/util.h"
#include "domain/simset.h"
#include "domain/tokenize.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the thresholds ------------------------------------------------------- */

/* A contradiction needs the two entries to be about the same thing: at least
 * this share of the smaller entry's words in the other. Below it, opposite
 * advice on one shared word is two topics that meet (enable compression for
 * JSON, disable it for event streams), not a conflict. */
#define TOPIC_FLOOR 0.34
/* A swap of antonyms (sync/async) is a contradiction only between entries
 * this close: everything else about them is the same advice. */
#define ANTONYM_FLOOR 0.5
/* Duplicates share this much of all their words (Jaccard): rewordings of one
 * advice keep most content words, two advices on one topic do not. */
#define DUPLICATE_JACCARD 0.6
/* A refinement holds this share of the smaller entry's words and adds words
 * of its own (a narrower scenario, a condition, a further step). */
#define REFINEMENT_CONTAINMENT 0.75
/* ... and adds at least this many words, and a third of the smaller one's
 * count (a reworded duplicate gains a word or two; with fewer it is one). */
#define REFINEMENT_EXTRA_WORDS 3
/* Words of a statement's target: the words after its cue in the clause, up
 * to an English preposition (Chinese bigrams take two words a character). */
#define TARGET_MAX 8
/* Words before a number that can be its key (since the previous number). */
#define KEY_MAX 3
/* Words of a statement's or a number's scope, at most (clause_scope). */
#define SCOPE_MAX 12

/* Bounds of a side, from CONFLICT_MAX_INPUT: a word of ASCII takes 4 bytes
 * at least with its separator, a Han bigram starts every 3 bytes. */
#define MAX_TOKENS (CONFLICT_MAX_INPUT / 3 + 8)
#define MAX_CUES 1024
#define MAX_NUMBERS 256
#define MAX_STATEMENTS 512
#define QUOTE_MAX 60 /* bytes of quoted evidence in a reason */
/* Statements of the other side compared under one target word, at most: a
 * word repeated in hundreds of statements costs no more than 16. */
#define CANDIDATES_MAX 16

/* ---- the cue table ------------------------------------------------------- */

enum axis { AX_POLARITY, AX_PRESENCE, AX_AMOUNT, AX_ORDER, AX_COUNT };
static const char *const axis_names[AX_COUNT] = {"polarity", "presence", "amount", "order"};

enum cue_kind {
    CUE_ACTION,   /* opens a statement on its axis */
    CUE_MODIFIER, /* sets the sign of what follows */
    CUE_FLIP,     /* "without": flips the open statement ("never ... without") */
    CUE_BREAK,    /* "and", "but": ends the statement and the modifiers' reach */
    CUE_NOT_HAN   /* 不: a modifier only right before an action (不启用, not 不同) */
};

struct cue_rule {
    const char *word;
    enum axis axis;
    int sign;
    enum cue_kind kind;
    int inflects; /* ASCII: also with -s, -es, -d, -ed, -ing (enable: enabling) */
};

/* Han rows: longer words first (不要 before 不). */
static const struct cue_rule CUES[] = {
    /* modifiers */
    {"always", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"must", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"should", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"do", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"never", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"not", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"cannot", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"dont", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"avoid", AX_POLARITY, -1, CUE_MODIFIER, 1},
    {"without", AX_POLARITY, -1, CUE_FLIP, 0},
    {"instead", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"and", AX_POLARITY, 1, CUE_BREAK, 0},
    {"but", AX_POLARITY, 1, CUE_BREAK, 0},
    {"or", AX_POLARITY, 1, CUE_BREAK, 0},
    {"then", AX_POLARITY, 1, CUE_BREAK, 0},
    {"但是", AX_POLARITY, 1, CUE_BREAK, 0},
    {"然后", AX_POLARITY, 1, CUE_BREAK, 0},
    {"而是", AX_POLARITY, 1, CUE_BREAK, 0},
    {"并且", AX_POLARITY, 1, CUE_BREAK, 0},
    {"必须", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"务必", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"总是", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"始终", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"一律", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"应该", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"应当", AX_POLARITY, 1, CUE_MODIFIER, 0},
    {"不要", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"不得", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"不能", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"不可", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"不应", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"不必", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"无需", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"禁止", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"避免", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"从不", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"切勿", AX_POLARITY, -1, CUE_MODIFIER, 0},
    {"勿", AX_POLARITY, -1, CUE_MODIFIER, 0},
    /* actions: polarity */
    {"use", AX_POLARITY, 1, CUE_ACTION, 1},
    {"enable", AX_POLARITY, 1, CUE_ACTION, 1},
    {"allow", AX_POLARITY, 1, CUE_ACTION, 1},
    {"prefer", AX_POLARITY, 1, CUE_ACTION, 1},
    {"require", AX_POLARITY, 1, CUE_ACTION, 1},
    {"disable", AX_POLARITY, -1, CUE_ACTION, 1},
    {"disallow", AX_POLARITY, -1, CUE_ACTION, 1},
    {"forbid", AX_POLARITY, -1, CUE_ACTION, 1},
    {"prohibit", AX_POLARITY, -1, CUE_ACTION, 1},
    {"stop", AX_POLARITY, -1, CUE_ACTION, 0},
    {"skip", AX_POLARITY, -1, CUE_ACTION, 0},
    {"使用", AX_POLARITY, 1, CUE_ACTION, 0},
    {"启用", AX_POLARITY, 1, CUE_ACTION, 0},
    {"开启", AX_POLARITY, 1, CUE_ACTION, 0},
    {"打开", AX_POLARITY, 1, CUE_ACTION, 0},
    {"采用", AX_POLARITY, 1, CUE_ACTION, 0},
    {"允许", AX_POLARITY, 1, CUE_ACTION, 0},
    {"禁用", AX_POLARITY, -1, CUE_ACTION, 0},
    {"关闭", AX_POLARITY, -1, CUE_ACTION, 0},
    {"停用", AX_POLARITY, -1, CUE_ACTION, 0},
    /* actions: presence */
    {"add", AX_PRESENCE, 1, CUE_ACTION, 1},
    {"create", AX_PRESENCE, 1, CUE_ACTION, 1},
    {"install", AX_PRESENCE, 1, CUE_ACTION, 1},
    {"include", AX_PRESENCE, 1, CUE_ACTION, 1},
    {"keep", AX_PRESENCE, 1, CUE_ACTION, 1},
    {"remove", AX_PRESENCE, -1, CUE_ACTION, 1},
    {"delete", AX_PRESENCE, -1, CUE_ACTION, 1},
    {"drop", AX_PRESENCE, -1, CUE_ACTION, 0},
    {"uninstall", AX_PRESENCE, -1, CUE_ACTION, 1},
    {"exclude", AX_PRESENCE, -1, CUE_ACTION, 1},
    {"添加", AX_PRESENCE, 1, CUE_ACTION, 0},
    {"创建", AX_PRESENCE, 1, CUE_ACTION, 0},
    {"保留", AX_PRESENCE, 1, CUE_ACTION, 0},
    {"安装", AX_PRESENCE, 1, CUE_ACTION, 0},
    {"删除", AX_PRESENCE, -1, CUE_ACTION, 0},
    {"移除", AX_PRESENCE, -1, CUE_ACTION, 0},
    {"去掉", AX_PRESENCE, -1, CUE_ACTION, 0},
    {"卸载", AX_PRESENCE, -1, CUE_ACTION, 0},
    /* actions: amount */
    {"increase", AX_AMOUNT, 1, CUE_ACTION, 1},
    {"raise", AX_AMOUNT, 1, CUE_ACTION, 1},
    {"decrease", AX_AMOUNT, -1, CUE_ACTION, 1},
    {"reduce", AX_AMOUNT, -1, CUE_ACTION, 1},
    {"lower", AX_AMOUNT, -1, CUE_ACTION, 1},
    {"增加", AX_AMOUNT, 1, CUE_ACTION, 0},
    {"提高", AX_AMOUNT, 1, CUE_ACTION, 0},
    {"增大", AX_AMOUNT, 1, CUE_ACTION, 0},
    {"调高", AX_AMOUNT, 1, CUE_ACTION, 0},
    {"减少", AX_AMOUNT, -1, CUE_ACTION, 0},
    {"降低", AX_AMOUNT, -1, CUE_ACTION, 0},
    {"减小", AX_AMOUNT, -1, CUE_ACTION, 0},
    {"调低", AX_AMOUNT, -1, CUE_ACTION, 0},
    /* actions: order */
    {"before", AX_ORDER, 1, CUE_ACTION, 0},
    {"after", AX_ORDER, -1, CUE_ACTION, 0},
    {"之前", AX_ORDER, 1, CUE_ACTION, 0},
    {"以前", AX_ORDER, 1, CUE_ACTION, 0},
    {"之后", AX_ORDER, -1, CUE_ACTION, 0},
    {"以后", AX_ORDER, -1, CUE_ACTION, 0},
    /* last: 不 alone, only before an action */
    {"不", AX_POLARITY, -1, CUE_NOT_HAN, 0},
};
#define N_CUES (sizeof CUES / sizeof *CUES)

/* The row of "not": an English contraction ("don't", "shouldn't") is one. */
static size_t cue_not_row(void)
{
    size_t r = 0;
    while (r + 1 < N_CUES && strcmp(CUES[r].word, "not") != 0)
        r++;
    return r;
}

/* ---- units --------------------------------------------------------------- */

/* A unit word: its dimension (numbers in different dimensions are never
 * compared) and its factor to the dimension's base unit, so "30 s" and
 * "30000 ms" agree. Words not listed are a dimension of their own. */
struct unit {
    const char *word;
    const char *dim;
    double factor;
};

static const struct unit UNITS[] = {
    {"ms", "time", 0.001},
    {"millisecond", "time", 0.001},
    {"milliseconds", "time", 0.001},
    {"s", "time", 1},
    {"sec", "time", 1},
    {"secs", "time", 1},
    {"second", "time", 1},
    {"seconds", "time", 1},
    {"min", "time", 60},
    {"mins", "time", 60},
    {"minute", "time", 60},
    {"minutes", "time", 60},
    {"h", "time", 3600},
    {"hr", "time", 3600},
    {"hour", "time", 3600},
    {"hours", "time", 3600},
    {"day", "time", 86400},
    {"days", "time", 86400},
    {"毫秒", "time", 0.001},
    {"秒", "time", 1},
    {"分钟", "time", 60},
    {"小时", "time", 3600},
    {"天", "time", 86400},
    {"kb", "bytes", 1e3},
    {"kib", "bytes", 1024},
    {"mb", "bytes", 1e6},
    {"mib", "bytes", 1048576},
    {"gb", "bytes", 1e9},
    {"gib", "bytes", 1073741824.0},
    {"tb", "bytes", 1e12},
    {"tib", "bytes", 1099511627776.0},
    {"ki", "bytes", 1024}, /* Kubernetes quantities: 512Mi, 2Gi */
    {"mi", "bytes", 1048576},
    {"gi", "bytes", 1073741824.0},
    {"ti", "bytes", 1099511627776.0},
    {"%", "percent", 1},
    {"percent", "percent", 1},
    {"row", "rows", 1},
    {"rows", "rows", 1},
    {"行", "rows", 1},
    {"条", "rows", 1},
    {"time", "times", 1},
    {"times", "times", 1},
    {"次", "times", 1},
};
#define N_UNITS (sizeof UNITS / sizeof *UNITS)

/* Words after a number that are no unit ("30 of them", "5 and 6"). */
static const char *const NOT_UNITS[] = {"of", "to", "and", "or", "in", "on",  "for", "the",
                                        "a",  "an", "per", "at", "is", "are", "by",  "x"};
#define N_NOT_UNITS (sizeof NOT_UNITS / sizeof *NOT_UNITS)

/* ---- a side: one entry read --------------------------------------------- */

struct word { /* a content word (tokenize_terms, not a cue, not a number) */
    uint64_t h;
    uint32_t start, end;
    uint32_t clause;
};

struct cue_hit {
    uint32_t start, end;
    uint32_t clause;
    uint16_t rule;
};

struct number {
    double value; /* in the dimension's base unit */
    uint64_t dim; /* hash of the dimension's name, or of the unit word; 0: none */
    uint32_t start, end;
    uint32_t clause;
    uint32_t key[KEY_MAX]; /* indices of words */
    int nkey;
};

/* The rest of a clause (clause_scope): its words' hashes, sorted and
 * unique, and its English words that stand right before another of its
 * words, with that word ("payment events": a modifier and its head). */
struct scope {
    uint64_t w[SCOPE_MAX];
    int n;
    uint64_t mod[SCOPE_MAX][2];
    int nmod;
};

struct statement {
    enum axis axis;
    int sign;
    int action;                  /* the cue rule of its action, -1: modifiers only */
    int closed;                  /* its phrase ended: no more target words */
    uint32_t cue_start, cue_end; /* the cue words, for the reason */
    uint32_t target[TARGET_MAX]; /* indices of words */
    int ntarget;
    unsigned quals;     /* the qualifiers of its clause (QUALIFIERS) */
    struct scope scope; /* its clause's other words */
};

/* A statement under one of its target words, and a number under one of its
 * key words: the indexes that find the other side's candidates by word. */
struct target_ref {
    uint64_t h;
    uint32_t stmt;
};

struct number_ref {
    uint64_t h, dim;
    double value;
    uint32_t num;
};

struct side {
    char text[CONFLICT_MAX_INPUT + 1];
    size_t len;
    uint32_t clause[CONFLICT_MAX_INPUT + 1]; /* clause[i]: the clause of byte i */
    struct word word[MAX_TOKENS];
    size_t nword;
    struct cue_hit cue[MAX_CUES];
    size_t ncue;
    struct number num[MAX_NUMBERS];
    size_t nnum;
    struct statement stmt[MAX_STATEMENTS];
    size_t nstmt;
    uint64_t set[MAX_TOKENS]; /* the words' hashes, sorted, unique */
    size_t nset;
    struct target_ref by_target[MAX_STATEMENTS * TARGET_MAX]; /* sorted by word */
    size_t nby_target;
    struct number_ref by_key[MAX_NUMBERS * KEY_MAX]; /* sorted by key, unit, value */
    size_t nby_key;
    long difference[MAX_STATEMENTS]; /* only_difference of each statement */
    size_t cue_cursor, num_cursor;   /* tokenizing: the first cue/number not yet passed */
};

/* Append s to the side's text, cut on a character boundary when full. */
static void side_append(struct side *s, const char *t)
{
    size_t n = t ? strlen(t) : 0, room = CONFLICT_MAX_INPUT - s->len;
    if (n == 0)
        return;
    if (n > room) {
        n = room;
        while (n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(s->text + s->len, t, n);
    s->len += n;
    s->text[s->len] = '\0';
}

static int is_ascii_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_word_byte(unsigned char c)
{
    return is_ascii_alpha(c) || is_digit(c) || c == '_' || c == '\'';
}

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* The length of the clause break at text[i], or 0: . ! ? ; : and line
 * breaks, a comma not inside a number (50,000), and their full-width and
 * Chinese forms (。！？；：，、). */
static size_t clause_break_at(const char *text, size_t len, size_t i)
{
    static const char *const han_breaks[] = {"。", "！", "？", "；", "：", "，", "、"};
    unsigned char c = (unsigned char)text[i];
    if (c == '.' || c == ',')
        return i + 1 < len && is_digit((unsigned char)text[i + 1]) && i > 0 &&
                       is_digit((unsigned char)text[i - 1])
                   ? 0
                   : 1;
    if (c == '!' || c == '?' || c == ';' || c == ':' || c == '\n' || c == '\r')
        return 1;
    if (c == 0xE3 || c == 0xEF) /* the Chinese and full-width punctuation blocks */
        for (size_t k = 0; k < sizeof han_breaks / sizeof *han_breaks; k++) {
            size_t n = strlen(han_breaks[k]);
            if (i + n <= len && memcmp(text + i, han_breaks[k], n) == 0)
                return n;
        }
    return 0;
}

static void side_clauses(struct side *s)
{
    uint32_t c = 0;
    for (size_t i = 0; i < s->len;) {
        size_t n = clause_break_at(s->text, s->len, i);
        for (size_t k = 0; k < (n ? n : 1) && i + k < s->len; k++)
            s->clause[i + k] = c;
        if (n)
            c++;
        i += n ? n : 1;
    }
    s->clause[s->len] = c;
}

/* 1 when the lower-cased ASCII word w[0..n) is rule r's word or one of its
 * inflections. */
static int ascii_cue_matches(const struct cue_rule *r, const char *w, size_t n)
{
    static const char *const suffixes[] = {"s", "es", "d", "ed", "ing"};
    size_t k;
    if (r->word[0] != w[0])
        return 0;
    k = strlen(r->word);
    if (n < k || memcmp(w, r->word, k) != 0)
        return 0;
    if (n == k)
        return 1;
    if (!r->inflects)
        return 0;
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if (n - k == strlen(suffixes[i]) && memcmp(w + k, suffixes[i], n - k) == 0)
            return 1;
    /* enable -> enabling: the final e dropped before -ing */
    return r->word[k - 1] == 'e' && n == k + 2 && memcmp(w + k - 1, "ing", 3) == 0;
}

static void add_cue(struct side *s, size_t start, size_t end, size_t rule)
{
    if (s->ncue == MAX_CUES)
        return;
    s->cue[s->ncue].start = (uint32_t)start;
    s->cue[s->ncue].end = (uint32_t)end;
    s->cue[s->ncue].clause = s->clause[start];
    s->cue[s->ncue].rule = (uint16_t)rule;
    s->ncue++;
}

/* The Han cue rule at text[i], or -1; *n its length. */
static int han_cue_at(const struct side *s, size_t i, size_t *n)
{
    for (size_t r = 0; r < N_CUES; r++) {
        const char *w = CUES[r].word;
        size_t k;
        if (w[0] != s->text[i] || (unsigned char)w[0] < 0x80 || w[1] != s->text[i + 1])
            continue;
        k = strlen(w);
        if (i + k > s->len || memcmp(s->text + i, w, k) != 0)
            continue;
        if (CUES[r].kind == CUE_NOT_HAN) {
            size_t m;
            int next = han_cue_at(s, i + k, &m);
            if (next < 0 || CUES[next].kind != CUE_ACTION)
                continue;
        }
        *n = k;
        return (int)r;
    }
    return -1;
}

/* The unit after a number at text[i]: its dimension and factor (dim 0 and
 * factor 1 when none); returns the bytes it takes. */
static size_t unit_at(const struct side *s, size_t i, uint64_t *dim, double *factor)
{
    char w[24];
    size_t j = i, n = 0;
    *dim = 0;
    *factor = 1;
    while (j < s->len && s->text[j] == ' ')
        j++;
    if (j < s->len && s->text[j] == '%') {
        *dim = hash_fnv1a("percent", 7);
        return j + 1 - i;
    }
    if (j < s->len && is_ascii_alpha((unsigned char)s->text[j])) {
        size_t e = j;
        while (e < s->len && is_ascii_alpha((unsigned char)s->text[e])) {
            if (n < sizeof w)
                w[n++] = (char)lower((unsigned char)s->text[e]);
            e++;
        }
        if (n == sizeof w)
            return 0;
        for (size_t k = 0; k < N_NOT_UNITS; k++)
            if (strlen(NOT_UNITS[k]) == n && memcmp(NOT_UNITS[k], w, n) == 0)
                return 0;
        for (size_t k = 0; k < N_UNITS; k++)
            if (strlen(UNITS[k].word) == n && memcmp(UNITS[k].word, w, n) == 0) {
                *dim = hash_fnv1a(UNITS[k].dim, strlen(UNITS[k].dim));
                *factor = UNITS[k].factor;
                return e - i;
            }
        /* connections / connection: one dimension */
        *dim = hash_fnv1a(w, n > 3 && w[n - 1] == 's' ? n - 1 : n);
        return e - i;
    }
    if (j < s->len && (unsigned char)s->text[j] >= 0xE0) {
        static const struct {
            const char *word;
            double factor;
        } scale[] = {{"万", 1e4}, {"千", 1e3}};
        for (size_t k = 0; k < 2; k++) {
            size_t m = strlen(scale[k].word);
            if (j + m <= s->len && memcmp(s->text + j, scale[k].word, m) == 0) {
                *factor = scale[k].factor;
                j += m;
                break;
            }
        }
        for (size_t k = 0; k < N_UNITS; k++) {
            size_t m = strlen(UNITS[k].word);
            if ((unsigned char)UNITS[k].word[0] >= 0x80 && j + m <= s->len &&
                memcmp(s->text + j, UNITS[k].word, m) == 0) {
                *dim = hash_fnv1a(UNITS[k].dim, strlen(UNITS[k].dim));
                *factor *= UNITS[k].factor;
                return j + m - i;
            }
        }
        /* 个, 台 ...: the character itself */
        if (j + 3 <= s->len && (unsigned char)s->text[j] >= 0xE0) {
            *dim = hash_fnv1a(s->text + j, 3);
            return j + 3 - i;
        }
    }
    return 0;
}

/* A number at text[i] (a word start): digits, thousands commas, one decimal
 * point. Versions (1.2.3) and numbers glued to letters (utf8, s3) are none.
 * Returns the bytes read (number and unit), 0 when there is none. */
static size_t number_at(struct side *s, size_t i)
{
    size_t j = i;
    double v = 0, frac = 0.1;
    int dot = 0;
    uint64_t dim;
    double factor;
    while (j < s->len) {
        unsigned char c = (unsigned char)s->text[j];
        if (is_digit(c)) {
            if (dot)
                v += (c - '0') * frac, frac /= 10;
            else
                v = v * 10 + (c - '0');
            j++;
        } else if (c == ',' && !dot && j + 3 < s->len + 1 &&
                   is_digit((unsigned char)s->text[j + 1]) && j + 3 <= s->len &&
                   is_digit((unsigned char)s->text[j + 2]) &&
                   is_digit((unsigned char)s->text[j + 3]) &&
                   (j + 4 >= s->len || !is_digit((unsigned char)s->text[j + 4]))) {
            j++;
        } else if (c == '.' && j + 1 < s->len && is_digit((unsigned char)s->text[j + 1])) {
            if (dot)
                return 0; /* a version */
            dot = 1;
            j++;
        } else {
            break;
        }
    }
    if (j < s->len && (s->text[j] == '_' || (j + 1 < s->len && s->text[j] == '.' &&
                                             is_ascii_alpha((unsigned char)s->text[j + 1]))))
        return 0;
    size_t u = unit_at(s, j, &dim, &factor);
    if (j < s->len && is_ascii_alpha((unsigned char)s->text[j]) && u == 0)
        return 0; /* glued to a word that is no unit */
    if (s->nnum < MAX_NUMBERS) {
        struct number *n = &s->num[s->nnum++];
        n->value = v * factor;
        n->dim = dim;
        n->start = (uint32_t)i;
        n->end = (uint32_t)(j + u);
        n->clause = s->clause[i];
        n->nkey = 0;
    }
    return j + u - i;
}

/* Find the cues and numbers of the side's text, in order. */
static void side_scan(struct side *s)
{
    for (size_t i = 0; i < s->len;) {
        unsigned char c = (unsigned char)s->text[i];
        int word_start = i == 0 || !is_word_byte((unsigned char)s->text[i - 1]);
        if (is_ascii_alpha(c) && word_start) {
            char w[24];
            size_t e = i, n = 0;
            while (e < s->len && is_ascii_alpha((unsigned char)s->text[e])) {
                if (n < sizeof w)
                    w[n++] = (char)lower((unsigned char)s->text[e]);
                e++;
            }
            /* don't, shouldn't, can't (' or U+2019) */
            if (n >= 2 && w[n - 1] == 'n' && e < s->len) {
                size_t q =
                    s->text[e] == '\''
                        ? 1
                        : (e + 3 <= s->len && memcmp(s->text + e, "\xe2\x80\x99", 3) == 0 ? 3 : 0);
                if (q && e + q < s->len && lower((unsigned char)s->text[e + q]) == 't') {
                    add_cue(s, i, e + q + 1, cue_not_row());
                    i = e + q + 1;
                    continue;
                }
            }
            if (n < sizeof w)
                for (size_t r = 0; r < N_CUES; r++)
                    if ((unsigned char)CUES[r].word[0] < 0x80 &&
                        ascii_cue_matches(&CUES[r], w, n)) {
                        add_cue(s, i, e, r);
                        break;
                    }
            i = e;
        } else if (is_digit(c) && word_start && (i == 0 || s->text[i - 1] != '.')) {
            size_t n = number_at(s, i);
            i += n ? n : 1;
            while (!n && i < s->len && is_word_byte((unsigned char)s->text[i]))
                i++;
        } else if (c >= 0xE0) {
            size_t n;
            int r = han_cue_at(s, i, &n);
            if (r >= 0) {
                add_cue(s, i, i + n, (size_t)r);
                i += n;
            } else {
                i++;
                while (i < s->len && ((unsigned char)s->text[i] & 0xC0) == 0x80)
                    i++;
            }
        } else {
            i++;
        }
    }
}

static int all_digits(const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_digit((unsigned char)t[i]))
            return 0;
    return 1;
}

/* tokenize_terms' callback: keep the words that are no cue and no number. */
static int side_word(void *ctx, const char *term, size_t n, size_t start, size_t end)
{
    struct side *s = ctx;
    while (s->cue_cursor < s->ncue && s->cue[s->cue_cursor].end <= start)
        s->cue_cursor++;
    while (s->num_cursor < s->nnum && s->num[s->num_cursor].end <= start)
        s->num_cursor++;
    if (s->cue_cursor < s->ncue && s->cue[s->cue_cursor].start < end)
        return 0;
    if (s->num_cursor < s->nnum && s->num[s->num_cursor].start < end)
        return 0;
    if (all_digits(term, n) || s->nword == MAX_TOKENS)
        return 0;
    s->word[s->nword].h = hash_fnv1a(term, n);
    s->word[s->nword].start = (uint32_t)start;
    s->word[s->nword].end = (uint32_t)end;
    s->word[s->nword].clause = s->clause[start];
    s->nword++;
    return 0;
}

/* ---- statements ---------------------------------------------------------- */

/* English words that end a target's phrase ("enable the slow query log on
 * replicas" is about the log, not the replicas). */
static const char *const PHRASE_ENDS[] = {
    "on",   "in",    "for",   "to",    "with", "at",  "from", "by",  "of",
    "into", "over",  "under", "per",   "than", "via", "when", "if",  "because",
    "so",   "since", "until", "while", "as",   "is",  "are",  "was", "be"};

/* 1 when text[from..to) holds one of PHRASE_ENDS as a word. */
static int phrase_ends(const struct side *s, size_t from, size_t to)
{
    for (size_t i = from; i < to;) {
        size_t e = i, n;
        while (e < to && is_ascii_alpha((unsigned char)s->text[e]))
            e++;
        n = e - i;
        for (size_t k = 0; n && k < sizeof PHRASE_ENDS / sizeof *PHRASE_ENDS; k++)
            if (strlen(PHRASE_ENDS[k]) == n) {
                size_t m = 0;
                while (m < n && lower((unsigned char)s->text[i + m]) == PHRASE_ENDS[k][m])
                    m++;
                if (m == n)
                    return 1;
            }
        i = e > i ? e : i + 1;
    }
    return 0;
}

/* ---- qualifiers ----------------------------------------------------------
 * Opposite advice on different instances, scopes or conditions of one
 * thing is no contradiction: "create every new feature flag disabled" and
 * "delete flags rolled out long ago", "enable debug logs on staging" and
 * "disable them in production", 创建索引 and 删除无效索引. A statement's
 * clause is read for these classes, and two statements clash only when
 * their clauses name the same ones (none on both sides included). */
enum { Q_NEW = 1, Q_OLD = 2, Q_UNUSED = 4, Q_TEST_ENV = 8, Q_PROD_ENV = 16, Q_CONDITION = 32 };

struct qualifier {
    const char *word; /* English: a whole word (lower case); else a substring */
    unsigned cls;
};

static const struct qualifier QUALIFIERS[] = {
    {"new", Q_NEW},
    {"newly", Q_NEW},
    {"old", Q_OLD},
    {"older", Q_OLD},
    {"oldest", Q_OLD},
    {"legacy", Q_OLD},
    {"previous", Q_OLD},
    {"unused", Q_UNUSED},
    {"idle", Q_UNUSED},
    {"stale", Q_UNUSED},
    {"expired", Q_UNUSED},
    {"invalid", Q_UNUSED},
    {"obsolete", Q_UNUSED},
    {"deprecated", Q_UNUSED},
    {"orphaned", Q_UNUSED},
    {"staging", Q_TEST_ENV},
    {"sandbox", Q_TEST_ENV},
    {"development", Q_TEST_ENV},
    {"production", Q_PROD_ENV},
    {"prod", Q_PROD_ENV},
    {"if", Q_CONDITION},
    {"unless", Q_CONDITION},
    {"新", Q_NEW}, /* not in 重新, 更新 (qualifiers_of) */
    {"旧", Q_OLD},
    {"历史", Q_OLD},
    {"以前的", Q_OLD},
    {"无效", Q_UNUSED},
    {"过期", Q_UNUSED},
    {"未使用", Q_UNUSED},
    {"闲置", Q_UNUSED},
    {"废弃", Q_UNUSED},
    {"无用", Q_UNUSED},
    {"测试环境", Q_TEST_ENV},
    {"开发环境", Q_TEST_ENV},
    {"预发", Q_TEST_ENV},
    {"生产环境", Q_PROD_ENV},
    {"线上", Q_PROD_ENV},
    {"如果", Q_CONDITION},
    {"假如", Q_CONDITION},
    {"失败时", Q_CONDITION},
    {"出错时", Q_CONDITION},
};

/* The qualifier classes named in text[from..to). */
static unsigned qualifiers_in(const char *text, size_t from, size_t to)
{
    unsigned q = 0;
    for (size_t i = from; i < to;) {
        unsigned char c = (unsigned char)text[i];
        if (is_ascii_alpha(c)) {
            size_t e = i;
            while (e < to && is_ascii_alpha((unsigned char)text[e]))
                e++;
            for (size_t k = 0; k < sizeof QUALIFIERS / sizeof *QUALIFIERS; k++) {
                const char *w = QUALIFIERS[k].word;
                size_t n = strlen(w), m = 0;
                if ((unsigned char)w[0] >= 0x80 || n != e - i)
                    continue;
                while (m < n && lower((unsigned char)text[i + m]) == (unsigned char)w[m])
                    m++;
                if (m == n)
                    q |= QUALIFIERS[k].cls;
            }
            i = e;
            continue;
        }
        if (c >= 0x80)
            for (size_t k = 0; k < sizeof QUALIFIERS / sizeof *QUALIFIERS; k++) {
                const char *w = QUALIFIERS[k].word;
                size_t n = strlen(w);
                if ((unsigned char)w[0] < 0x80 || i + n > to || memcmp(text + i, w, n) != 0)
                    continue;
                /* 重新 (again) and 更新 (update) are no "new" */
                if (QUALIFIERS[k].cls == Q_NEW && i >= 3 &&
                    (memcmp(text + i - 3, "\xe9\x87\x8d", 3) == 0 || /* 重 */
                     memcmp(text + i - 3, "\xe6\x9b\xb4", 3) == 0))  /* 更 */
                    continue;
                q |= QUALIFIERS[k].cls;
            }
        i++;
    }
    return q;
}

/* The qualifier classes of the clause that holds byte at. */
static unsigned clause_qualifiers(const struct side *s, size_t at)
{
    uint32_t c = s->clause[at];
    size_t from = at, to = at;
    while (from > 0 && s->clause[from - 1] == c)
        from--;
    while (to < s->len && s->clause[to] == c)
        to++;
    return qualifiers_in(s->text, from, to);
}

/* ---- scopes --------------------------------------------------------------
 * The same advice for different things: "increase the cache TTL for product
 * images" and "decrease the cache TTL for price data", "uploads up to 10 MB
 * on the avatar endpoint" and "2 GB on the video endpoint", 商品图片的缓存时间
 * and 价格数据的缓存时间. A statement's (or a number's) scope is the rest of
 * its clause: the content words that are not its target (or key), up to a
 * word that starts a reason ("because ..."). Two clash only when their
 * scopes are not about different things (scopes_differ). */
static const char *const REASON_MARKS[] = {"because", "since", "so",   "otherwise",
                                           "因为",    "否则",  "以免", "以便"};

/* The first reason marker in text[from..to), or to. */
static size_t reason_at(const char *text, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)text[i];
        if (is_ascii_alpha(c) && (i == 0 || !is_ascii_alpha((unsigned char)text[i - 1]))) {
            size_t e = i;
            while (e < to && is_ascii_alpha((unsigned char)text[e]))
                e++;
            for (size_t k = 0; k < sizeof REASON_MARKS / sizeof *REASON_MARKS; k++) {
                const char *w = REASON_MARKS[k];
                size_t n = strlen(w), m = 0;
                if (n != e - i)
                    continue;
                while (m < n && lower((unsigned char)text[i + m]) == (unsigned char)w[m])
                    m++;
                if (m == n)
                    return i;
            }
        } else if (c >= 0x80)
            for (size_t k = 0; k < sizeof REASON_MARKS / sizeof *REASON_MARKS; k++) {
                size_t n = strlen(REASON_MARKS[k]);
                if ((unsigned char)REASON_MARKS[k][0] >= 0x80 && i + n <= to &&
                    memcmp(text + i, REASON_MARKS[k], n) == 0)
                    return i;
            }
    }
    return to;
}

/* 1 when word w is part of a number's value, not of what the number is
 * about: its unit ("100 requests"), or the rate after it ("per minute"). */
static int in_value(const struct side *s, const struct word *w)
{
    for (size_t k = 0; k < s->nnum; k++) {
        const struct number *n = &s->num[k];
        if (n->clause != w->clause)
            continue;
        if (w->start >= n->start && w->start < n->end)
            return 1;
        if (w->start > n->end) {
            size_t i = n->end;
            while (i < w->start && s->text[i] == ' ')
                i++;
            /* "per" itself, and the word after it */
            if (i + 4 <= s->len && memcmp(s->text + i, "per ", 4) == 0) {
                size_t next = i + 4;
                while (next < s->len && s->text[next] == ' ')
                    next++;
                if (w->start == i || w->start == next)
                    return 1;
            }
        }
    }
    return 0;
}

/* The scope of what stands at byte at of clause c (its own words own[0..nown)
 * left out), to a reason marker after at, into out. */
static void clause_scope(const struct side *s, uint32_t c, size_t at, const uint32_t *own, int nown,
                         struct scope *out)
{
    size_t lo = 0, hi = s->nword, to = at, from = at, de = 0, prev = SIZE_MAX;
    int n = 0;
    out->nmod = 0;
    while (to < s->len && s->clause[to] == c)
        to++;
    to = reason_at(s->text, at, to);
    /* 接口容器的内存上限设为512Mi: the words before the last 的 ahead of it
     * say which thing (接口容器); the rest is the thing's own name */
    while (from > 0 && s->clause[from - 1] == c)
        from--;
    for (size_t i = from; i + 3 <= at; i++)
        if (memcmp(s->text + i, "\xe7\x9a\x84", 3) == 0) /* 的 */
            de = i;
    if (de)
        to = de;
    while (lo < hi) { /* the clause's first word: clauses grow with the text */
        size_t mid = lo + (hi - lo) / 2;
        if (s->word[mid].clause < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < s->nword && s->word[i].clause == c && s->word[i].start < to; i++) {
        int mine = in_value(s, &s->word[i]);
        for (int k = 0; k < nown && !mine; k++)
            mine = own[k] == i || s->word[own[k]].h == s->word[i].h;
        if (mine) {
            prev = SIZE_MAX;
            continue;
        }
        if (prev != SIZE_MAX && prev + 1 == i && out->nmod < SCOPE_MAX) {
            out->mod[out->nmod][0] = s->word[prev].h;
            out->mod[out->nmod++][1] = s->word[i].h;
        }
        prev = i;
        if (n < SCOPE_MAX)
            out->w[n++] = s->word[i].h;
    }
    out->n = (int)hashes_sort_unique(out->w, (size_t)n);
}

/* 1 when scope x has an English word y lacks right before a word y has:
 * another modifier of the same head ("payment events" / "analytics
 * events"). */
static int own_modifier(const struct scope *x, const struct scope *y)
{
    for (int k = 0; k < x->nmod; k++)
        if (!hashes_has(y->w, (size_t)y->n, x->mod[k][0]) &&
            hashes_has(y->w, (size_t)y->n, x->mod[k][1]))
            return 1;
    return 0;
}

/* 1 when two scopes are about different things: both name something, and
 * they share at most half of the smaller one's words (one may add a
 * detail or a reason to the other, and Chinese bigrams of a reworded
 * phrase differ at its seams: neither makes them different), or each
 * puts its own modifier before a word they share. */
static int scopes_differ(const struct scope *sx, const struct scope *sy)
{
    const uint64_t *x = sx->w, *y = sy->w;
    int nx = sx->n, ny = sy->n, shared = 0, i = 0, j = 0;
    if (nx == 0 || ny == 0)
        return 0;
    if (own_modifier(sx, sy) && own_modifier(sy, sx))
        return 1;
    while (i < nx && j < ny) {
        if (x[i] < y[j])
            i++;
        else if (y[j] < x[i])
            j++;
        else
            shared++, i++, j++;
    }
    return 2 * shared <= (nx < ny ? nx : ny);
}

struct builder {
    struct side *s;
    int open; /* cur is being filled */
    struct statement cur;
    int pending; /* modifiers seen, not yet bound */
    int pending_sign;
    uint32_t pending_start, pending_end;
    uint32_t before[TARGET_MAX]; /* the clause's last words since the last statement */
    int nbefore;
};

/* A Chinese target "X的Y" is about Y of X, as an English one ends at "of":
 * 日志主题的保留时间 (the topic's retention) and 日志主题的分区数 (its
 * partitions) are different things of one topic. Keep the words after the
 * target's last 的 when there are any. */
static void target_head(const struct side *s, struct statement *st)
{
    static const char DE[] = "\xe7\x9a\x84"; /* 的 */
    size_t from = s->word[st->target[0]].start, to = s->word[st->target[st->ntarget - 1]].end;
    size_t head = 0;
    int keep = 0;
    for (size_t i = from; i + 3 <= to; i++)
        if (memcmp(s->text + i, DE, 3) == 0)
            head = i + 3;
    if (!head)
        return;
    for (int i = 0; i < st->ntarget; i++)
        if (s->word[st->target[i]].start >= head)
            st->target[keep++] = st->target[i];
    if (keep > 0)
        st->ntarget = keep;
}

static void builder_close(struct builder *b)
{
    struct statement *st = &b->cur;
    if (!b->open)
        return;
    b->open = 0;
    if (st->ntarget == 0)
        for (int i = 0; i < b->nbefore && st->ntarget < TARGET_MAX; i++)
            st->target[st->ntarget++] = b->before[i];
    if (st->ntarget > 0 && st->axis != AX_ORDER)
        target_head(b->s, st);
    st->quals = clause_qualifiers(b->s, st->cue_start);
    clause_scope(b->s, b->s->clause[st->cue_start], st->cue_start, st->target, st->ntarget,
                 &st->scope);
    if (st->ntarget > 0 && b->s->nstmt < MAX_STATEMENTS)
        b->s->stmt[b->s->nstmt++] = *st;
    b->nbefore = 0;
}

static void builder_open(struct builder *b, enum axis axis, int sign, int action, uint32_t start,
                         uint32_t end)
{
    b->open = 1;
    b->cur.axis = axis;
    b->cur.sign = sign;
    b->cur.action = action;
    b->cur.closed = 0;
    b->cur.cue_start = start;
    b->cur.cue_end = end;
    b->cur.ntarget = 0;
    b->pending = 0;
}

static void builder_end_clause(struct builder *b)
{
    if (b->pending && !b->open)
        builder_open(b, AX_POLARITY, b->pending_sign, -1, b->pending_start, b->pending_end);
    builder_close(b);
    b->pending = 0;
    b->nbefore = 0;
}

static void builder_word(struct builder *b, uint32_t w)
{
    const struct word *word = &b->s->word[w];
    if (!b->open && b->pending)
        builder_open(b, AX_POLARITY, b->pending_sign, -1, b->pending_start, b->pending_end);
    if (b->open) {
        struct statement *st = &b->cur;
        if (st->ntarget > 0 && !st->closed &&
            phrase_ends(b->s, b->s->word[st->target[st->ntarget - 1]].end, word->start))
            st->closed = 1;
        if (!st->closed && st->ntarget < TARGET_MAX)
            st->target[st->ntarget++] = w;
        return;
    }
    if (b->nbefore == TARGET_MAX) {
        memmove(b->before, b->before + 1, (TARGET_MAX - 1) * sizeof *b->before);
        b->nbefore--;
    }
    b->before[b->nbefore++] = w;
}

static void builder_cue(struct builder *b, const struct cue_hit *c)
{
    const struct cue_rule *r = &CUES[c->rule];
    int sign;
    uint32_t start;
    if (r->kind == CUE_FLIP && b->open) {
        b->cur.sign = -b->cur.sign;
        return;
    }
    if (r->kind == CUE_BREAK) {
        builder_close(b);
        b->pending = 0;
        return;
    }
    if (r->kind != CUE_ACTION) {
        builder_close(b);
        if (!b->pending) {
            b->pending = 1;
            b->pending_sign = 1;
            b->pending_start = c->start;
        }
        b->pending_sign *= r->sign;
        b->pending_end = c->end;
        return;
    }
    /* 禁止在测试环境使用生产数据: the modifier reaches over the words
     * between it and the action, up to a break ("avoid X and use Y"). */
    if (b->open && b->cur.action < 0) {
        sign = b->cur.sign * r->sign;
        start = b->cur.cue_start;
    } else {
        sign = b->pending ? b->pending_sign * r->sign : r->sign;
        start = b->pending ? b->pending_start : c->start;
    }
    builder_close(b);
    builder_open(b, r->axis, sign, c->rule, start, c->end);
    /* "run migrations before deploying": the order is between the words on
     * both sides of the cue, so the target starts with the words before. */
    if (r->axis == AX_ORDER) {
        int from = b->nbefore > TARGET_MAX / 2 ? b->nbefore - TARGET_MAX / 2 : 0;
        for (int i = from; i < b->nbefore; i++)
            b->cur.target[b->cur.ntarget++] = b->before[i];
        b->nbefore = 0;
    }
}

/* Walk the cues and words in text order, clause by clause. */
static void side_statements(struct side *s)
{
    struct builder b = {0};
    size_t ci = 0, wi = 0;
    uint32_t clause = 0;
    b.s = s;
    while (ci < s->ncue || wi < s->nword) {
        int take_cue = wi == s->nword || (ci < s->ncue && s->cue[ci].start < s->word[wi].start);
        uint32_t cl = take_cue ? s->cue[ci].clause : s->word[wi].clause;
        if (cl != clause) {
            builder_end_clause(&b);
            clause = cl;
        }
        if (take_cue)
            builder_cue(&b, &s->cue[ci++]);
        else
            builder_word(&b, (uint32_t)wi++);
    }
    builder_end_clause(&b);
}

/* Each number's key: up to KEY_MAX words before it in its clause, after the
 * previous number; else the first word after it in the clause. */
static void side_number_keys(struct side *s)
{
    size_t wi = 0;
    for (size_t k = 0; k < s->nnum; k++) {
        struct number *n = &s->num[k];
        uint32_t floor = k > 0 && s->num[k - 1].clause == n->clause ? s->num[k - 1].end : 0;
        while (wi < s->nword && s->word[wi].start < n->start)
            wi++;
        for (size_t j = wi; j > 0 && n->nkey < KEY_MAX; j--) {
            const struct word *w = &s->word[j - 1];
            if (w->clause != n->clause || w->start < floor)
                break;
            n->key[n->nkey++] = (uint32_t)(j - 1);
        }
        if (n->nkey == 0 && wi < s->nword && s->word[wi].clause == n->clause)
            n->key[n->nkey++] = (uint32_t)wi;
    }
}

static void side_set(struct side *s)
{
    for (size_t i = 0; i < s->nword; i++)
        s->set[i] = s->word[i].h;
    s->nset = hashes_sort_unique(s->set, s->nword);
}

static int cmp_target_ref(const void *a, const void *b)
{
    const struct target_ref *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return x->stmt < y->stmt ? -1 : x->stmt > y->stmt;
}

static int cmp_number_ref(const void *a, const void *b)
{
    const struct number_ref *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    if (x->dim != y->dim)
        return x->dim < y->dim ? -1 : 1;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->num < y->num ? -1 : x->num > y->num;
}

/* The statements by target word and the numbers by key word, sorted. */
static void side_index(struct side *s)
{
    s->nby_target = s->nby_key = 0;
    for (size_t i = 0; i < s->nstmt; i++)
        for (int k = 0; k < s->stmt[i].ntarget; k++) {
            s->by_target[s->nby_target].h = s->word[s->stmt[i].target[k]].h;
            s->by_target[s->nby_target++].stmt = (uint32_t)i;
        }
    qsort(s->by_target, s->nby_target, sizeof *s->by_target, cmp_target_ref);
    for (size_t i = 0; i < s->nnum; i++)
        for (int k = 0; k < s->num[i].nkey; k++) {
            struct number_ref *r = &s->by_key[s->nby_key++];
            r->h = s->word[s->num[i].key[k]].h;
            r->dim = s->num[i].dim;
            r->value = s->num[i].value;
            r->num = (uint32_t)i;
        }
    qsort(s->by_key, s->nby_key, sizeof *s->by_key, cmp_number_ref);
}

static void side_read(struct side *s, const struct conflict_entry *e)
{
    s->len = 0;
    s->nword = s->ncue = s->nnum = s->nstmt = s->nset = 0;
    s->cue_cursor = s->num_cursor = 0;
    side_append(s, e->title);
    side_append(s, "\n");
    side_append(s, e->scenario);
    side_append(s, "\n");
    side_append(s, e->content);
    side_clauses(s);
    side_scan(s);
    (void)tokenize_terms(s->text, s->len, side_word, s);
    side_statements(s);
    side_number_keys(s);
    side_set(s);
    side_index(s);
}

/* ---- comparing ----------------------------------------------------------- */

static size_t shared_words(const struct side *a, const struct side *b)
{
    return hashes_shared(a->set, a->nset, b->set, b->nset);
}

/* The number of target words two statements share, 0 when neither's first
 * word (its head: "avoid storing large blobs" is about storing, not about
 * blobs) is among them; *word: one of them (an index into a's words). */
static int shared_target(const struct side *a, const struct statement *x, const struct side *b,
                         const struct statement *y, uint32_t *word)
{
    int n = 0, head = 0;
    for (int i = 0; i < x->ntarget; i++)
        for (int j = 0; j < y->ntarget; j++)
            if (a->word[x->target[i]].h == b->word[y->target[j]].h) {
                if (n == 0)
                    *word = x->target[i];
                head |= i == 0 || j == 0;
                n++;
                break;
            }
    return head ? n : 0;
}

static void quote(struct buf *out, const struct side *s, uint32_t start, uint32_t end)
{
    size_t n = end - start;
    if (n > QUOTE_MAX) {
        n = QUOTE_MAX;
        while (n > 0 && ((unsigned char)s->text[start + n] & 0xC0) == 0x80)
            n--;
    }
    buf_addch(out, '"');
    for (size_t i = 0; i < n; i++) {
        char c = s->text[start + i];
        buf_addch(out, c == '\n' || c == '\r' || c == '\t' ? ' ' : c == '"' ? '\'' : c);
    }
    buf_addch(out, '"');
}

/* Opposite statements on the same target: 1 and the reason, else 0. The
 * candidates for a statement of a are b's statements under its target
 * words (the index), at most CANDIDATES_MAX a word; the caller asks both
 * ways, so the verdict does not depend on the order of the entries. */
static int polarity_conflict(const struct side *a, const struct side *b, struct buf *reason)
{
    for (size_t i = 0; i < a->nstmt; i++) {
        const struct statement *x = &a->stmt[i];
        for (int k = 0; k < x->ntarget; k++) {
            uint64_t h = a->word[x->target[k]].h;
            size_t lo = 0, hi = b->nby_target;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (b->by_target[mid].h < h)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t c = lo;
                 c < b->nby_target && c < lo + CANDIDATES_MAX && b->by_target[c].h == h; c++) {
                const struct statement *y = &b->stmt[b->by_target[c].stmt];
                uint32_t w = 0;
                int need = x->ntarget < y->ntarget ? x->ntarget : y->ntarget;
                need = need < 2 ? need : 2;
                if (x->axis != y->axis || x->sign == y->sign || x->quals != y->quals ||
                    scopes_differ(&x->scope, &y->scope) || shared_target(a, x, b, y, &w) < need)
                    continue;
                buf_addf(reason, "%s on ",
                         x->axis == AX_POLARITY ? "opposite polarity"
                         : x->axis == AX_ORDER  ? "opposite order"
                                                : "opposite actions");
                /* a Han bigram ("财年") says less than its target's words
                 * ("财年季度统计") */
                if ((unsigned char)a->text[a->word[w].start] >= 0x80)
                    quote(reason, a, a->word[x->target[0]].start,
                          a->word[x->target[x->ntarget - 1]].end);
                else
                    quote(reason, a, a->word[w].start, a->word[w].end);
                buf_adds(reason, ": ");
                quote(reason, a, x->cue_start, x->cue_end);
                buf_adds(reason, " vs ");
                quote(reason, b, y->cue_start, y->cue_end);
                return 1;
            }
        }
    }
    return 0;
}

/* The end of the run of s->by_key from i with the key and unit of entry i. */
static size_t key_run_end(const struct side *s, size_t i)
{
    size_t e = i;
    while (e < s->nby_key && s->by_key[e].h == s->by_key[i].h &&
           s->by_key[e].dim == s->by_key[i].dim)
        e++;
    return e;
}

static int same_value(double x, double y)
{
    double d = x - y, m = (x < 0 ? -x : x) * 1e-9 + 1e-12;
    return d < m && d > -m;
}

/* 1 when numbers n of a and m of b stand in clauses about different things
 * (their scopes: the clause's words but their keys, clause_scope). */
static int number_scopes_differ(const struct side *a, const struct number *n, const struct side *b,
                                const struct number *m)
{
    struct scope x, y;
    clause_scope(a, n->clause, n->start, n->key, n->nkey, &x);
    clause_scope(b, m->clause, m->start, m->key, m->nkey, &y);
    return scopes_differ(&x, &y);
}

/* 1 when the shorter of two numbers' keys is all in the other's: "the
 * worker count of the thumbnail queue" and "... of the email queue" share
 * "queue" but are two keys ("request timeout" and "timeout" are one). */
static int keys_agree(const struct side *a, const struct number *n, const struct side *b,
                      const struct number *m)
{
    const struct number *short_ = n->nkey <= m->nkey ? n : m, *long_ = short_ == n ? m : n;
    const struct side *ss = short_ == n ? a : b, *ls = short_ == n ? b : a;
    for (int i = 0; i < short_->nkey; i++) {
        int found = 0;
        for (int j = 0; j < long_->nkey && !found; j++)
            found = ss->word[short_->key[i]].h == ls->word[long_->key[j]].h;
        if (!found)
            return 0;
    }
    return 1;
}

/* The same key and unit on both sides with no value in common: 1 and the
 * reason, else 0. Both indexes are sorted, so one merge finds the keys and
 * one merge per key compares the values. The reason names the key nearest
 * to its number ("request timeout 30 s": timeout). */
static int number_conflict(const struct side *a, const struct side *b, struct buf *reason)
{
    size_t i = 0, j = 0, best_i = 0, best_j = 0;
    int best = KEY_MAX;
    while (i < a->nby_key && j < b->nby_key) {
        const struct number_ref *x = &a->by_key[i], *y = &b->by_key[j];
        size_t ie, je, p, q;
        int common = 0;
        if (x->h != y->h || x->dim != y->dim) {
            if (x->h < y->h || (x->h == y->h && x->dim < y->dim))
                i = key_run_end(a, i);
            else
                j = key_run_end(b, j);
            continue;
        }
        ie = key_run_end(a, i);
        je = key_run_end(b, j);
        for (p = i, q = j; p < ie && q < je && !common;) {
            if (same_value(a->by_key[p].value, b->by_key[q].value))
                common = 1;
            else if (a->by_key[p].value < b->by_key[q].value)
                p++;
            else
                q++;
        }
        if (!common && keys_agree(a, &a->num[x->num], b, &b->num[y->num]) &&
            !number_scopes_differ(a, &a->num[x->num], b, &b->num[y->num])) {
            const struct number *n = &a->num[x->num];
            for (int k = 0; k < n->nkey; k++)
                if (a->word[n->key[k]].h == x->h && k < best) {
                    best = k;
                    best_i = i;
                    best_j = j;
                }
        }
        i = ie;
        j = je;
    }
    if (best == KEY_MAX)
        return 0;
    const struct number *n = &a->num[a->by_key[best_i].num], *m = &b->num[b->by_key[best_j].num];
    buf_adds(reason, "different numbers for ");
    quote(reason, a, a->word[n->key[best]].start, a->word[n->key[best]].end);
    buf_adds(reason, ": ");
    quote(reason, a, n->start, n->end);
    buf_adds(reason, " vs ");
    quote(reason, b, m->start, m->end);
    return 1;
}

/* 1 when side s has the word hash h. */
static int side_has(const struct side *s, uint64_t h)
{
    return hashes_has(s->set, s->nset, h);
}

static int in_target(const struct side *s, const struct statement *st, uint64_t h)
{
    for (int i = 0; i < st->ntarget; i++)
        if (s->word[st->target[i]].h == h)
            return 1;
    return 0;
}

/* For each statement of s: the first word of its clause that side o lacks,
 * when all such words are in its target (the clause differs from o only in
 * what the statement is about), else -1. The words of a clause that o lacks
 * are listed once per clause (statements come in text order); a clause with
 * more of them than a target holds has no such statement. */
static void side_differences(struct side *s, const struct side *o)
{
    uint32_t diff[TARGET_MAX + 1], clause = UINT32_MAX;
    int ndiff = 0;
    size_t w = 0;
    for (size_t i = 0; i < s->nstmt; i++) {
        const struct statement *x = &s->stmt[i];
        uint32_t c = s->clause[x->cue_start];
        long first = -1;
        if (c != clause) {
            clause = c;
            ndiff = 0;
            while (w < s->nword && s->word[w].clause < c)
                w++;
            for (; w < s->nword && s->word[w].clause == c; w++)
                if (!side_has(o, s->word[w].h) && ndiff <= TARGET_MAX)
                    diff[ndiff++] = (uint32_t)w;
        }
        for (int k = 0; k < ndiff && ndiff <= TARGET_MAX; k++) {
            if (!in_target(s, x, s->word[diff[k]].h)) {
                first = -1;
                break;
            }
            if (first < 0)
                first = (long)diff[k];
        }
        s->difference[i] = ndiff <= TARGET_MAX ? first : -1;
    }
}

/* The actions that pick one thing among others: "use the fiscal quarter"
 * excludes the calendar one, while "keep raw metrics" says nothing against
 * keeping raw traces, nor "enable gzip" against enabling HTTP/2. */
static int choice_action(int action)
{
    static const char *const PICKS[] = {"use", "prefer", "使用", "采用"};
    for (size_t k = 0; action >= 0 && k < sizeof PICKS / sizeof *PICKS; k++)
        if (strcmp(CUES[action].word, PICKS[k]) == 0)
            return 1;
    return 0;
}

/* The same choosing action on different objects in otherwise equal clauses
 * ("use the fiscal quarter" / "use the calendar quarter"): 1 and the reason.
 * Linear: the first such statement of b per action is kept. */
static int choice_conflict(struct side *a, struct side *b, struct buf *reason)
{
    long first_b[sizeof CUES / sizeof *CUES];
    side_differences(a, b);
    side_differences(b, a);
    for (size_t r = 0; r < N_CUES; r++)
        first_b[r] = -1;
    for (size_t j = 0; j < b->nstmt; j++)
        if (choice_action(b->stmt[j].action) && b->stmt[j].sign > 0 && b->difference[j] >= 0 &&
            first_b[b->stmt[j].action] < 0)
            first_b[b->stmt[j].action] = (long)j;
    for (size_t i = 0; i < a->nstmt; i++) {
        const struct statement *x = &a->stmt[i];
        long wa = a->difference[i], wb;
        if (!choice_action(x->action) || x->sign < 0 || wa < 0 || first_b[x->action] < 0)
            continue;
        wb = b->difference[first_b[x->action]];
        buf_adds(reason, "different choices for ");
        quote(reason, a, x->cue_start, x->cue_end);
        buf_adds(reason, ": ");
        quote(reason, a, a->word[wa].start, a->word[wa].end);
        buf_adds(reason, " vs ");
        quote(reason, b, b->word[wb].start, b->word[wb].end);
        return 1;
    }
    return 0;
}

/* Antonyms whose swap turns one advice into its opposite. */
static const char *const ANTONYMS[][2] = {
    {"synchronously", "asynchronously"},
    {"sync", "async"},
    {"同步", "异步"},
};

static int first_term(void *ctx, const char *term, size_t n, size_t start, size_t end)
{
    (void)start, (void)end;
    *(uint64_t *)ctx = hash_fnv1a(term, n);
    return 1;
}

/* One side has one antonym and not the other, the other side the reverse:
 * 1 and the reason. */
static int antonym_conflict(const struct side *a, const struct side *b, struct buf *reason)
{
    for (size_t k = 0; k < sizeof ANTONYMS / sizeof *ANTONYMS; k++) {
        uint64_t x = 0, y = 0;
        (void)tokenize_terms(ANTONYMS[k][0], strlen(ANTONYMS[k][0]), first_term, &x);
        (void)tokenize_terms(ANTONYMS[k][1], strlen(ANTONYMS[k][1]), first_term, &y);
        int ab = side_has(a, x) && !side_has(a, y) && side_has(b, y) && !side_has(b, x);
        int ba = side_has(a, y) && !side_has(a, x) && side_has(b, x) && !side_has(b, y);
        if (ab || ba) {
            buf_addf(reason, "opposite words \"%s\" vs \"%s\" in otherwise close entries",
                     ANTONYMS[k][ab ? 0 : 1], ANTONYMS[k][ab ? 1 : 0]);
            return 1;
        }
    }
    return 0;
}

int conflict_check(const struct conflict_entry *a, const struct conflict_entry *b,
                   struct conflict_result *out, struct buf *reason)
{
    struct side *sa = xmalloc(2 * sizeof *sa), *sb = sa + 1;
    size_t shared, small, large;
    buf_reset(reason);
    side_read(sa, a);
    side_read(sb, b);
    shared = shared_words(sa, sb);
    small = sa->nset < sb->nset ? sa->nset : sb->nset;
    large = sa->nset < sb->nset ? sb->nset : sa->nset;
    out->jaccard =
        sa->nset + sb->nset > shared ? (double)shared / (double)(sa->nset + sb->nset - shared) : 0;
    out->containment = small ? (double)shared / (double)small : 0;
    if ((out->containment >= TOPIC_FLOOR &&
         (polarity_conflict(sa, sb, reason) || polarity_conflict(sb, sa, reason) ||
          number_conflict(sa, sb, reason) || choice_conflict(sa, sb, reason))) ||
        (out->containment >= ANTONYM_FLOOR && antonym_conflict(sa, sb, reason))) {
        out->verdict = CONFLICT_CONTRADICTION;
    } else if (out->containment >= REFINEMENT_CONTAINMENT &&
               large - shared >= REFINEMENT_EXTRA_WORDS && 3 * (large - shared) >= small) {
        out->verdict = CONFLICT_REFINEMENT;
        buf_addf(reason,
                 "the %s entry holds %zu of the other's %zu words and adds %zu, no "
                 "contradiction signal",
                 sa->nset < sb->nset ? "second" : "first", shared, small, large - shared);
    } else if (out->jaccard >= DUPLICATE_JACCARD || out->containment >= REFINEMENT_CONTAINMENT) {
        out->verdict = CONFLICT_DUPLICATE;
        buf_addf(reason, "near-identical words (%zu of %zu shared), no contradiction signal",
                 shared, sa->nset + sb->nset - shared);
    } else {
        out->verdict = CONFLICT_UNRELATED;
        buf_addf(reason, "low overlap (%zu of %zu words shared)", shared,
                 sa->nset + sb->nset - shared);
    }
    free(sa);
    return buf_failed(reason) ? -1 : 0;
}

const char *conflict_verdict_name(enum conflict_verdict v)
{
    switch (v) {
    case CONFLICT_UNRELATED:
        return "unrelated";
    case CONFLICT_DUPLICATE:
        return "duplicate";
    case CONFLICT_REFINEMENT:
        return "refinement";
    case CONFLICT_CONTRADICTION:
        return "contradiction";
    }
    return "unknown";
}

int conflict_verdict_parse(const char *name, enum conflict_verdict *v)
{
    static const enum conflict_verdict all[] = {CONFLICT_UNRELATED, CONFLICT_DUPLICATE,
                                                CONFLICT_REFINEMENT, CONFLICT_CONTRADICTION};
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
        if (strcmp(name, conflict_verdict_name(all[i])) == 0) {
            *v = all[i];
            return 0;
        }
    return -1;
}

int conflict_llm_answer_parse(const char *text, size_t len, enum conflict_verdict *v,
                              struct buf *reason)
{
    const char *open = len ? memchr(text, '{', len) : NULL, *close = NULL;
    struct json_tokener *tok;
    struct json_object *o, *verdict, *why;
    int rc = -1;
    for (size_t i = len; open && i > (size_t)(open - text); i--)
        if (text[i - 1] == '}') {
            close = text + i - 1;
            break;
        }
    if (!close)
        return -1;
    tok = json_tokener_new();
    o = json_tokener_parse_ex(tok, open, (int)(close - open + 1));
    /* exactly one object between the braces: "{...} x {...}" is no answer */
    if (o && json_tokener_get_parse_end(tok) != (size_t)(close - open + 1)) {
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    if (!o)
        return -1;
    if (json_object_is_type(o, json_type_object) &&
        json_object_object_get_ex(o, "verdict", &verdict) &&
        json_object_is_type(verdict, json_type_string) &&
        json_object_object_get_ex(o, "reason", &why) &&
        json_object_is_type(why, json_type_string) && json_object_get_string_len(why) > 0 &&
        conflict_verdict_parse(json_object_get_string(verdict), v) == 0) {
        const char *s = json_object_get_string(why);
        size_t n = strlen(s);
        buf_reset(reason);
        /* one line of valid UTF-8: control characters become spaces, a
         * byte that starts no character U+FFFD */
        for (size_t i = 0, chars = 0; i < n && chars < CONFLICT_LLM_REASON_MAX; chars++) {
            uint32_t cp;
            size_t step = utf8_decode((const unsigned char *)s + i, n - i, &cp);
            if (step == 0) {
                buf_adds(reason, "\xef\xbf\xbd");
                step = 1;
            } else if (cp < 0x20 || cp == 0x7f) {
                buf_addch(reason, ' ');
            } else {
                buf_add(reason, s + i, step);
            }
            i += step;
        }
        rc = 0;
    }
    json_object_put(o);
    return rc;
}

size_t conflict_cue_count(void)
{
    return N_CUES;
}

const char *conflict_cue_word(size_t i, const char **axis, int *sign)
{
    if (i >= N_CUES)
        return NULL;
    *axis = axis_names[CUES[i].axis];
    *sign = CUES[i].sign;
    return CUES[i].word;
}
