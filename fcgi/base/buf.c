/* buf: the bounded growable byte buffer every piece of text is built in. */
#include "base/buf.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char empty_data[1];

void buf_init(struct buf *b, size_t max)
{
    b->data = empty_data;
    b->len = 0;
    b->cap = 0;
    b->max = max;
    b->failed = 0;
}

void buf_release(struct buf *b)
{
    if (b->cap)
        free(b->data);
    buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    b->failed = 0;
    if (b->cap)
        b->data[0] = '\0';
}

void buf_truncate(struct buf *b, size_t len)
{
    if (len > b->len)
        return;
    b->len = len;
    b->failed = 0;
    if (b->cap)
        b->data[len] = '\0';
}

int buf_failed(const struct buf *b)
{
    return b->failed;
}

char *buf_detach(struct buf *b, size_t *len)
{
    char *p = b->cap ? b->data : xstrdup("");
    if (len)
        *len = b->len;
    buf_init(b, b->max);
    return p;
}

/* Make room for extra more bytes plus the terminating NUL; refused (and the
 * buffer failed from now on) past the maximum or once failed. */
static int buf_grow(struct buf *b, size_t extra)
{
    size_t need;
    if (b->failed)
        return -1;
    if (extra > b->max - b->len || b->len + extra > b->max) {
        b->failed = 1;
        return -1;
    }
    need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap * 2;
    if (b->cap) {
        b->data = xrealloc(b->data, cap);
    } else {
        b->data = xmalloc(cap);
        b->data[0] = '\0';
    }
    b->cap = cap;
    return 0;
}

int buf_add(struct buf *b, const void *data, size_t n)
{
    if (buf_grow(b, n))
        return -1;
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int buf_adds(struct buf *b, const char *s)
{
    return buf_add(b, s, strlen(s));
}

int buf_addch(struct buf *b, char c)
{
    return buf_add(b, &c, 1);
}

int buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
    va_list cp;
    int n;
    va_copy(cp, ap);
    n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0) {
        b->failed = 1;
        return -1;
    }
    if (buf_grow(b, (size_t)n))
        return -1;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int buf_addf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = buf_vaddf(b, fmt, ap);
    va_end(ap);
    return r;
}

int buf_add_one_line(struct buf *b, const char *s)
{
    size_t start = b->len;
    while (*s) {
        size_t n = line_break_at(s), run = 0;
        if (n) {
            if (s[0] == '\r' && s[1] == '\n')
                n = 2;
            if (buf_addch(b, ' '))
                goto full;
            s += n;
            continue;
        }
        while (s[run] && !line_break_at(s + run))
            run++;
        if (buf_add(b, s, run))
            goto full;
        s += run;
    }
    return 0;
full:
    b->len = start; /* all or nothing; the buffer stays failed */
    if (b->cap)
        b->data[start] = '\0';
    return -1;
}
