/* client: the content commands' HTTP client (libcurl): URL and token
 * resolution, one call with its budgets, and the API's envelope read into
 * data or into an error said on stderr with its exit status. */
#include "app/client.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/util.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct client {
    CURL *curl;
    struct buf base;  /* the URL without a trailing slash */
    struct buf token; /* printable ASCII, never printed */
};

/* 1 when s is a token that can go in a header: 1 to CLIENT_MAX_TOKEN
 * printable ASCII characters, no space (no header can be smuggled in). */
static int token_sendable(const char *s, size_t n)
{
    if (n == 0 || n > CLIENT_MAX_TOKEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return 0;
    return 1;
}

/* Read the token from the first line of path into out (surrounding
 * blanks dropped); said on stderr on failure. */
static int token_from_file(const char *path, const char *what, struct buf *out)
{
    char chunk[1024];
    struct buf text;
    ssize_t got;
    int fd, rc = -1;
    size_t start, end;
    buf_init(&text, 4096);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "knowhub: cannot read the token file %s (%s): %s\n", path, what,
                strerror(errno));
        goto out;
    }
    while ((got = read(fd, chunk, sizeof chunk)) > 0)
        if (buf_add(&text, chunk, (size_t)got))
            break;
    close(fd);
    if (got < 0 || buf_failed(&text)) {
        fprintf(stderr, "knowhub: the token file %s (%s) %s\n", path, what,
                got < 0 ? "cannot be read" : "is larger than 4 KiB: not a token file");
        goto out;
    }
    end = strcspn(text.data, "\r\n");
    start = 0;
    while (start < end && (text.data[start] == ' ' || text.data[start] == '\t'))
        start++;
    while (end > start && (text.data[end - 1] == ' ' || text.data[end - 1] == '\t'))
        end--;
    if (!token_sendable(text.data + start, end - start)) {
        fprintf(stderr, "knowhub: the token file %s (%s) holds no token on its first line\n", path,
                what);
        goto out;
    }
    buf_add(out, text.data + start, end - start);
    rc = 0;
out:
    memset(text.data, 0, text.len);
    buf_release(&text);
    return rc;
}

int client_local_url(struct buf *out)
{
    const char *host = getenv("KNOWHUB_HOST"), *port = getenv("KNOWHUB_PORT");
    long port_number;
    if (!host || !*host)
        host = "127.0.0.1";
    if (!port || !*port)
        port = "8080";
    if (parse_long(port, 1, 65535, &port_number)) {
        fprintf(stderr, "knowhub: KNOWHUB_PORT must be a port number (got '%.20s')\n", port);
        return -1;
    }
    /* An IPv6 address goes in brackets. */
    if (buf_addf(out, strchr(host, ':') && host[0] != '[' ? "http://[%s]:%ld" : "http://%s:%ld",
                 host, port_number)) {
        fputs("knowhub: KNOWHUB_HOST is too long\n", stderr);
        return -1;
    }
    return 0;
}

/* The base URL: the option, KNOWHUB_URL, or the local server; *local is 1
 * for the last. -1 (said) when it is not an http(s) URL. */
static int resolve_url(const char *url, struct buf *out, int *local)
{
    *local = 0;
    if (!url || !*url)
        url = getenv("KNOWHUB_URL");
    if (url && *url) {
        size_t n = strlen(url);
        if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
            fprintf(stderr, "knowhub: the URL must start with http:// or https:// (got '%.200s')\n",
                    url);
            return -1;
        }
        while (n > 0 && url[n - 1] == '/')
            n--;
        buf_add(out, url, n);
    } else {
        *local = 1;
        if (client_local_url(out))
            return -1;
    }
    if (buf_failed(out)) {
        fputs("knowhub: the URL is longer than 4 KiB\n", stderr);
        return -1;
    }
    return 0;
}

/* The token: the option's file, KNOWHUB_TOKEN, KNOWHUB_TOKEN_FILE, or in
 * local mode $KNOWHUB_DATA/admin.token (never sent to a URL one chose:
 * the operator's admin token stays on this host). */
static int resolve_token(const struct config *cfg, const char *token_file, int local,
                         struct buf *out)
{
    const char *env = getenv("KNOWHUB_TOKEN");
    if (token_file)
        return token_from_file(token_file, "--token-file", out);
    if (env && *env) {
        if (!token_sendable(env, strlen(env))) {
            fputs("knowhub: KNOWHUB_TOKEN is not a token (1 to 512 printable characters, no "
                  "spaces)\n",
                  stderr);
            return -1;
        }
        buf_adds(out, env);
        return 0;
    }
    env = getenv("KNOWHUB_TOKEN_FILE");
    if (env && *env)
        return token_from_file(env, "KNOWHUB_TOKEN_FILE", out);
    if (local) {
        struct buf path;
        int rc = -1;
        buf_init(&path, 4096);
        buf_addf(&path, "%s/admin.token", cfg->data_dir);
        if (!buf_failed(&path) && access(path.data, F_OK) == 0)
            rc = token_from_file(path.data, "the local admin token", out);
        else
            fprintf(stderr,
                    "knowhub: no token: give --token-file FILE, or set KNOWHUB_TOKEN or "
                    "KNOWHUB_TOKEN_FILE (%s does not exist)\n",
                    path.data);
        buf_release(&path);
        return rc;
    }
    fputs("knowhub: no token: give --token-file FILE, or set KNOWHUB_TOKEN or KNOWHUB_TOKEN_FILE\n",
          stderr);
    return -1;
}

int client_open(const struct config *cfg, const char *url, const char *token_file,
                struct client **out)
{
    struct client *c = xcalloc(1, sizeof *c);
    int local;
    *out = NULL;
    buf_init(&c->base, 4096);
    buf_init(&c->token, CLIENT_MAX_TOKEN + 1);
    if (resolve_url(url, &c->base, &local)) {
        client_free(c);
        return CLIENT_EXIT_USAGE;
    }
    if (resolve_token(cfg, token_file, local, &c->token)) {
        client_free(c);
        return CLIENT_EXIT_AUTH;
    }
    c->curl = curl_easy_init();
    if (!c->curl) {
        fputs("knowhub: libcurl could not make a handle\n", stderr);
        client_free(c);
        return CLIENT_EXIT_SERVER;
    }
    *out = c;
    return CLIENT_EXIT_OK;
}

void client_free(struct client *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    memset(c->token.data, 0, c->token.len);
    buf_release(&c->token);
    buf_release(&c->base);
    free(c);
}

void client_add_escaped(struct client *c, struct buf *b, const char *s)
{
    /* Longer than any URL this client sends (16 KiB): refused, not cut. */
    size_t n = strnlen(s, (size_t)64 << 10);
    char *e = n < ((size_t)64 << 10) ? curl_easy_escape(c->curl, s, (int)n) : NULL;
    if (!e) {
        /* An append one byte over the room left is refused before any copy:
         * b is failed from now on, as after any refused append. */
        buf_add(b, "", b->max - b->len + 1);
        return;
    }
    buf_adds(b, e);
    curl_free(e);
}

int client_exit_of_code(const char *code)
{
    static const char *const refused[] = {
        E_INVALID_REQUEST,   E_CONFLICT,           E_LIMIT_EXCEEDED,
        E_PAYLOAD_TOO_LARGE, E_METHOD_NOT_ALLOWED, E_UNSUPPORTED_MEDIA_TYPE,
    };
    if (!code)
        return CLIENT_EXIT_SERVER;
    if (!strcmp(code, E_NOT_FOUND) || !strcmp(code, E_FILE_NOT_FOUND))
        return CLIENT_EXIT_NOT_FOUND;
    if (!strcmp(code, E_UNAUTHORIZED) || !strcmp(code, E_FORBIDDEN))
        return CLIENT_EXIT_AUTH;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (!strcmp(code, refused[i]))
            return CLIENT_EXIT_REFUSED;
    return CLIENT_EXIT_SERVER;
}

int client_exit_of_http(long status)
{
    if (status == 404)
        return CLIENT_EXIT_NOT_FOUND;
    if (status == 401 || status == 403)
        return CLIENT_EXIT_AUTH;
    /* 429 asks to come back later: like a server that cannot answer now. */
    if (status >= 400 && status < 500 && status != 429)
        return CLIENT_EXIT_REFUSED;
    return CLIENT_EXIT_SERVER;
}

/* Say text from the server on stderr on one line, at most max bytes, its
 * control characters as '?' (a remote server cannot drive the terminal). */
static void say_plain(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    n = utf8_fit(s, n, max);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        fputc(ch < 0x20 || ch == 0x7f ? '?' : ch, stderr);
    }
}

static size_t collect(char *data, size_t size, size_t n, void *ctx)
{
    struct buf *answer = ctx;
    /* Returning less than given makes curl stop with CURLE_WRITE_ERROR. */
    return buf_add(answer, data, size * n) ? 0 : size * n;
}

/* The envelope of a KnowHub answer: data on success, else the error said. */
static int read_envelope(long status, struct json_object *root, struct json_object **data)
{
    const char *state = jf_member_str(root, "status");
    struct json_object *err = NULL, *d = NULL;
    if (state && !strcmp(state, "success") && status == 200 &&
        json_object_object_get_ex(root, "data", &d)) {
        *data = json_object_get(d);
        return CLIENT_EXIT_OK;
    }
    if (state && !strcmp(state, "error") && json_object_object_get_ex(root, "error", &err) &&
        json_object_is_type(err, json_type_object)) {
        const char *code = jf_member_str(err, "code"), *message = jf_member_str(err, "message");
        int rc = code ? client_exit_of_code(code) : client_exit_of_http(status);
        /* An unknown code on an HTTP error status: the status says more. */
        if (rc == CLIENT_EXIT_SERVER && status >= 400 && status < 500)
            rc = client_exit_of_http(status);
        fputs("knowhub: ", stderr);
        say_plain(code ? code : "ERROR", 64);
        fputs(": ", stderr);
        say_plain(message ? message : "(no message)", 2000);
        fputc('\n', stderr);
        return rc;
    }
    return -1;
}

int client_call(struct client *c, const char *method, const char *path, const char *body,
                struct json_object **data)
{
    struct buf url, auth, answer;
    struct curl_slist *headers = NULL;
    struct json_object *root = NULL;
    const char *why = NULL;
    long status = 0;
    CURLcode cc;
    int rc = CLIENT_EXIT_SERVER;
    *data = NULL;
    buf_init(&url, 16384);
    buf_init(&auth, CLIENT_MAX_TOKEN + 64);
    buf_init(&answer, CLIENT_MAX_ANSWER);
    buf_addf(&url, "%s%s", c->base.data, path);
    buf_addf(&auth, "Authorization: Bearer %s", c->token.data);
    if (buf_failed(&url) || buf_failed(&auth)) {
        fputs("knowhub: the request's URL is longer than 16 KiB\n", stderr);
        rc = CLIENT_EXIT_USAGE;
        goto out;
    }
    headers = curl_slist_append(headers, auth.data);
    headers = curl_slist_append(headers, "Accept: application/json");
    if (body)
        headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_reset(c->curl);
    curl_easy_setopt(c->curl, CURLOPT_URL, url.data);
    curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, CLIENT_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, CLIENT_TIMEOUT_MS);
    curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "knowhub-cli/0.1.0");
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &answer);
    cc = curl_easy_perform(c->curl);
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    if (cc == CURLE_OPERATION_TIMEDOUT) {
        fprintf(stderr, "knowhub: cannot reach %s: no answer within %ld s\n", c->base.data,
                CLIENT_TIMEOUT_MS / 1000);
        goto out;
    }
    if (cc == CURLE_WRITE_ERROR) {
        fprintf(stderr, "knowhub: the answer of %s is larger than %zu MiB; nothing was printed\n",
                c->base.data, CLIENT_MAX_ANSWER >> 20);
        goto out;
    }
    if (cc != CURLE_OK) {
        fprintf(stderr, "knowhub: cannot reach %s: %s\n", c->base.data, curl_easy_strerror(cc));
        goto out;
    }
    if (answer.len && json_parse_whole(answer.data, answer.len, &root, &why) == 0 &&
        json_object_is_type(root, json_type_object) &&
        (rc = read_envelope(status, root, data)) >= 0)
        goto out;
    rc = client_exit_of_http(status);
    if (rc == CLIENT_EXIT_SERVER && status >= 200 && status < 300)
        fprintf(stderr, "knowhub: %s answered HTTP %ld without KnowHub's JSON: is it KnowHub?\n",
                c->base.data, status);
    else {
        /* nginx's own pages are HTML: their title says it. */
        const char *text = answer.len ? answer.data : "(empty answer)";
        const char *title = strstr(text, "<title>");
        size_t n = 200;
        if (title && strstr(title, "</title>")) {
            text = title + 7;
            n = (size_t)(strstr(title, "</title>") - text);
        }
        fprintf(stderr, "knowhub: HTTP %ld: ", status);
        say_plain(text, n < 200 ? n : 200);
        fputc('\n', stderr);
    }
out:
    json_object_put(root);
    curl_slist_free_all(headers);
    memset(auth.data, 0, auth.len);
    buf_release(&auth);
    buf_release(&url);
    buf_release(&answer);
    return rc;
}
