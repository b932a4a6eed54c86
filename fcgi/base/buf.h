/* buf: the bounded growable byte buffer every piece of text is built in.
 * data is never NULL and always NUL-terminated; a buffer never grows past
 * its maximum, and an append that would is refused whole (-1).
 *
 * Failure is sticky (like git's strbuf or curl's dynbuf): once an append was
 * refused the buffer stays failed, and every later append is refused too
 * (-1, buffer unchanged) until buf_reset or buf_release. So a caller may
 * ignore the result of each append and check buf_failed once where the text
 * is used (answered, sent to the LLM, written to the store): the text is then
 * either whole or known to be cut short, never silently missing a middle
 * piece. Checking an append's result is still right where a caller stops
 * early on a full buffer. */
#ifndef KNOWHUB_BUF_H
#define KNOWHUB_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
    char *data;
    size_t len;
    size_t cap;
    size_t max; /* largest len allowed */
    int failed; /* an append was refused since the last init, reset or release */
};

/* Initialise an empty buffer that may hold at most max bytes. */
void buf_init(struct buf *b, size_t max);
/* Free the storage; the buffer is empty, not failed and reusable afterwards. */
void buf_release(struct buf *b);
/* Forget the contents and the failure, keep the storage. */
void buf_reset(struct buf *b);
/* Cut b back to its first len bytes (len <= b->len, else nothing happens)
 * and clear the failure: for a caller that drops a piece that did not fit
 * (a transaction's rows, a list that stops early) and goes on appending. */
void buf_truncate(struct buf *b, size_t len);
/* 1 when an append was refused since the last init, reset or release (the
 * text is incomplete), else 0. */
int buf_failed(const struct buf *b);
/* Hand the storage to the caller (caller frees) and re-initialise b (not
 * failed). */
char *buf_detach(struct buf *b, size_t *len);

/* Append; each returns 0, or -1 (buffer unchanged, and failed from now on)
 * when max would be passed or the buffer has already failed. Ignoring the
 * result is safe: check buf_failed once before the text is used. */
int buf_add(struct buf *b, const void *data, size_t n);
int buf_adds(struct buf *b, const char *s);
int buf_addch(struct buf *b, char c);
int buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vaddf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Append s as one line: every line break in it (see line_break_at) becomes
 * a space, so text from users cannot start a heading, a list item or a
 * section of its own in a block built for agents. All or nothing: on -1
 * the buffer is as before, and failed. */
int buf_add_one_line(struct buf *b, const char *s);

#endif
