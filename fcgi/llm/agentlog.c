/* agentlog: the reasoning log, JSON lines under agent-logs/. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "llm/agentlog.h"
#include "base/config.h"
#include "base/jfield.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum agentlog_mode agentlog_mode(const struct config *cfg)
{
    const char *m = cfg ? cfg->agent_log : NULL;
    if (!m || !*m || strcasecmp(m, "off") == 0)
        return AGENTLOG_OFF;
    return strcasecmp(m, "verbose") == 0 ? AGENTLOG_VERBOSE : AGENTLOG_ON;
}

static const char *const secret_keys[] = {
    "password",      "passwd",
    "pwd",           "secret",
    "client_secret", "token",
    "access_token",  "refresh_token",
    "api_key",       "apikey",
    "api-key",       "access_key",
    "secret_key",    "secret_access_key",
    "credential",    "credentials",
    "private_key",   "private-key",
    "authorization", "connection_string",
    "conn_str",
};

static int secret_key(const char *k)
{
    for (size_t i = 0; i < sizeof secret_keys / sizeof *secret_keys; i++)
        if (strcasecmp(k, secret_keys[i]) == 0)
            return 1;
    return 0;
}

void agentlog_redact(struct json_object *v)
{
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, key, val)
        {
            if (secret_key(key))
                json_object_object_add(v, key, json_object_new_string("***"));
            else
                agentlog_redact(val);
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            agentlog_redact(json_object_array_get_idx(v, i));
    }
}

void agentlog_safe_name(const char *name, struct buf *out)
{
    size_t start, end;
    buf_reset(out);
    for (const char *p = name ? name : ""; *p && out->len < 200; p++) {
        char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '_' || c == '.' || c == '-')
            buf_addch(out, c);
        else if (c == ' ' || c == '\t')
            buf_addch(out, '_');
    }
    start = strspn(out->data, "._");
    end = out->len;
    while (end > start && (out->data[end - 1] == '.' || out->data[end - 1] == '_'))
        end--;
    memmove(out->data, out->data + start, end - start);
    out->len = end - start;
    out->data[out->len] = '\0';
    if (out->len == 0)
        buf_adds(out, "anonymous");
}

static int mkdirs(struct buf *path, size_t from)
{
    for (size_t i = from + 1; i < path->len; i++) {
        if (path->data[i] != '/')
            continue;
        path->data[i] = '\0';
        int rc = mkdir(path->data, 0700);
        path->data[i] = '/';
        if (rc && errno != EEXIST)
            return -1;
    }
    return 0;
}

void agentlog_write(const struct config *cfg, const char *identity, const char *session_id,
                    const char *agent_type, const char *step_type, struct json_object *fields)
{
    enum agentlog_mode mode = agentlog_mode(cfg);
    struct json_object *line = fields ? fields : json_object_new_object();
    struct buf path, id, sess;
    char date[20], ts[27];
    const char *text;
    int fd;

    if (mode == AGENTLOG_OFF) {
        json_object_put(fields);
        return;
    }
    if (mode == AGENTLOG_ON)
        json_object_object_del(line, "messages");
    else
        agentlog_redact(line);
    time_utc_iso_micro(ts);
    memcpy(date, ts, 10);
    date[10] = '\0';
    json_object_object_add(line, "step_type", json_object_new_string(step_type));
    json_object_object_add(line, "ts", json_object_new_string(ts));
    json_object_object_add(line, "session_id",
                           json_object_new_string(session_id ? session_id : ""));
    json_object_object_add(line, "agent_type",
                           json_object_new_string(agent_type ? agent_type : ""));
    json_object_object_add(line, "identity_id", json_object_new_string(identity ? identity : ""));

    buf_init(&path, 8192);
    buf_init(&id, 256);
    buf_init(&sess, 512);
    agentlog_safe_name(identity, &id);
    {
        struct buf raw;
        buf_init(&raw, 512);
        buf_addf(&raw, "%s-%s", session_id ? session_id : "", agent_type ? agent_type : "");
        agentlog_safe_name(raw.data, &sess);
        buf_release(&raw);
    }
    buf_addf(&path, "%s/agent-logs/%s/%s/%s.jsonl", cfg->data_dir, date, id.data, sess.data);
    text = json_text(line);
    /* One write per line with O_APPEND: lines from several threads never mix. */
    /* A cut-short path (a data directory near PATH_MAX) is never opened. */
    if (!buf_failed(&path) && mkdirs(&path, strlen(cfg->data_dir)) == 0 &&
        (fd = open(path.data, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) >= 0) {
        struct buf out;
        buf_init(&out, 64 * 1024 * 1024);
        buf_adds(&out, text);
        buf_addch(&out, '\n');
        if (!buf_failed(&out) && write_all(fd, out.data, out.len))
            fprintf(stderr, "knowhub: reasoning log write to %s failed\n", path.data);
        buf_release(&out);
        close(fd);
    }
    json_object_put(line);
    buf_release(&path);
    buf_release(&id);
    buf_release(&sess);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path); /* best effort: a file that will not go stays for the next start */
    return 0;
}

int agentlog_cleanup(const struct config *cfg, int days)
{
    struct buf dir, victim;
    char cutoff[20];
    DIR *d;
    struct dirent *e;
    int removed = 0;
    buf_init(&dir, 8192);
    buf_init(&victim, 8192);
    buf_addf(&dir, "%s/agent-logs", cfg->data_dir);
    time_utc_text_offset(cutoff, -(long)days * 86400);
    cutoff[10] = '\0';
    if ((d = opendir(dir.data))) {
        while ((e = readdir(d))) {
            const char *n = e->d_name;
            /* Only YYYY-MM-DD names; anything else is left alone. */
            if (strlen(n) != 10 || n[4] != '-' || n[7] != '-' || strspn(n, "0123456789-") != 10 ||
                strcmp(n, cutoff) >= 0)
                continue;
            buf_reset(&victim);
            buf_addf(&victim, "%s/%s", dir.data, n);
            nftw(victim.data, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
            removed++;
        }
        closedir(d);
    }
    buf_release(&dir);
    buf_release(&victim);
    return removed;
}
