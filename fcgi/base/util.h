/* util: allocation that aborts on exhaustion, UTF-8 checks and UTC time text.
 * Everything here is pure and thread-safe. */
#ifndef KNOWHUB_UTIL_H
#define KNOWHUB_UTIL_H

#include <stddef.h>
#include <time.h>
#include <stdint.h>

/* malloc/realloc/strdup that abort the process when memory is exhausted. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* Return 1 when s[0..n) is well-formed UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF) and holds no NUL byte, else 0. */
int utf8_valid(const char *s, size_t n);

/* The length of the well-formed UTF-8 sequence at s[0..n) (as utf8_valid
 * judges it; a NUL byte is one of length 1) and its code point in *cp, or 0
 * when s does not start one. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* Number of Unicode code points in the valid UTF-8 string s[0..n). */
size_t utf8_length(const char *s, size_t n);

/* Byte length of the longest prefix of valid UTF-8 s[0..n) holding at most
 * max_chars code points; never splits a character. */
size_t utf8_prefix(const char *s, size_t n, size_t max_chars);

/* Byte length of the longest prefix of valid UTF-8 s[0..n) of at most
 * max_bytes bytes that does not end inside a character: the cut for a text
 * bounded in bytes (a fixed buffer, a log line). */
size_t utf8_fit(const char *s, size_t n, size_t max_bytes);

/* Make the NUL-ended s valid UTF-8 in place: an incomplete character at its
 * end (a cut by bytes) is dropped, every other byte of an invalid sequence
 * becomes '?'. The one repair for texts KnowHub did not check itself (a
 * fixed buffer's snprintf, a server's message) before they are answered or
 * stored. Returns s. */
char *utf8_repair(char *s);

/* Copy the NUL-ended src into dst[cap] (cap > 0): at most cap - 1 bytes, cut
 * at a character boundary, repaired (utf8_repair), NUL-ended. */
void utf8_copy(char *dst, size_t cap, const char *src);

/* The byte length of the line break at p (CR, LF, VT, FF, U+0085 NEL,
 * U+2028 LS or U+2029 PS), or 0 when p does not start one. */
size_t line_break_at(const char *p);
/* 1 when s holds a line break (see line_break_at). */
int has_line_break(const char *s);

/* Milliseconds of the monotonic clock (for durations and deadlines). */
long monotonic_ms(void);

/* Seconds since the epoch by KnowHub's wall clock: the system's, or, with
 * KNOWHUB_NOW=YYYY-MM-DDTHH:MM:SSZ, a clock that reads that moment when the
 * process starts and runs on from it (for tests). Every time below reads it. */
time_t time_now(void);

/* Current UTC time: "YYYY-MM-DD HH:MM:SS" into out (at least 20 bytes). */
void time_utc_text(char out[static 20]);

/* Current UTC time with microseconds: "YYYY-MM-DDTHH:MM:SS.ffffff" (27 bytes). */
void time_utc_iso_micro(char out[static 27]);
/* The same, offset seconds from now. */
void time_utc_iso_micro_offset(char out[static 27], long offset);

/* UTC time `offset` seconds from now, in the same form. */
void time_utc_text_offset(char out[static 20], long offset);

/* Current UTC time: "YYYY-MM-DDTHH:MM:SSZ" into out (21 bytes): the form
 * of an entry's expires_at and review_after, which orders as text. */
void time_utc_iso_z(char out[static 21]);

/* Current UTC date: "YYYYMMDD" into out (at least 9 bytes). */
void time_utc_compact_date(char out[static 9]);

/* Return 1 when s is 1..max characters of [A-Za-z0-9._:-] and not "." or
 * ".." (ids chosen by clients and put in URLs: sessions, tables, traces,
 * request ids). The one check of every client-chosen id. */
int id_text_valid(const char *s, size_t max);

/* A new random id: prefix and 16 hex digits of 8 random bytes (libsodium)
 * into out, which holds at least strlen(prefix) + 17 bytes. */
void id_random(char *out, const char *prefix);

/* The 64-bit FNV-1a hash of s[0..n): cheap and well spread, for hash tables
 * and shingles (never for anything a client could attack). */
uint64_t hash_fnv1a(const char *s, size_t n);

/* The first ``` (a Markdown code fence) in text[0..len), or NULL. */
const char *fence_find(const char *text, size_t len);
/* The one stripper of a ``` fence an LLM wraps around its whole reply: when
 * text[0..len), whitespace around it aside, opens and closes with ``` (a
 * language tag such as ```json on the opening line), 1 with body[0..*body_len)
 * the lines between the opening fence's line and the closing fence (its
 * last line break kept); else 0. */
int fence_unwrap(const char *text, size_t len, const char **body, size_t *body_len);

/* Write all of data to fd, again after a signal or a short write: 0, or
 * -1 with errno (EIO when the system wrote nothing and said no error). */
int write_all(int fd, const void *data, size_t len);

/* Parse a whole decimal integer in [min, max]; 0 on success, -1 otherwise. */
int parse_long(const char *s, long min, long max, long *out);

/* The UI language of an Accept-Language header (may be NULL): "zh" when
 * its first tag is Chinese, else "en" (static strings). */
const char *ui_language(const char *accept_language);

#endif
