/* accesslog: JSON-lines access and audit logs with size rotation. */
#include "http/accesslog.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct accesslog {
    int fd; /* never changes: rotation dup2()s the new file onto it */
    char *path;
    long long max_bytes;
    int keep;
    atomic_llong size;        /* bytes written since the file was opened or rotated */
    pthread_mutex_t rotating; /* only the rotation takes it, with trylock */
    atomic_int failing;       /* the last write failed: said once on stderr, until one works */
};

static int open_append(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

struct accesslog *accesslog_open(const char *path, long long max_bytes, int keep)
{
    struct accesslog *log;
    struct stat sb;
    int fd = open_append(path);
    if (fd < 0) {
        fprintf(stderr, "knowhub: cannot open the log %s: %s\n", path, strerror(errno));
        return NULL;
    }
    log = xcalloc(1, sizeof *log);
    log->fd = fd;
    log->path = xstrdup(path);
    log->max_bytes = max_bytes;
    log->keep = keep > 0 ? keep : 1;
    atomic_init(&log->size, fstat(fd, &sb) == 0 ? (long long)sb.st_size : 0);
    pthread_mutex_init(&log->rotating, NULL);
    return log;
}

void accesslog_close(struct accesslog *log)
{
    if (!log)
        return;
    close(log->fd);
    pthread_mutex_destroy(&log->rotating);
    free(log->path);
    free(log);
}

/* name.(keep-1) -> name.keep, ..., name -> name.1, then a fresh name. */
static void rotate(struct accesslog *log)
{
    struct buf from, to;
    struct stat sb;
    int fd;
    /* Another thread may have rotated between our write and the lock. */
    if (fstat(log->fd, &sb) == 0 && sb.st_size < log->max_bytes) {
        atomic_store(&log->size, (long long)sb.st_size);
        return;
    }
    buf_init(&from, 8192);
    buf_init(&to, 8192);
    for (int i = log->keep; i >= 1; i--) {
        buf_reset(&from);
        buf_reset(&to);
        if (i > 1)
            buf_addf(&from, "%s.%d", log->path, i - 1);
        else
            buf_adds(&from, log->path);
        buf_addf(&to, "%s.%d", log->path, i);
        rename(from.data, to.data); /* a missing one is no error */
    }
    fd = open_append(log->path);
    if (fd >= 0) {
        dup2(fd, log->fd);
        close(fd);
    }
    atomic_store(&log->size, 0);
    buf_release(&from);
    buf_release(&to);
}

int accesslog_write(struct accesslog *log, const char *line, size_t n)
{
    long long after;
    if (!log || !n)
        return 0;
    /* A regular file writes all at once but on a full disk, an I/O error or
     * a signal: the rest goes after what was written. */
    if (write_all(log->fd, line, n)) {
        /* The line is lost, the request is not; the caller counts it. */
        if (!atomic_exchange(&log->failing, 1))
            fprintf(stderr,
                    "knowhub: cannot write to the log %s: %s; its lines are lost (counted "
                    "in knowhub_log_lines_lost_total) until a write works again\n",
                    log->path, strerror(errno));
        return -1;
    }
    if (atomic_load_explicit(&log->failing, memory_order_relaxed) &&
        atomic_exchange(&log->failing, 0))
        fprintf(stderr, "knowhub: writing to the log %s again\n", log->path);
    after =
        atomic_fetch_add_explicit(&log->size, (long long)n, memory_order_relaxed) + (long long)n;
    if (log->max_bytes > 0 && after >= log->max_bytes &&
        pthread_mutex_trylock(&log->rotating) == 0) {
        rotate(log);
        pthread_mutex_unlock(&log->rotating);
    }
    return 0;
}

/* A JSON string (or null): control characters escaped, bytes that are not
 * UTF-8 replaced by U+FFFD, so every line parses. */
static void add_string(struct buf *out, const char *s)
{
    if (!s) {
        buf_adds(out, "null");
        return;
    }
    buf_addch(out, '"');
    while (*s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf_addch(out, '\\');
            buf_addch(out, (char)c);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            buf_addf(out, "\\u%04x", c);
            s++;
        } else if (c < 0x80) {
            buf_addch(out, (char)c);
            s++;
        } else {
            size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
            if (strnlen(s, len) == len && utf8_valid(s, len)) {
                buf_add(out, s, len);
                s += len;
            } else {
                buf_adds(out, "\\ufffd");
                s++;
            }
        }
    }
    buf_addch(out, '"');
}

/* ,"name":"value" (value as add_string writes it). */
static void add_field(struct buf *out, const char *name, const char *value)
{
    buf_addf(out, ",\"%s\":", name);
    add_string(out, value);
}

/* "2026-12-03T09:00:00.123Z" */
static void add_now(struct buf *out)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    buf_addf(out, "\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

static void access_line(struct buf *out, const struct access_entry *e, int delivered)
{
    buf_reset(out);
    buf_adds(out, "{\"time\":");
    add_now(out);
    buf_adds(out, ",\"type\":\"access\"");
    add_field(out, "request_id", e->request_id);
    add_field(out, "space", e->space);
    add_field(out, "actor", e->actor);
    add_field(out, "token_id", e->token_id);
    add_field(out, "method", e->method);
    add_field(out, "route", e->route);
    buf_addf(out, ",\"status\":%d,\"duration_ms\":%.3f,\"bytes\":%zu", e->status, e->duration_ms,
             e->bytes);
    buf_adds(out, delivered ? "}\n" : ",\"delivered\":false}\n");
}

void accesslog_access_line(struct buf *out, const struct access_entry *e)
{
    access_line(out, e, 1);
}

void accesslog_undelivered_line(struct buf *out, const struct access_entry *e)
{
    access_line(out, e, 0);
}

void accesslog_audit_line(struct buf *out, const char *request_id, const char *ts,
                          const char *space, const char *actor, const char *action,
                          const char *target)
{
    buf_reset(out);
    buf_adds(out, "{\"time\":");
    add_now(out);
    buf_adds(out, ",\"type\":\"audit\"");
    add_field(out, "request_id", request_id);
    add_field(out, "ts", ts);
    add_field(out, "space", space);
    add_field(out, "actor", actor);
    add_field(out, "action", action);
    add_field(out, "target", target);
    buf_adds(out, "}\n");
}
