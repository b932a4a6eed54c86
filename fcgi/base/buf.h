/* buf: the bounded growable byte buffer every piece of text is built in.
 * data is never NULL and always NUL-terminated; a buffer never grows past
 * its maximum, and an append that would is refused whole (-1). */
#ifndef KNOWHUB_BUF_H
#define KNOWHUB_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
    char *data;
    size_t len;
    size_t cap;
    size_t max; /* largest len allowed */
};

/* Initialise an empty buffer that may hold at most max bytes. */
void buf_init(struct buf *b, size_t max);
/* Free the storage; the buffer is empty and reusable afterwards. */
void buf_release(struct buf *b);
/* Forget the contents, keep the storage. */
void buf_reset(struct buf *b);
/* Hand the storage to the caller (caller frees) and re-initialise b. */
char *buf_detach(struct buf *b, size_t *len);

/* Append; each returns 0, or -1 (buffer unchanged) when max would be passed. */
int buf_add(struct buf *b, const void *data, size_t n);
int buf_adds(struct buf *b, const char *s);
int buf_addch(struct buf *b, char c);
int buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vaddf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Append s as one line: every line break in it (see line_break_at) becomes
 * a space, so text from users cannot start a heading, a list item or a
 * section of its own in a block built for agents. */
int buf_add_one_line(struct buf *b, const char *s);

#endif
