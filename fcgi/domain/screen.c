/* screen: the poisoning screen (domain/screen.h). The text is folded once,
 * then each row of the rule table runs its scanner over the folded text.
 * Phrase rows are sequences of word alternatives with bounded gaps; a few
 * rows have scanners of their own (URLs, role lines, hidden characters). */
#include "domain/screen.h"

#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- folding ------------------------------------------------------------- */

enum hidden_kind { HID_ZERO_WIDTH, HID_BIDI, HID_TAG, HID_COUNT };

struct folded {
    const char *orig; /* the original text */
    size_t orig_len;
    char *t;             /* the folded text, NUL-terminated */
    uint32_t *map;       /* map[i]: offset in orig of the character t[i] came from */
    unsigned char *code; /* code[i]: 1 when t[i] is in a fenced block or inline code */
    size_t n;            /* bytes of t */
    int hid_seen[HID_COUNT];
    size_t hid_off[HID_COUNT];
    size_t hid_len[HID_COUNT];
};

static int is_zero_width(uint32_t cp)
{
    return (cp >= 0x200b && cp <= 0x200d) || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xfeff ||
           cp == 0x00ad || cp == 0x180e;
}

static int is_bidi_control(uint32_t cp)
{
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

static int is_tag_char(uint32_t cp)
{
    return cp >= 0xe0000 && cp <= 0xe007f;
}

/* 1 for white space that is not a line break, 2 for a line break, else 0. */
static int space_kind(uint32_t cp)
{
    if (cp == '\n' || cp == 0x85 || cp == 0x2028 || cp == 0x2029)
        return 2;
    if (cp == ' ' || cp == '\t' || cp == '\r' || cp == '\f' || cp == '\v' || cp == 0xa0 ||
        cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x202f || cp == 0x205f ||
        cp == 0x3000)
        return 1;
    return 0;
}

/* Look-alike letters folded to ASCII: Cyrillic and Greek capitals and small
 * letters that render as Latin ones. */
static const struct {
    uint16_t cp;
    char ascii;
} CONFUSABLES[] = {
    {0x0391, 'a'}, {0x0392, 'b'}, {0x0395, 'e'}, {0x0396, 'z'}, {0x0397, 'h'}, {0x0399, 'i'},
    {0x039a, 'k'}, {0x039c, 'm'}, {0x039d, 'n'}, {0x039f, 'o'}, {0x03a1, 'p'}, {0x03a4, 't'},
    {0x03a5, 'y'}, {0x03a7, 'x'}, {0x03b1, 'a'}, {0x03b9, 'i'}, {0x03bf, 'o'}, {0x03c1, 'p'},
    {0x03bd, 'v'}, {0x0405, 's'}, {0x0406, 'i'}, {0x0408, 'j'}, {0x0410, 'a'}, {0x0412, 'b'},
    {0x0415, 'e'}, {0x041a, 'k'}, {0x041c, 'm'}, {0x041d, 'h'}, {0x041e, 'o'}, {0x0420, 'p'},
    {0x0421, 'c'}, {0x0422, 't'}, {0x0425, 'x'}, {0x0430, 'a'}, {0x0435, 'e'}, {0x043e, 'o'},
    {0x0440, 'p'}, {0x0441, 'c'}, {0x0443, 'y'}, {0x0445, 'x'}, {0x0455, 's'}, {0x0456, 'i'},
    {0x0458, 'j'}, {0x0501, 'd'}, {0x0261, 'g'},
};

/* The ASCII character cp folds to, or 0 when it folds to none. */
static char fold_ascii(uint32_t cp)
{
    if (cp < 0x80)
        return (char)(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
    if (cp >= 0xff01 && cp <= 0xff5e)
        return fold_ascii(cp - 0xfee0);
    if (cp >= 0x1d400 && cp <= 0x1d6a3) {
        uint32_t i = (cp - 0x1d400) % 52;
        return (char)(i < 26 ? 'a' + i : 'a' + i - 26);
    }
    if (cp >= 0x1d7ce && cp <= 0x1d7ff)
        return (char)('0' + (cp - 0x1d7ce) % 10);
    if (cp >= 0x24b6 && cp <= 0x24cf)
        return (char)('a' + (cp - 0x24b6));
    if (cp >= 0x24d0 && cp <= 0x24e9)
        return (char)('a' + (cp - 0x24d0));
    for (size_t i = 0; i < sizeof CONFUSABLES / sizeof CONFUSABLES[0]; i++)
        if (CONFUSABLES[i].cp == cp)
            return CONFUSABLES[i].ascii;
    return 0;
}

static void hidden_note(struct folded *f, enum hidden_kind k, size_t off, size_t len)
{
    if (!f->hid_seen[k]) {
        f->hid_seen[k] = 1;
        f->hid_off[k] = off;
        f->hid_len[k] = len;
    }
}

/* 1 when s[i..n) starts a code fence line (up to 3 spaces, then ``` or ~~~). */
static int fence_at(const char *s, size_t n, size_t i)
{
    size_t sp = 0;
    while (i < n && s[i] == ' ' && sp < 3) {
        i++;
        sp++;
    }
    return i + 3 <= n && ((s[i] == '`' && s[i + 1] == '`' && s[i + 2] == '`') ||
                          (s[i] == '~' && s[i + 1] == '~' && s[i + 2] == '~'));
}

static void fold_emit(struct folded *f, char c, size_t from, int code)
{
    f->t[f->n] = c;
    f->map[f->n] = (uint32_t)from;
    f->code[f->n] = (unsigned char)code;
    f->n++;
}

static void fold_text(struct folded *f, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    int in_fence = 0, in_inline = 0, line_start = 1, fence_line = 0;
    int pending = 0; /* 0 none, 1 space, 2 one line break, 3 two or more */
    size_t pending_at = 0;
    memset(f, 0, sizeof *f);
    f->orig = text;
    f->orig_len = len;
    f->t = xmalloc(len + 1);
    f->map = xmalloc((len + 1) * sizeof f->map[0]);
    f->code = xmalloc(len + 1);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, len - i, &cp);
        int sk;
        char a;
        if (line_start) {
            fence_line = fence_at(text, len, i);
            if (fence_line)
                in_fence = !in_fence;
            line_start = 0;
        }
        if (k == 0) {
            cp = 0xfffd;
            k = 1;
        }
        sk = space_kind(cp);
        if (sk) {
            if (sk == 2) {
                pending = pending >= 2 ? 3 : 2;
                in_inline = 0;
                line_start = 1;
                if (fence_line && !in_fence)
                    fence_line = 0;
            } else if (pending == 0) {
                pending = 1;
            }
            if (pending_at == 0 || pending == 1)
                pending_at = i;
            i += k;
            continue;
        }
        if (is_zero_width(cp) && !(cp == 0xfeff && i == 0)) {
            hidden_note(f, HID_ZERO_WIDTH, i, k);
            i += k;
            continue;
        }
        if (cp == 0xfeff) {
            i += k;
            continue;
        }
        if (is_bidi_control(cp)) {
            hidden_note(f, HID_BIDI, i, k);
            i += k;
            continue;
        }
        if (is_tag_char(cp)) {
            hidden_note(f, HID_TAG, i, k);
            i += k;
            continue;
        }
        {
            int code = in_fence || fence_line || in_inline || cp == '`';
            if (pending) {
                if (f->n > 0) {
                    fold_emit(f, pending == 1 ? ' ' : '\n', pending_at, code);
                    if (pending == 3)
                        fold_emit(f, '\n', pending_at, code);
                }
                pending = 0;
                pending_at = 0;
            }
            if (cp == '`' && !in_fence && !fence_line)
                in_inline = !in_inline;
            a = fold_ascii(cp);
            if (a) {
                fold_emit(f, a, i, code);
            } else {
                for (size_t j = 0; j < k; j++)
                    fold_emit(f, (char)s[i + j], i, code);
            }
        }
        i += k;
    }
    f->t[f->n] = '\0';
    f->map[f->n] = (uint32_t)len;
    f->code[f->n] = 0;
}

static void fold_release(struct folded *f)
{
    free(f->t);
    free(f->map);
    free(f->code);
}

/* ---- matching helpers ----------------------------------------------------- */

static int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether alternative alt matches t at pos; sets *end. An alternative ending
 * in '*' matches a word prefix (the match runs to the end of the word); an
 * ASCII word edge must be a word boundary. */
static int alt_at(const char *t, size_t n, size_t pos, const char *alt, size_t *end)
{
    size_t len, e;
    int prefix;
    /* cheap refusals first: the first byte, then the word boundary before */
    if (pos >= n || t[pos] != alt[0])
        return 0;
    if (is_word((unsigned char)alt[0]) && pos > 0 && is_word((unsigned char)t[pos - 1]))
        return 0;
    len = strlen(alt);
    prefix = len > 0 && alt[len - 1] == '*';
    if (prefix)
        len--;
    if (len == 0 || pos + len > n || memcmp(t + pos, alt, len) != 0)
        return 0;
    e = pos + len;
    if (prefix) {
        while (e < n && is_word((unsigned char)t[e]))
            e++;
    } else if (is_word((unsigned char)alt[len - 1]) && e < n && is_word((unsigned char)t[e])) {
        return 0;
    }
    *end = e;
    return 1;
}

static int alts_at(const char *t, size_t n, size_t pos, const char *const *alts, size_t *end)
{
    for (size_t i = 0; alts[i]; i++)
        if (alt_at(t, n, pos, alts[i], end))
            return 1;
    return 0;
}

/* The byte length of a sentence end at t[pos] (". " "! " "? " ";" "。"
 * "！" "？" or a blank line), else 0. */
static size_t sentence_end_at(const char *t, size_t n, size_t pos)
{
    unsigned char c = (unsigned char)t[pos];
    if (c == '.' || c == '!' || c == '?')
        return (pos + 1 >= n || t[pos + 1] == ' ' || t[pos + 1] == '\n') ? 1 : 0;
    if (c == ';')
        return 1;
    if (c == '\n' && pos + 1 < n && t[pos + 1] == '\n')
        return 2;
    if (pos + 3 <= n && (memcmp(t + pos, "\xe3\x80\x82", 3) == 0))
        return 3;
    return 0;
}

/* ---- phrase rows ---------------------------------------------------------- */

enum {
    CHECK_IMPERATIVE = 1, /* English: the first word is aimed at the reader */
    CHECK_CLAUSE_ZH = 2,  /* Chinese: the clause before it describes, not orders */
    CHECK_MENTION = 4,    /* quoted or in code, with a word that says it is a mention */
    CHECK_NEGATION = 8,   /* a negation earlier on the line ("never", "不要") */
    SKIP_CODE = 16,       /* not in fenced blocks or inline code */
    SAME_LINE = 32        /* the gaps may not cross a line break */
};

#define MAX_STEPS 4
#define MAX_SUPPRESSED 64

struct step {
    const char *const *alts;
    unsigned gap; /* the most bytes between the previous step's end and this one */
};

struct seq {
    struct step steps[MAX_STEPS]; /* ends at the first alts == NULL */
    unsigned checks;
};

/* 1 when every alternative starts with a word character: such a step can
 * only match at the start of a word. */
static int starts_words(const char *const *alts)
{
    for (size_t i = 0; alts[i]; i++)
        if (!is_word((unsigned char)alts[i][0]))
            return 0;
    return 1;
}

/* 1 when t[p] is inside a word (so no word-start alternative matches). */
static int mid_word(const char *t, size_t p)
{
    return p > 0 && is_word((unsigned char)t[p]) && is_word((unsigned char)t[p - 1]);
}

/* The end of seq matched at pos, or 0. */
static size_t seq_at(const struct folded *f, size_t pos, const struct seq *q)
{
    size_t end;
    if (!alts_at(f->t, f->n, pos, q->steps[0].alts, &end))
        return 0;
    for (size_t s = 1; s < MAX_STEPS && q->steps[s].alts; s++) {
        size_t from = end, found = 0;
        int words = starts_words(q->steps[s].alts);
        for (size_t p = from; p <= from + q->steps[s].gap && p < f->n; p++) {
            if (p > from && sentence_end_at(f->t, f->n, p))
                break;
            if ((q->checks & SAME_LINE) && f->t[p] == '\n')
                break;
            if (words && (mid_word(f->t, p) || !is_word((unsigned char)f->t[p])))
                continue;
            if (alts_at(f->t, f->n, p, q->steps[s].alts, &end)) {
                found = 1;
                break;
            }
        }
        if (!found)
            return 0;
    }
    return end;
}

/* The word that ends just before pos (skipping spaces): sets *ws and returns
 * its length, 0 when a non-word character comes first. */
static size_t word_before(const char *t, size_t pos, size_t *ws)
{
    size_t e = pos;
    while (e > 0 && t[e - 1] == ' ')
        e--;
    size_t s = e;
    while (s > 0 && (is_word((unsigned char)t[s - 1]) || t[s - 1] == '\''))
        s--;
    *ws = s;
    return e - s;
}

static int word_in(const char *w, size_t n, const char *const *set)
{
    for (size_t i = 0; set[i]; i++)
        if (strlen(set[i]) == n && memcmp(w, set[i], n) == 0)
            return 1;
    return 0;
}

static const char *const SOFT_WORDS[] = {
    "please",   "now",      "just",     "simply",     "kindly",   "immediately",
    "also",     "first",    "hereby",   "completely", "entirely", "totally",
    "fully",    "always",   "actually", "really",     "instead",  "quietly",
    "silently", "secretly", "strictly", "then",       NULL};
static const char *const JOIN_WORDS[] = {"and", "but", "or", "so", "then", "ok", "okay", NULL};
static const char *const MODAL_WORDS[] = {"must", "should", "shall", "will",  "need", "needs",
                                          "have", "has",    "to",    "are",   "is",   "can",
                                          "may",  "going",  "gonna", "ought", NULL};
static const char *const READER_WORDS[] = {"you",    "u",   "assistant", "ai",    "chatgpt", "gpt",
                                           "claude", "llm", "bot",       "agent", NULL};
static const char *const DETERMINERS[] = {"the", "a",     "an",  "this", "that", "its",
                                          "our", "their", "his", "her",  "each", "every",
                                          "any", "your",  "my",  NULL};

/* English: whether the word at pos is an order to the reader: it starts a
 * sentence, a line or a clause (after ':' ',' 'and' ...), possibly after
 * "please"/"now"; or it follows "you must/should/will ...". Not after
 * another subject ("the model will ignore ..."), nor after a negation. */
static int imperative_at(const struct folded *f, size_t pos)
{
    int modal = 0, saw_to = 0;
    for (int guard = 0; guard < 8; guard++) {
        size_t ws, wl = word_before(f->t, pos, &ws);
        if (wl == 0)
            return !saw_to; /* "To ignore ..., attackers" describes */
        const char *w = f->t + ws;
        if (word_in(w, wl, READER_WORDS)) {
            /* "you", or a vocative "Assistant, ..."; not "the agent" */
            size_t ds, dl = word_before(f->t, ws, &ds);
            return !(dl && word_in(f->t + ds, dl, DETERMINERS));
        }
        if (!modal && word_in(w, wl, JOIN_WORDS))
            return 1;
        if (word_in(w, wl, MODAL_WORDS)) {
            modal = 1;
            saw_to |= wl == 2 && memcmp(w, "to", 2) == 0;
        } else if (!word_in(w, wl, SOFT_WORDS)) {
            return 0;
        }
        pos = ws;
    }
    return 0;
}

static const char *const ZH_DESCRIBE[] = {"让",   "使",   "诱导",   "导致", "攻击", "会",   "可能",
                                          "例如", "比如", "如果",   "防止", "避免", "不要", "别",
                                          "切勿", "是否", "检测",   "识别", "注入", "类似", "常见",
                                          "模型", "这类", "防范",   "试图", "企图", "禁止", "不能",
                                          "不应", "绝不", "要求它", "骗",   "当",   NULL};

/* The start of the line holding pos. */
static size_t line_start_of(const char *t, size_t pos)
{
    while (pos > 0 && t[pos - 1] != '\n')
        pos--;
    return pos;
}

static size_t line_end_of(const char *t, size_t n, size_t pos)
{
    while (pos < n && t[pos] != '\n')
        pos++;
    return pos;
}

/* 1 when one of set occurs in t[from..to) as a word of prose: at word
 * boundaries, and not inside a URL, a path or a file name (after '.', '/',
 * '-', '@'). */
static int any_word_in(const char *t, size_t n, size_t from, size_t to, const char *const *set)
{
    size_t end;
    for (size_t p = from; p < to; p++) {
        if (p > 0 && (t[p - 1] == '.' || t[p - 1] == '/' || t[p - 1] == '-' || t[p - 1] == '@'))
            continue;
        if (alts_at(t, n, p, set, &end) && end <= to)
            return 1;
    }
    return 0;
}

/* 1 when one of set occurs in t[from..to) (at word boundaries for ASCII). */
static int any_in(const char *t, size_t n, size_t from, size_t to, const char *const *set)
{
    size_t end;
    for (size_t p = from; p < to; p++)
        if (alts_at(t, n, p, set, &end) && end <= to)
            return 1;
    return 0;
}

/* Chinese: whether the clause before pos only describes (a subject, "让…",
 * "如果…", a negation ...) rather than orders. */
static int zh_describes(const struct folded *f, size_t pos)
{
    size_t from = pos;
    while (from > 0 && pos - from < 60) {
        unsigned char c = (unsigned char)f->t[from - 1];
        if (c == '\n' || c == ',' || c == ':' || c == ';' || c == '!' || c == '?' || c == '.')
            break;
        if (from >= 3 && (memcmp(f->t + from - 3, "\xe3\x80\x82", 3) == 0 ||
                          memcmp(f->t + from - 3, "\xe3\x80\x81", 3) == 0))
            break;
        from--;
    }
    return any_in(f->t, f->n, from, pos, ZH_DESCRIBE);
}

static const char *const MENTION_CUES[] = {
    "like",     "such as",  "e.g",      "for example", "example*",  "phrase*", "string*",
    "pattern*", "payload*", "attack*",  "inject*",     "detect*",   "filter*", "block*",
    "classif*", "sanitis*", "sanitiz*", "jailbreak*",  "malicious", "test*",   "flag*",
    "screen*",  "keyword*", "regex*",   "quarantin*",  "reject*",   "refus*",  "mention*",
    "sample*",  "poison*",  "contain*", "warn*",       "例如",      "比如",    "诸如",
    "类似",     "这类",     "之类",     "攻击",        "注入",      "检测",    "过滤",
    "拦截",     "识别",     "样本",     "话术",        "恶意",      "越狱",    "测试",
    "包含",     "含有",     NULL};

static const char *const INTRODUCERS[] = {"like", "as", "e.g", "eg", "example", "instance", NULL};

/* Whether the match at s comes right after "like", "such as", "e.g.",
 * "for example", "例如", "比如", "诸如" (spaces and one '.' or ',' between). */
static int introduced(const struct folded *f, size_t s)
{
    size_t p = s, ws, wl;
    while (p > 0 && f->t[p - 1] == ' ')
        p--;
    if (p >= 6 && (memcmp(f->t + p - 6, "例如", 6) == 0 || memcmp(f->t + p - 6, "比如", 6) == 0 ||
                   memcmp(f->t + p - 6, "诸如", 6) == 0))
        return 1;
    if (p > 0 && (f->t[p - 1] == '.' || f->t[p - 1] == ','))
        p--;
    wl = word_before(f->t, p, &ws);
    if (wl == 0 || p - ws != wl || !word_in(f->t + ws, wl, INTRODUCERS))
        return 0;
    if (wl == 2 && memcmp(f->t + ws, "as", 2) == 0) {
        size_t ss, sl = word_before(f->t, ws, &ss);
        return sl == 4 && memcmp(f->t + ss, "such", 4) == 0;
    }
    return 1;
}

static int is_open_quote(const char *t, size_t p, size_t *qlen)
{
    unsigned char c = (unsigned char)t[p];
    if (c == '"' || c == '`') {
        *qlen = 1;
        return 1;
    }
    if (c == '\'' && (p == 0 || !is_word((unsigned char)t[p - 1]))) {
        *qlen = 1;
        return 1;
    }
    /* “ ‘ 「 『 « 《 */
    if (memcmp(t + p, "\xe2\x80\x9c", 3) == 0 || memcmp(t + p, "\xe2\x80\x98", 3) == 0 ||
        memcmp(t + p, "\xe3\x80\x8c", 3) == 0 || memcmp(t + p, "\xe3\x80\x8e", 3) == 0 ||
        memcmp(t + p, "\xe3\x80\x8a", 3) == 0) {
        *qlen = 3;
        return 1;
    }
    if (memcmp(t + p, "\xc2\xab", 2) == 0) {
        *qlen = 2;
        return 1;
    }
    return 0;
}

static int is_close_quote(const char *t, size_t n, size_t p)
{
    unsigned char c = (unsigned char)t[p];
    if (c == '"' || c == '`')
        return 1;
    if (c == '\'' && (p + 1 >= n || !is_word((unsigned char)t[p + 1])))
        return 1;
    return (p + 3 <= n &&
            (memcmp(t + p, "\xe2\x80\x9d", 3) == 0 || memcmp(t + p, "\xe2\x80\x99", 3) == 0 ||
             memcmp(t + p, "\xe3\x80\x8d", 3) == 0 || memcmp(t + p, "\xe3\x80\x8f", 3) == 0 ||
             memcmp(t + p, "\xe3\x80\x8b", 3) == 0)) ||
           (p + 2 <= n && memcmp(t + p, "\xc2\xbb", 2) == 0);
}

/* Whether t[s..e) is quoted text that the line says is a mention: in
 * quotes or code on its line, and the line holds a word like "such as",
 * "attack", "例如". */
static int is_mention(const struct folded *f, size_t s, size_t e)
{
    size_t ls = line_start_of(f->t, s), le = line_end_of(f->t, f->n, e);
    int quoted = f->code[s] != 0;
    if (!quoted) {
        size_t open = SIZE_MAX, ql;
        for (size_t p = s; p > ls && s - p < 80; p--)
            if (is_open_quote(f->t, p - 1, &ql)) {
                open = p - 1;
                break;
            }
        if (open != SIZE_MAX)
            for (size_t p = e; p < le && p - e < 200; p++)
                if (is_close_quote(f->t, f->n, p)) {
                    quoted = 1;
                    break;
                }
    }
    if (!quoted)
        return introduced(f, s);
    if (le - ls > 2000) {
        ls = s > 1000 ? s - 1000 : ls;
        le = e + 1000 < le ? e + 1000 : le;
    }
    return any_word_in(f->t, f->n, ls, le, MENTION_CUES);
}

static const char *const NEGATIONS[] = {
    "never",     "don't",  "dont",  "do not",   "avoid*",       "instead of", "rather than", "not",
    "dangerous", "unsafe", "risky", "insecure", "bad practice", "不要",       "切勿",        "避免",
    "禁止",      "别",     "不能",  "不应",     "绝不",         "危险",       "不安全",      NULL};

static int negated(const struct folded *f, size_t s)
{
    size_t ls = line_start_of(f->t, s), le = line_end_of(f->t, f->n, s);
    if (s - ls > 300)
        ls = s - 300;
    if (le - s > 300)
        le = s + 300;
    return any_word_in(f->t, f->n, ls, le, NEGATIONS);
}

/* ---- the rule table ------------------------------------------------------- */

struct rule_impl {
    struct screen_rule info;
    const struct seq *seqs; /* phrase rows: ends at steps[0].alts == NULL */
    int (*scan)(const struct folded *f, size_t *off, size_t *len); /* other rows */
};

#define ALTS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* instruction_override */
static const char *const V_OVERRIDE[] = {"ignore",  "disregard", "forget",     "overlook",
                                         "discard", "abandon",   "override",   "bypass",
                                         "neglect", "ditch",     "throw away", NULL};
static const char *const Q_PREVIOUS[] = {
    "previous", "prior",    "above",   "earlier",   "preceding", "foregoing",
    "former",   "original", "initial", "all",       "any",       "every",
    "your",     "system",   "safety",  "developer", "existing",  NULL};
static const char *const N_INSTRUCTIONS[] = {
    "instruction*", "direction*", "rule*",       "guideline*",   "prompt*", "command*", "order*",
    "directive*",   "context",    "constraint*", "restriction*", "polic*",  "message*", "guidance",
    "programming",  "training",   "guardrail*",  "filter*",      NULL};
static const char *const V_OVERRIDE_ZH[] = {"忽略",     "无视",     "忘记", "忘掉",     "忽视",
                                            "不要理会", "不用理会", "别管", "不要遵守", "不再遵守",
                                            "停止遵守", "抛弃",     "放弃", "跳过",     "覆盖",
                                            "抛开",     "不必遵守", "丢掉", NULL};
static const char *const Q_PREVIOUS_ZH[] = {
    "之前", "以前", "以上", "上面", "前面", "先前", "此前", "上述",   "前述", "原有", "原来",
    "原始", "所有", "全部", "一切", "系统", "你的", "既有", "开发者", "安全", NULL};
static const char *const N_INSTRUCTIONS_ZH[] = {"指令", "指示", "规则",   "提示", "设定", "要求",
                                                "约束", "命令", "限制",   "说明", "规定", "策略",
                                                "准则", "对话", "上下文", NULL};

static const struct seq SEQ_OVERRIDE[] = {
    {{{V_OVERRIDE, 0}, {Q_PREVIOUS, 24}, {N_INSTRUCTIONS, 24}}, CHECK_IMPERATIVE | CHECK_MENTION},
    {{{V_OVERRIDE, 0}, {ALTS("everything", "all of that", "all that", "what you were told"), 8}},
     CHECK_IMPERATIVE | CHECK_MENTION},
    {{{V_OVERRIDE, 0},
      {ALTS("the system prompt", "your system prompt", "the system message",
            "the developer message", "your programming", "your training", "your guidelines",
            "your rules", "your instructions"),
       8}},
     CHECK_IMPERATIVE | CHECK_MENTION},
    {{{V_OVERRIDE, 0},
      {ALTS("the instructions", "these instructions", "those instructions", "the rules",
            "the guidelines", "the directions", "the directives"),
       8},
      {ALTS("given", "above", "before", "you were", "you have been", "you received", "from the",
            "provided", "that came", "you got", "written", "you know"),
       12}},
     CHECK_IMPERATIVE | CHECK_MENTION},
    {{{V_OVERRIDE_ZH, 0}, {Q_PREVIOUS_ZH, 12}, {N_INSTRUCTIONS_ZH, 15}},
     CHECK_CLAUSE_ZH | CHECK_MENTION},
    {{{V_OVERRIDE_ZH, 0}, {ALTS("一切", "所有", "上面说的", "之前说的", "前面说的"), 6}},
     CHECK_CLAUSE_ZH | CHECK_MENTION},
    {{{NULL, 0}}, 0}};

static const char *const PERSONA_AFTER_NOW[] = {"a",
                                                "an",
                                                "dan",
                                                "no longer",
                                                "free",
                                                "unrestricted",
                                                "jailbroken",
                                                "unfiltered",
                                                "uncensored",
                                                "evil",
                                                "acting",
                                                "operating",
                                                "my",
                                                "called",
                                                "named",
                                                "known as",
                                                "in developer",
                                                "in dan",
                                                "in god",
                                                "in admin",
                                                "in jailbreak",
                                                "in unrestricted",
                                                "in debug mode",
                                                "in maintenance mode",
                                                "root",
                                                "admin",
                                                "allowed to",
                                                "not bound",
                                                "released from",
                                                "the system",
                                                NULL};
static const struct seq SEQ_PERSONA[] = {
    {{{ALTS("you are now", "you're now", "u are now", "you have now become", "you are no longer"),
       0},
      {PERSONA_AFTER_NOW, 2}},
     CHECK_MENTION},
    {{{ALTS("you are no longer", "you're no longer", "you are not", "you're not", "you are free",
            "you're free"),
       0},
      {ALTS("bound", "restricted", "limited", "constrained", "required to follow", "subject to",
            "an ai", "a language model", "an assistant", "chatgpt", "claude", "obliged", "from all",
            "of all"),
       4},
      {ALTS("guideline*", "rule*", "polic*", "restriction*", "instruction*", "filter*",
            "constraint*", "limit*", "guardrail*", "programming", "ethic*", "safety", "openai",
            "anthropic", "model", "assistant", "ai", "language model"),
       24}},
     CHECK_MENTION},
    {{{ALTS("from now on", "from this point on", "from this moment", "starting now", "henceforth"),
       0},
      {ALTS("you"), 3},
      {ALTS("are", "will be", "act", "pretend", "respond only", "answer only", "reply only",
            "ignore", "have no", "no longer", "speak only", "obey", "work for", "serve",
            "take orders", "follow only", "must ignore", "must obey", "must only", "will act",
            "will respond", "will answer", "will reply", "will obey", "will ignore", "will only",
            "will pretend", "will no longer", "shall"),
       3}},
     CHECK_MENTION},
    {{{ALTS("act as", "pretend to be", "pretend you are", "roleplay as", "role-play as",
            "behave as"),
       0},
      {ALTS("dan", "an unrestricted", "an unfiltered", "a jailbroken", "an ai without",
            "an ai with no", "an assistant without", "an assistant with no", "evil",
            "if you have no", "though you have no", "an uncensored", "the system", "root",
            "a different ai"),
       3}},
     CHECK_IMPERATIVE | CHECK_MENTION},
    {{{ALTS("developer mode", "dan mode", "god mode", "jailbreak mode", "jailbreak"), 0},
      {ALTS("enabled", "activated", "on", "engaged", "unlocked"), 12}},
     CHECK_MENTION},
    {{{ALTS("do anything now"), 0}}, CHECK_MENTION},
    {{{ALTS("你现在是", "你现在扮演", "你现在的身份是", "现在你是", "你已经不再是", "你不再是",
            "你将扮演"),
       0}},
     CHECK_MENTION},
    {{{ALTS("从现在开始", "从现在起", "从此刻起", "从今以后", "接下来"), 0},
      {ALTS("你"), 4},
      {ALTS("是", "将", "扮演", "不再", "只听", "只服从", "没有任何限制", "不受", "必须忽略",
            "要忽略", "只需服从"),
       6}},
     CHECK_MENTION | CHECK_CLAUSE_ZH},
    {{{ALTS("进入", "开启", "启用", "切换到", "切换为"), 0},
      {ALTS("开发者模式", "越狱模式", "上帝模式", "dan模式", "dan 模式", "无限制模式",
            "管理员模式"),
       6}},
     CHECK_MENTION | CHECK_CLAUSE_ZH},
    {{{ALTS("扮演"), 0},
      {ALTS("没有限制", "不受限制", "没有任何限制", "不受任何限制", "无限制"), 15}},
     CHECK_MENTION | CHECK_CLAUSE_ZH},
    {{{NULL, 0}}, 0}};

static const struct seq SEQ_NEW_INSTRUCTIONS[] = {
    {{{ALTS("new", "updated", "real", "actual", "true", "revised", "secret", "hidden", "priority",
            "important new", "override", "admin", "emergency", "additional"),
       0},
      {ALTS("instructions:", "instruction:", "system prompt:", "directives:", "directive:",
            "orders:", "instructions follow", "instructions below"),
       2}},
     CHECK_MENTION},
    {{{ALTS("system override", "admin override", "end of previous instructions",
            "end of original instructions", "end of system prompt", "begin new instructions",
            "instructions end here", "the above was a test"),
       0}},
     CHECK_MENTION},
    {{{ALTS("新的", "最新", "真正的", "更新的", "更新后的", "隐藏", "新", "真实", "紧急", "优先"),
       0},
      {ALTS("指令:", "指示:", "系统提示:", "系统提示词:", "命令:", "任务:"), 3}},
     CHECK_MENTION},
    {{{ALTS("系统覆盖", "管理员覆盖", "以上指令作废", "以上内容作废", "之前的指令作废",
            "之前的指令已失效", "以上都是测试"),
       0}},
     CHECK_MENTION},
    {{{NULL, 0}}, 0}};

static const struct seq SEQ_DECODE[] = {
    {{{ALTS("decode", "base64-decode", "base64 decode", "rot13", "unscramble", "decrypt",
            "reverse"),
       0},
      {ALTS("follow", "execute", "obey", "carry out", "act on", "do what", "run the"), 40},
      {ALTS("it", "them", "the result", "the decoded", "the instructions", "its instructions",
            "it says", "instructions", "the text", "the command*"),
       12}},
     CHECK_IMPERATIVE | CHECK_MENTION},
    {{{ALTS("解码", "base64 解码", "base64解码", "解密", "反转"), 0},
      {ALTS("执行", "照做", "遵循", "遵守", "服从", "按照"), 24}},
     CHECK_MENTION | CHECK_CLAUSE_ZH},
    {{{NULL, 0}}, 0}};

/* role_tag */
static const struct seq SEQ_CHAT_TOKEN[] = {
    {{{ALTS("<|im_start|>", "<|im_end|>", "<|im_sep|>", "<|system|>", "<|user|>", "<|assistant|>",
            "<|endoftext|>", "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
            "<|eot_id|>", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<start_of_turn>",
            "<end_of_turn>", "<|end|>", "<|eom_id|>", "<|channel|>", "<|start|>", "<|message|>",
            "</s><s>", "<s>[inst"),
       0}},
     SKIP_CODE | CHECK_MENTION},
    {{{ALTS("<system>", "</system>", "<assistant>", "</assistant>", "<user>", "</user>",
            "<system_prompt>", "</system_prompt>", "<instructions>", "</instructions>", "<sys>",
            "</sys>", "[system]", "[assistant]", "[system message]", "[sys]", "【系统】", "[系统]",
            "【系统消息】", "【系统提示】", "【助手】", "<系统>", "</系统>", "(system message)",
            "[admin]", "[developer]", "<developer>", "</developer>"),
       0}},
     SKIP_CODE | CHECK_MENTION},
    {{{NULL, 0}}, 0}};

static const struct seq SEQ_SEND[] = {
    {{{ALTS("send", "upload", "post", "email", "e-mail", "mail", "forward", "transmit",
            "exfiltrate", "leak", "share", "submit", "beacon", "report", "copy", "dump", "pipe",
            "write"),
       0},
      {ALTS("content*", "secret*", "credential*", "password*", "api key*", "api_key*", "apikey*",
            "token*", ".env", "env", "environment variable*", "id_rsa", "id_ed25519",
            "private key*", "secret key*", "access key*", "ssh private", "system prompt",
            "conversation*", "chat history", "chat log*", "history", "memory", "memories",
            "cookie*", "session*", "aws", ".git-credentials", ".netrc", "keychain", "wallet",
            "everything", "all files", "the files", "user data", "personal data", "~/."),
       50},
      {ALTS("http:", "https:", "ftp:", "url", "endpoint", "webhook*", "server", "address", "email",
            "e-mail", "inbox", "pastebin", "ngrok", "discord", "telegram", "gist", "requestbin",
            "@"),
       70}},
     CHECK_IMPERATIVE | CHECK_MENTION},
    {{{ALTS("把", "将"), 0},
      {ALTS("内容", "密钥", "秘钥", "令牌", "token", "密码", "系统提示", "环境变量", "对话",
            "聊天记录", "历史", "凭证", "凭据", "私钥", "配置", "文件", "api key", "key", "cookie",
            "会话", ".env", "ssh", "记忆", "所有数据", "用户数据", "提示词"),
       30},
      {ALTS("发送", "发到", "发给", "上传", "提交", "转发", "回传", "传到", "传给", "贴到", "post",
            "send", "邮件发", "外发", "同步到"),
       30},
      {ALTS("http*", "网址", "链接", "服务器", "邮箱", "地址", "接口", "webhook", "url", "端点",
            "@"),
       50}},
     CHECK_CLAUSE_ZH | CHECK_MENTION},
    {{{ALTS("发送", "上传", "转发", "回传", "提交", "外发"), 0},
      {ALTS("内容", "密钥", "秘钥", "令牌", "token", "密码", "系统提示", "环境变量", "对话",
            "聊天记录", "凭证", "凭据", "私钥", "api key", "cookie", "会话", ".env", "ssh",
            "所有数据", "用户数据", "提示词"),
       30},
      {ALTS("http*", "网址", "链接", "服务器", "邮箱", "地址", "接口", "webhook", "url", "端点",
            "@"),
       50}},
     CHECK_CLAUSE_ZH | CHECK_MENTION},
    {{{NULL, 0}}, 0}};

static const struct seq SEQ_REVEAL[] = {
    {{{ALTS("reveal", "repeat", "dump", "leak", "disclose", "recite", "expose", "output", "print",
            "show", "display", "tell me", "give me", "write out", "share"),
       0},
      {ALTS("system prompt", "initial prompt", "hidden prompt", "original prompt",
            "hidden instructions", "initial instructions", "secret instructions", "text above",
            "everything above", "all of the above", "words above", "prompt above", "messages above",
            "your instructions", "your prompt", "your rules", "your guidelines",
            "your configuration", "your directives", "developer message"),
       20}},
     CHECK_IMPERATIVE | CHECK_MENTION},
    {{{ALTS("输出", "打印", "重复", "泄露", "透露", "显示", "告诉我", "展示", "复述", "给出",
            "说出"),
       0},
      {ALTS("你的", "全部", "完整", "原始", "隐藏", "以上", "上面", "初始", "最初"), 9},
      {ALTS("系统提示", "提示词", "指令", "设定", "规则", "初始提示", "内容", "prompt"), 12}},
     CHECK_CLAUSE_ZH | CHECK_MENTION},
    {{{NULL, 0}}, 0}};

static const struct seq SEQ_PIPE[] = {
    {{{ALTS("curl", "wget", "fetch"), 0},
      {ALTS("|"), 300},
      {ALTS("sh", "bash", "zsh", "dash", "ksh", "fish", "python*", "perl", "ruby", "node", "php",
            "sudo sh", "sudo bash", "sudo -e bash", "sudo -e sh", "source"),
       12}},
     CHECK_NEGATION | CHECK_MENTION | SAME_LINE},
    {{{ALTS("bash", "sh", "zsh", "source", ".", "python*"), 0},
      {ALTS("<(curl", "<(wget", "<( curl", "<( wget"), 3}},
     CHECK_NEGATION | CHECK_MENTION | SAME_LINE},
    {{{ALTS("sh -c", "bash -c", "zsh -c", "eval"), 0},
      {ALTS("$(curl", "$(wget", "\"$(curl", "\"$(wget", "`curl", "`wget", "'$(curl"), 4}},
     CHECK_NEGATION | CHECK_MENTION | SAME_LINE},
    {{{ALTS("iwr", "irm", "invoke-webrequest", "invoke-restmethod", "downloadstring",
            "new-object net.webclient"),
       0},
      {ALTS("| iex", "|iex", "invoke-expression", "| invoke-expression"), 300}},
     CHECK_NEGATION | CHECK_MENTION | SAME_LINE},
    {{{ALTS("iex"), 0}, {ALTS("(iwr", "(irm", "(new-object", "( iwr", "( irm"), 3}},
     CHECK_NEGATION | CHECK_MENTION | SAME_LINE},
    {{{NULL, 0}}, 0}};

/* Check what a phrase row's match needs; 1 when it stands. */
static int checks_pass(const struct folded *f, const struct seq *q, size_t s, size_t e)
{
    if ((q->checks & SKIP_CODE) && f->code[s])
        return 0;
    if ((q->checks & CHECK_IMPERATIVE) && !imperative_at(f, s))
        return 0;
    if ((q->checks & CHECK_CLAUSE_ZH) && zh_describes(f, s))
        return 0;
    if ((q->checks & CHECK_NEGATION) && negated(f, s))
        return 0;
    if ((q->checks & CHECK_MENTION) && is_mention(f, s, e))
        return 0;
    return 1;
}

/* The first match of any sequence of a phrase row that passes its checks.
 * After MAX_SUPPRESSED matches that did not (quoted mentions ...), the next
 * match stands whatever: a text of that many mentions is not a discussion. */
static int scan_seqs(const struct folded *f, const struct seq *seqs, size_t *s_out, size_t *e_out)
{
    size_t best_s = SIZE_MAX, best_e = 0;
    for (const struct seq *q = seqs; q->steps[0].alts; q++) {
        int suppressed = 0, words = starts_words(q->steps[0].alts);
        unsigned char first[256] = {0};
        for (size_t i = 0; q->steps[0].alts[i]; i++)
            first[(unsigned char)q->steps[0].alts[i][0]] = 1;
        for (size_t p = 0; p < f->n && p < best_s; p++) {
            size_t e;
            if (!first[(unsigned char)f->t[p]] || (words && mid_word(f->t, p)))
                continue;
            e = seq_at(f, p, q);
            if (e == 0)
                continue;
            if (suppressed < MAX_SUPPRESSED && !checks_pass(f, q, p, e)) {
                suppressed++;
                continue;
            }
            best_s = p;
            best_e = e;
            break;
        }
    }
    if (best_s == SIZE_MAX)
        return 0;
    *s_out = best_s;
    *e_out = best_e;
    return 1;
}

/* ---- scanners of their own ------------------------------------------------ */

/* A role label at the start of a line ("System:", "### Assistant",
 * "Human:", "助手：") or an upper-case label inside one ("... SYSTEM: ..."). */
static const char *const ROLE_STRONG[] = {"assistant",      "human",         "助手",     "人类",
                                          "system message", "system prompt", "系统消息", "系统提示",
                                          "系统指令",       "ai助手",        NULL};
static const char *const ROLE_WEAK[] = {
    "system", "user", "ai",  "model",   "bot",    "developer", "instruction", "response",
    "系统",   "用户", "gpt", "chatgpt", "claude", "admin",     "管理员",      NULL};

/* 1 when t[i] came from an upper-case ASCII or full-width letter. */
static int orig_upper(const struct folded *f, size_t i)
{
    const unsigned char *o = (const unsigned char *)f->orig + f->map[i];
    uint32_t cp;
    size_t k = utf8_decode(o, f->orig_len - f->map[i], &cp);
    return k > 0 && ((cp >= 'A' && cp <= 'Z') || (cp >= 0xff21 && cp <= 0xff3a));
}

/* 1 when t[p..] is a short label and a colon ("Shell:", "CPU:", "环境:"):
 * at most 24 bytes of words, spaces, dashes or CJK before the colon. */
static int label_at(const char *t, size_t n, size_t p)
{
    size_t q = p;
    while (
        q < n && q - p <= 24 &&
        (is_word((unsigned char)t[q]) || t[q] == ' ' || t[q] == '-' || (unsigned char)t[q] >= 0x80))
        q++;
    /* not a URL's scheme ("https://") */
    return q > p && t[p] != ' ' && q < n && t[q] == ':' && !(q + 1 < n && t[q + 1] == '/');
}

static int scan_fake_turn(const struct folded *f, size_t *off, size_t *len)
{
    const char *t = f->t;
    size_t strong_off = SIZE_MAX, strong_len = 0;
    size_t weak_first = SIZE_MAX, weak_end = 0;
    size_t weak_roles = 0; /* bit per ROLE_WEAK row seen */
    size_t other_labels = 0;
    for (size_t ls = 0; ls < f->n; ls = line_end_of(t, f->n, ls) + 1) {
        size_t p = ls, e;
        int heading = 0, role = 0;
        if (f->code[ls])
            continue;
        while (p < f->n &&
               (t[p] == ' ' || t[p] == '>' || t[p] == '*' || t[p] == '#' || t[p] == '-' ||
                t[p] == '+' || t[p] == '_' || t[p] == '[' || t[p] == '(' || t[p] == '|')) {
            if (t[p] == '#')
                heading = 1;
            p++;
        }
        for (int strong = 1; strong >= 0; strong--) {
            const char *const *set = strong ? ROLE_STRONG : ROLE_WEAK;
            for (size_t r = 0; set[r]; r++) {
                size_t q;
                if (!alt_at(t, f->n, p, set[r], &e))
                    continue;
                q = e;
                while (q < f->n &&
                       (t[q] == '*' || t[q] == '_' || t[q] == ' ' || t[q] == ']' || t[q] == ')'))
                    q++;
                int label = q < f->n && t[q] == ':';
                int bare_heading = heading && (q >= f->n || t[q] == '\n');
                if (!label && !bare_heading)
                    continue;
                if (strong || bare_heading) {
                    if (strong_off == SIZE_MAX) {
                        strong_off = f->map[ls];
                        strong_len = f->map[q < f->n ? q + 1 : q] - f->map[ls];
                    }
                    role = 1;
                    break;
                }
                if (weak_first == SIZE_MAX) {
                    weak_first = ls;
                    weak_end = q;
                }
                weak_roles |= (size_t)1 << r;
                role = 1;
                break;
            }
            if (role)
                break;
        }
        if (!role && label_at(t, f->n, p))
            other_labels++;
    }
    /* A strong role ("Assistant:", "助手：", "System prompt:") fakes a turn,
     * unless the text is the record of a conversation with named speakers
     * ("Maya:", "浩子：" on two lines or more): knowledge pasted from a chat
     * with an assistant is not an injection by its labels alone. */
    if (strong_off != SIZE_MAX && other_labels < 2) {
        *off = strong_off;
        *len = strong_len;
        return 1;
    }
    /* Two different weak roles ("System:" and "User:") make a dialogue,
     * unless other labels ("Shell:", "环境：") make the lines a list of
     * settings. */
    if ((weak_roles & (weak_roles - 1)) && other_labels == 0) {
        *off = f->map[weak_first];
        *len = f->map[weak_end + 1 < f->n ? weak_end + 1 : f->n] - f->map[weak_first];
        return 1;
    }
    /* An upper-case "SYSTEM:" or "ASSISTANT:" inside a line. */
    for (size_t p = 0; p < f->n; p++) {
        size_t e;
        if (f->code[p] ||
            (!alt_at(t, f->n, p, "system", &e) && !alt_at(t, f->n, p, "assistant", &e)))
            continue;
        size_t q = e;
        while (q < f->n && q - e < 4 && (t[q] == ' ' || t[q] == '*' || t[q] == '_'))
            q++;
        if (q >= f->n || t[q] != ':')
            continue;
        int upper = 1;
        for (size_t i = p; i < e && upper; i++)
            upper = orig_upper(f, i);
        if (upper) {
            *off = f->map[p];
            *len = f->map[q + 1] - f->map[p];
            return 1;
        }
    }
    return 0;
}

static const char *const SECRET_PARAMS[] = {"token",
                                            "access_token",
                                            "auth_token",
                                            "id_token",
                                            "refresh_token",
                                            "api_key",
                                            "apikey",
                                            "api-key",
                                            "key",
                                            "secret",
                                            "client_secret",
                                            "password",
                                            "passwd",
                                            "pwd",
                                            "pass",
                                            "auth",
                                            "session",
                                            "sessionid",
                                            "session_id",
                                            "sid",
                                            "cookie",
                                            "cookies",
                                            "credentials",
                                            "creds",
                                            "private_key",
                                            "jwt",
                                            "bearer",
                                            "sk",
                                            "aws_secret_access_key",
                                            "aws_access_key_id",
                                            "ssh_key",
                                            "env",
                                            "secrets",
                                            "access_key",
                                            "secret_key",
                                            NULL};
static const char *const SENSITIVE_NAMES[] = {
    "key",    "token",   "secret",    "passw",    "env",        "prompt", "conversation", "history",
    "memory", "context", "chat",      "message",  "credential", "cookie", "session",      "ssh",
    "aws",    "system",  "user_data", "userdata", "data",       "pwd",    "auth",         NULL};

static int placeholder_in(const char *v, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (v[i] == '$' && (v[i + 1] == '{' || v[i + 1] == '(' || v[i + 1] == '_' ||
                            (v[i + 1] >= 'a' && v[i + 1] <= 'z')))
            return 1;
        if (v[i] == '{' && v[i + 1] == '{')
            return 1;
        if (v[i] == '%' && i + 2 < n && v[i + 1] == '2' && v[i + 2] == '4')
            return 1;
        if (v[i] == '%' && i + 5 < n && memcmp(v + i, "%7b%7b", 6) == 0)
            return 1;
        if (v[i] == '<' && v[i + 1] == '%')
            return 1;
    }
    return 0;
}

static int contains_any(const char *v, size_t n, const char *const *set)
{
    for (size_t i = 0; set[i]; i++) {
        size_t k = strlen(set[i]);
        for (size_t p = 0; p + k <= n; p++)
            if (memcmp(v + p, set[i], k) == 0)
                return 1;
    }
    return 0;
}

static const char *const KEY_PREFIXES[] = {
    "sk-", "ghp_", "gho_", "github_pat_", "xoxb-", "xoxp-", "AKIA", "eyJ", "glpat-", "AIza", NULL};

/* A value that starts like a known kind of key (sk-..., ghp_..., AKIA...). */
static int key_prefixed(const char *v, size_t n)
{
    for (size_t i = 0; KEY_PREFIXES[i]; i++) {
        size_t k = strlen(KEY_PREFIXES[i]);
        if (n >= k + 12 && memcmp(v, KEY_PREFIXES[i], k) == 0)
            return 1;
    }
    return 0;
}

/* A value that looks like a real secret: 20+ token characters with letters
 * and digits, or a known key prefix (original case). */
static int secret_like(const char *v, size_t n)
{
    int letters = 0, digits = 0;
    if (key_prefixed(v, n))
        return 1;
    if (n < 20)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            letters = 1;
        else if (c >= '0' && c <= '9')
            digits = 1;
        else if (c != '-' && c != '_' && c != '.' && c != '+' && c != '/' && c != '=' && c != '%')
            return 0;
    }
    return letters && digits;
}

static int url_end_char(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' ||
           c == ')' || c == ']' || c == '|' || c >= 0x80;
}

static int scan_secret_url(const struct folded *f, size_t *off, size_t *len)
{
    const char *t = f->t;
    for (size_t p = 0; p + 8 < f->n; p++) {
        size_t e, q, end;
        if (t[p] != 'h' ||
            (!alt_at(t, f->n, p, "http://", &e) && !alt_at(t, f->n, p, "https://", &e)))
            continue;
        end = e;
        /* A placeholder may hold spaces and quotes: ${ ... } and {{ ... }} run to their end. */
        while (end < f->n && !url_end_char((unsigned char)t[end])) {
            if ((t[end] == '{' && end + 1 < f->n && t[end + 1] == '{') ||
                (t[end] == '$' && end + 1 < f->n && (t[end + 1] == '{' || t[end + 1] == '('))) {
                char close = t[end + 1] == '(' ? ')' : '}';
                size_t c = end + 2;
                while (c < f->n && c - end < 80 && t[c] != close && t[c] != '\n')
                    c++;
                end = c < f->n && t[c] == close ? c + 1 : end + 1;
                continue;
            }
            end++;
        }
        q = e;
        while (q < end && t[q] != '?')
            q++;
        for (size_t a = q + 1; a < end;) {
            size_t b = a, eq;
            while (b < end && t[b] != '&' && t[b] != ';')
                b++;
            eq = a;
            while (eq < b && t[eq] != '=')
                eq++;
            if (eq < b) {
                const char *v = t + eq + 1;
                size_t vn = b - eq - 1;
                int secret_name = word_in(t + a, eq - a, SECRET_PARAMS);
                int ph = placeholder_in(v, vn);
                size_t ov = f->map[eq + 1], ovn = f->map[b] - ov;
                if ((ph && (secret_name || contains_any(v, vn, SENSITIVE_NAMES))) ||
                    (secret_name && secret_like(f->orig + ov, ovn)) ||
                    key_prefixed(f->orig + ov, ovn)) {
                    *off = f->map[p];
                    *len = f->map[end] - f->map[p];
                    return 1;
                }
            }
            a = b + 1;
        }
        p = end > p ? end - 1 : p;
    }
    return 0;
}

static int scan_html_comment(const struct folded *f, size_t *off, size_t *len)
{
    for (size_t p = 0; p + 4 <= f->n; p++) {
        if (f->code[p] || memcmp(f->t + p, "<!--", 4) != 0)
            continue;
        size_t e = p + 4;
        while (e + 3 <= f->n && memcmp(f->t + e, "-->", 3) != 0)
            e++;
        e = e + 3 <= f->n ? e + 3 : f->n;
        *off = f->map[p];
        *len = f->map[e] - f->map[p];
        return 1;
    }
    return 0;
}

static int b64_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/' || c == '=' || c == '-' || c == '_';
}

static int hex_char(unsigned char c)
{
    return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9');
}

#define LONG_RUN 200
#define WRAPPED_LINE 40
#define HEX_ESCAPES 24

/* Long runs of base64 (hex = 1) or hex characters in the original text; a
 * run goes on over a line break when the line before held 40+ of them (a
 * wrapped block). Hex escapes (\x69\x67...) count as a hex run too. */
static int scan_run(const struct folded *f, int hex, size_t *off, size_t *len)
{
    const unsigned char *s = (const unsigned char *)f->orig;
    size_t n = f->orig_len, start = 0, count = 0, seg = 0;
    int all_hex = 1, has_digit = 0, has_upper = 0, has_lower = 0;
    for (size_t i = 0; i <= n; i++) {
        unsigned char c = i < n ? s[i] : 0;
        if (i < n && b64_char(c)) {
            if (count == 0) {
                start = i;
                all_hex = 1;
                has_digit = has_upper = has_lower = 0;
            }
            count++;
            seg++;
            all_hex &= hex_char(c);
            has_digit |= c >= '0' && c <= '9';
            has_upper |= c >= 'A' && c <= 'Z';
            has_lower |= c >= 'a' && c <= 'z';
            continue;
        }
        if (i < n && (c == '\n' || c == '\r') && seg >= WRAPPED_LINE) {
            if (c == '\n')
                seg = 0;
            continue;
        }
        if (count >= LONG_RUN) {
            int is_hex = all_hex && has_digit;
            int is_b64 = !all_hex && has_digit && has_upper && has_lower;
            if ((hex && is_hex) || (!hex && is_b64)) {
                *off = start;
                *len = i - start;
                return 1;
            }
        }
        count = 0;
        seg = 0;
    }
    if (hex) {
        size_t esc = 0, first = 0;
        for (size_t i = 0; i + 4 <= n; i++) {
            if (s[i] == '\\' && s[i + 1] == 'x' && hex_char(s[i + 2]) && hex_char(s[i + 3])) {
                if (esc == 0)
                    first = i;
                if (++esc >= HEX_ESCAPES) {
                    *off = first;
                    *len = i + 4 - first;
                    return 1;
                }
                i += 3;
            } else {
                esc = 0;
            }
        }
    }
    return 0;
}

static int scan_base64(const struct folded *f, size_t *off, size_t *len)
{
    return scan_run(f, 0, off, len);
}

static int scan_hex(const struct folded *f, size_t *off, size_t *len)
{
    return scan_run(f, 1, off, len);
}

static int scan_hidden(const struct folded *f, enum hidden_kind k, size_t *off, size_t *len)
{
    if (!f->hid_seen[k])
        return 0;
    *off = f->hid_off[k];
    *len = f->hid_len[k];
    return 1;
}

static int scan_zero_width(const struct folded *f, size_t *off, size_t *len)
{
    return scan_hidden(f, HID_ZERO_WIDTH, off, len);
}

static int scan_bidi(const struct folded *f, size_t *off, size_t *len)
{
    return scan_hidden(f, HID_BIDI, off, len);
}

static int scan_tags(const struct folded *f, size_t *off, size_t *len)
{
    return scan_hidden(f, HID_TAG, off, len);
}

/* Words spelled out letter by letter ("i g n o r e  a l l  p r e v i o u s",
 * "忽 略 之 前"): the letters of such a run, squeezed, hold a keyword. */
static const char *const SPACED_KEYWORDS[] = {"ignore",
                                              "override",
                                              "bypass",
                                              "无视",
                                              "ignoreall",
                                              "ignoreprevious",
                                              "ignoreprior",
                                              "ignoreabove",
                                              "ignoreyour",
                                              "disregard",
                                              "previousinstructions",
                                              "priorinstructions",
                                              "systemprompt",
                                              "youarenow",
                                              "newinstructions",
                                              "developermode",
                                              "jailbreak",
                                              "forgetall",
                                              "forgetprevious",
                                              "revealyour",
                                              "忽略",
                                              "之前的指令",
                                              "系统提示",
                                              "你现在是",
                                              NULL};

#define SPACED_MIN 6
#define SQUEEZE_MAX 64
#define SQUEEZE_DROP 24

static int scan_spaced(const struct folded *f, size_t *off, size_t *len)
{
    const char *t = f->t;
    struct buf sq; /* the squeezed letters of the run, its last SQUEEZE_MAX bytes */
    size_t tokens = 0, run_start = 0, p = 0;
    int found = 0;
    buf_init(&sq, SQUEEZE_MAX);
    while (p < f->n) {
        size_t k = 0;
        unsigned char c = (unsigned char)t[p];
        int single = 0;
        if (c >= 'a' && c <= 'z') {
            k = 1;
            single = (p == 0 || !is_word((unsigned char)t[p - 1])) &&
                     (p + 1 >= f->n || !is_word((unsigned char)t[p + 1]));
        } else if (c >= 0xe4 && c <= 0xe9 && p + 3 <= f->n) {
            k = 3; /* a CJK ideograph: alone between separators */
            single = (p == 0 || (unsigned char)t[p - 1] < 0x80) &&
                     (p + 3 >= f->n || (unsigned char)t[p + 3] < 0x80);
        }
        if (single) {
            if (tokens == 0)
                run_start = p;
            if (sq.len + k > SQUEEZE_MAX) {
                /* keep the last bytes: longer than any keyword */
                memmove(sq.data, sq.data + SQUEEZE_DROP, sq.len - SQUEEZE_DROP);
                buf_truncate(&sq, sq.len - SQUEEZE_DROP);
            }
            buf_add(&sq, t + p, k);
            tokens++;
            if (tokens >= SPACED_MIN)
                for (size_t i = 0; SPACED_KEYWORDS[i] && !found; i++) {
                    size_t kl = strlen(SPACED_KEYWORDS[i]);
                    if (sq.len >= kl &&
                        memcmp(sq.data + sq.len - kl, SPACED_KEYWORDS[i], kl) == 0) {
                        *off = f->map[run_start];
                        *len = f->map[p + k] - f->map[run_start];
                        found = 1;
                    }
                }
            if (found)
                break;
            p += k;
            /* up to 3 separators, not a blank line, keep the run going */
            size_t sep = 0;
            while (p < f->n && sep < 4 && !is_word((unsigned char)t[p]) &&
                   (unsigned char)t[p] < 0x80 &&
                   !(t[p] == '\n' && p + 1 < f->n && t[p + 1] == '\n')) {
                p++;
                sep++;
            }
            if (sep == 0 || sep > 3) {
                tokens = 0;
                buf_reset(&sq);
            }
            continue;
        }
        tokens = 0;
        buf_reset(&sq);
        p += k ? k : 1;
    }
    buf_release(&sq);
    return found;
}

static const struct rule_impl RULES[] = {
    {{SCREEN_INSTRUCTION_OVERRIDE, "override_previous",
      "an order to ignore, forget or override previous instructions or rules (en, zh)"},
     SEQ_OVERRIDE,
     NULL},
    {{SCREEN_INSTRUCTION_OVERRIDE, "persona_switch",
      "an order to become someone else: \"you are now\", \"from now on you are\", DAN or "
      "developer mode, \"你现在是\""},
     SEQ_PERSONA,
     NULL},
    {{SCREEN_INSTRUCTION_OVERRIDE, "new_instructions",
      "a header that announces replacement instructions: \"New instructions:\", \"system "
      "override\", \"新的指令：\""},
     SEQ_NEW_INSTRUCTIONS,
     NULL},
    {{SCREEN_INSTRUCTION_OVERRIDE, "decode_and_follow",
      "an order to decode hidden text and follow it (base64, rot13; en, zh)"},
     SEQ_DECODE,
     NULL},
    {{SCREEN_INSTRUCTION_OVERRIDE, "spaced_out",
      "an override or a role spelled letter by letter (\"i g n o r e  a l l\")"},
     NULL,
     scan_spaced},
    {{SCREEN_ROLE_TAG, "chat_template_token",
      "a chat template token or role tag outside code: <|im_start|>, [INST], <<SYS>>, "
      "<system>, 【系统】"},
     SEQ_CHAT_TOKEN,
     NULL},
    {{SCREEN_ROLE_TAG, "fake_turn",
      "a line that opens a chat turn outside code: \"Assistant:\", \"Human:\", \"### System\", "
      "\"系统消息：\", or two different roles such as \"System:\" and \"User:\""},
     NULL,
     scan_fake_turn},
    {{SCREEN_EXFILTRATION, "secret_in_url",
      "a URL whose query carries a secret or a placeholder for one (?key=${API_KEY}, "
      "{{conversation}}, token=<real token>)"},
     NULL,
     scan_secret_url},
    {{SCREEN_EXFILTRATION, "pipe_to_shell",
      "a download piped into a shell: curl ... | sh, wget ... | bash, bash <(curl ...), iwr ... "
      "| iex"},
     SEQ_PIPE,
     NULL},
    {{SCREEN_EXFILTRATION, "send_secrets",
      "an order to send secrets, files or the conversation to a URL, address or server (en, "
      "zh: 把…发送到)"},
     SEQ_SEND,
     NULL},
    {{SCREEN_EXFILTRATION, "reveal_prompt",
      "an order to reveal the system prompt or the instructions (en, zh)"},
     SEQ_REVEAL,
     NULL},
    {{SCREEN_HIDDEN_TEXT, "zero_width",
      "zero-width or invisible characters (U+200B-U+200D, U+2060-U+2064, U+FEFF not first, "
      "U+00AD)"},
     NULL,
     scan_zero_width},
    {{SCREEN_HIDDEN_TEXT, "bidi_control", "bidirectional controls (U+202A-U+202E, U+2066-U+2069)"},
     NULL,
     scan_bidi},
    {{SCREEN_HIDDEN_TEXT, "tag_characters", "Unicode tag characters (U+E0000-U+E007F)"},
     NULL,
     scan_tags},
    {{SCREEN_HIDDEN_TEXT, "base64_run",
      "a run of 200 or more base64 characters (wrapped lines count as one run)"},
     NULL,
     scan_base64},
    {{SCREEN_HIDDEN_TEXT, "hex_run",
      "a run of 200 or more hex digits, or 24 or more \\xHH escapes in a row"},
     NULL,
     scan_hex},
    {{SCREEN_HIDDEN_TEXT, "html_comment", "an HTML comment <!-- ... --> outside code"},
     NULL,
     scan_html_comment},
};

#define RULE_COUNT (sizeof RULES / sizeof RULES[0])

size_t screen_rule_count(void)
{
    return RULE_COUNT;
}

const struct screen_rule *screen_rule_at(size_t i)
{
    return i < RULE_COUNT ? &RULES[i].info : NULL;
}

const char *screen_class_name(enum screen_class cls)
{
    switch (cls) {
    case SCREEN_INSTRUCTION_OVERRIDE:
        return "instruction_override";
    case SCREEN_ROLE_TAG:
        return "role_tag";
    case SCREEN_EXFILTRATION:
        return "exfiltration";
    case SCREEN_HIDDEN_TEXT:
        return "hidden_text";
    case SCREEN_CLASS_COUNT:
        break;
    }
    return "unknown";
}

int screen_text(const char *text, size_t len, struct screen_result *out)
{
    struct folded f;
    out->count = 0;
    if (len > SCREEN_MAX_INPUT)
        return -1;
    fold_text(&f, text, len);
    for (size_t r = 0; r < RULE_COUNT && out->count < SCREEN_MAX_FINDINGS; r++) {
        size_t off = 0, flen = 0;
        int hit;
        if (RULES[r].seqs) {
            size_t s, e;
            hit = scan_seqs(&f, RULES[r].seqs, &s, &e);
            if (hit) {
                off = f.map[s];
                flen = f.map[e] - f.map[s];
            }
        } else {
            hit = RULES[r].scan(&f, &off, &flen);
        }
        if (!hit)
            continue;
        struct screen_finding *fd = &out->findings[out->count++];
        fd->cls = RULES[r].info.cls;
        fd->code = RULES[r].info.code;
        fd->offset = off;
        fd->length = flen ? flen : 1;
    }
    fold_release(&f);
    return (int)out->count;
}

#define EXCERPT_BYTES 80

int screen_excerpt(const char *text, size_t len, const struct screen_finding *f, struct buf *out)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = f->offset < len ? f->offset : len, shown = 0;
    int rc = 0;
    while (i < len && shown < EXCERPT_BYTES) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, len - i, &cp);
        if (k == 0) {
            rc |= buf_adds(out, "<?>");
            i++;
            shown++;
            continue;
        }
        if (space_kind(cp) == 2 || cp == '\t' || cp == '\r') {
            rc |= buf_addch(out, ' ');
        } else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || is_zero_width(cp) ||
                   is_bidi_control(cp) || is_tag_char(cp) || cp == 0xfeff || cp == 0x200e ||
                   cp == 0x200f) {
            rc |= buf_addf(out, "<U+%04X>", (unsigned)cp);
        } else {
            rc |= buf_add(out, s + i, k);
        }
        i += k;
        shown += k;
    }
    return rc ? -1 : 0;
}
