/* util: allocation that aborts on exhaustion, UTF-8 checks and UTC time text. */
#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void out_of_memory(void)
{
    fputs("knowhub: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory();
    return q;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

/* Length of the UTF-8 sequence starting at s (n bytes available), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && s[1] < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && s[1] >= 0xA0)
            return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90)
            return 0; /* overlong */
        if (c == 0xF4 && s[1] >= 0x90)
            return 0; /* above U+10FFFF */
        return 4;
    }
    return 0;
}

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len = n && s[0] == 0 ? 1 : utf8_seq(s, n);
    uint32_t v;
    if (len == 0)
        return 0;
    v = len == 1 ? s[0] : s[0] & (0x7fu >> len);
    for (size_t i = 1; i < len; i++)
        v = (v << 6) | (s[i] & 0x3fu);
    *cp = v;
    return len;
}

int utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t k = utf8_seq(p + i, n - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

/* The continuation bytes (10xxxxxx) among the 8 bytes at s: each byte whose
 * top bit is set and the next one clear, summed across the word. */
static size_t continuations8(const char *s)
{
    uint64_t w, m;
    memcpy(&w, s, sizeof w);
    m = (w & ~(w << 1) & 0x8080808080808080ULL) >> 7;
    return (size_t)((m * 0x0101010101010101ULL) >> 56);
}

size_t utf8_length(const char *s, size_t n)
{
    size_t count = n, i = 0;
    for (; i + 8 <= n; i += 8)
        count -= continuations8(s + i);
    for (; i < n; i++)
        count -= ((unsigned char)s[i] & 0xC0) == 0x80;
    return count;
}

size_t utf8_prefix(const char *s, size_t n, size_t max_chars)
{
    size_t chars = 0, i = 0;
    /* whole words while they cannot hold the character max_chars starts */
    while (i + 8 <= n && chars + 8 <= max_chars) {
        chars += 8 - continuations8(s + i);
        i += 8;
    }
    while (i < n) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (chars == max_chars)
                break;
            chars++;
        }
        i++;
    }
    return i;
}

size_t utf8_fit(const char *s, size_t n, size_t max_bytes)
{
    size_t i = max_bytes;
    if (n <= max_bytes)
        return n;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--; /* s[i] continues the character before it: cut where that one starts */
    return i;
}

/* 1 when s[0..n) could begin a character: a lead byte and continuation bytes. */
static int utf8_incomplete(const unsigned char *s, size_t n)
{
    size_t want = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
    if (s[0] < 0xC2 || s[0] > 0xF4 || n >= want)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return 1;
}

char *utf8_repair(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t n = strlen(s), i = 0;
    while (i < n) {
        size_t k = utf8_seq(p + i, n - i);
        if (k) {
            i += k;
        } else if (utf8_incomplete(p + i, n - i)) {
            p[i] = '\0';
            break;
        } else {
            p[i++] = '?';
        }
    }
    return s;
}

void utf8_copy(char *dst, size_t cap, const char *src)
{
    size_t n = utf8_fit(src, strlen(src), cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
    utf8_repair(dst);
}

/* The wall clock's offset from the system's, in seconds: 0 unless
 * KNOWHUB_NOW names the moment the clock reads when the process starts
 * (tests of expiry and ageing; docs/operations.md). */
static long clock_offset;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

static void clock_init(void)
{
    const char *v = getenv("KNOWHUB_NOW");
    struct tm tm;
    time_t at;
    int used = 0;
    if (!v || !*v)
        return;
    memset(&tm, 0, sizeof tm);
    if (sscanf(v, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &used) != 6 ||
        v[used] || tm.tm_mon < 1 || tm.tm_mon > 12) {
        fprintf(stderr,
                "knowhub: KNOWHUB_NOW=%s is not YYYY-MM-DDTHH:MM:SSZ; using the system clock\n", v);
        return;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    at = timegm(&tm);
    clock_offset = (long)(at - time(NULL));
}

time_t time_now(void)
{
    pthread_once(&clock_once, clock_init);
    return time(NULL) + clock_offset;
}

static void utc_now(struct tm *tm)
{
    time_t t = time_now();
    gmtime_r(&t, tm);
}

void time_utc_text(char out[static 20])
{
    struct tm tm;
    utc_now(&tm);
    strftime(out, 20, "%Y-%m-%d %H:%M:%S", &tm);
}

void time_utc_iso_micro(char out[static 27])
{
    time_utc_iso_micro_offset(out, 0);
}

void time_utc_iso_micro_offset(char out[static 27], long offset)
{
    struct timespec ts;
    struct tm tm;
    time_t t;
    clock_gettime(CLOCK_REALTIME, &ts);
    pthread_once(&clock_once, clock_init);
    t = ts.tv_sec + clock_offset + offset;
    gmtime_r(&t, &tm);
    strftime(out, 20, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + 19, 8, ".%06u", (unsigned)(ts.tv_nsec / 1000) % 1000000u);
}

void time_utc_text_offset(char out[static 20], long offset)
{
    struct tm tm;
    time_t t = time_now() + offset;
    gmtime_r(&t, &tm);
    strftime(out, 20, "%Y-%m-%d %H:%M:%S", &tm);
}

void time_utc_iso_z(char out[static 21])
{
    struct tm tm;
    utc_now(&tm);
    strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void time_utc_compact_date(char out[static 9])
{
    struct tm tm;
    utc_now(&tm);
    strftime(out, 9, "%Y%m%d", &tm);
}

int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v;
    if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9')))
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int id_text_valid(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;
    /* "." and ".." are path segments a browser resolves: /api/sessions/..
     * would never reach the session, so no id may be one. */
    if (n && strspn(s, ".") == n && n <= 2)
        return 0;
    return n >= 1 && n <= max &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") == n;
}

size_t line_break_at(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    if (*u == '\r' || *u == '\n' || *u == '\v' || *u == '\f')
        return 1;
    if (u[0] == 0xc2 && u[1] == 0x85)
        return 2;
    if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
        return 3;
    return 0;
}

int has_line_break(const char *s)
{
    for (; *s; s++)
        if (line_break_at(s))
            return 1;
    return 0;
}

long monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *ui_language(const char *accept_language)
{
    const char *al = accept_language;
    if (!al)
        return "en";
    al += strspn(al, " \t");
    return (al[0] == 'z' || al[0] == 'Z') && (al[1] == 'h' || al[1] == 'H') &&
                   (al[2] == '\0' || al[2] == '-' || al[2] == '_' || al[2] == ',' || al[2] == ';' ||
                    al[2] == ' ')
               ? "zh"
               : "en";
}

uint64_t hash_fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void id_random(char *out, const char *prefix)
{
    unsigned char rnd[8];
    size_t n = strlen(prefix);
    randombytes_buf(rnd, sizeof rnd);
    memcpy(out, prefix, n);
    sodium_bin2hex(out + n, 17, rnd, sizeof rnd);
}

const char *fence_find(const char *text, size_t len)
{
    for (size_t i = 0; i + 3 <= len; i++)
        if (text[i] == '`' && text[i + 1] == '`' && text[i + 2] == '`')
            return text + i;
    return NULL;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int fence_unwrap(const char *text, size_t len, const char **body, size_t *body_len)
{
    size_t start = 0;
    const char *close, *line_end;
    while (start < len && is_space(text[start]))
        start++;
    while (len > start && is_space(text[len - 1]))
        len--;
    if (len - start < 6 || memcmp(text + start, "```", 3) != 0 ||
        memcmp(text + len - 3, "```", 3) != 0)
        return 0;
    close = text + len - 3;
    line_end = memchr(text + start, '\n', (size_t)(close - (text + start)));
    if (!line_end)
        return 0;
    *body = line_end + 1;
    *body_len = (size_t)(close - *body);
    return 1;
}
