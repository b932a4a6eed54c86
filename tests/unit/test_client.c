/* test_client: the content commands' client without a server: every API
 * error code and HTTP status to its exit status, the URL and token
 * resolution's refusals (and that the local admin token is never used for a
 * URL one chose), and percent-encoding with its bound. */
#include "harness.h"
#include "app/client.h"
#include "base/config.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_exit_of_code(void)
{
    CHECK_INT(client_exit_of_code(E_NOT_FOUND), CLIENT_EXIT_NOT_FOUND);
    CHECK_INT(client_exit_of_code(E_FILE_NOT_FOUND), CLIENT_EXIT_NOT_FOUND);
    CHECK_INT(client_exit_of_code(E_UNAUTHORIZED), CLIENT_EXIT_AUTH);
    CHECK_INT(client_exit_of_code(E_FORBIDDEN), CLIENT_EXIT_AUTH);
    CHECK_INT(client_exit_of_code(E_INVALID_REQUEST), CLIENT_EXIT_REFUSED);
    CHECK_INT(client_exit_of_code(E_CONFLICT), CLIENT_EXIT_REFUSED);
    CHECK_INT(client_exit_of_code(E_LIMIT_EXCEEDED), CLIENT_EXIT_REFUSED);
    CHECK_INT(client_exit_of_code(E_PAYLOAD_TOO_LARGE), CLIENT_EXIT_REFUSED);
    CHECK_INT(client_exit_of_code(E_METHOD_NOT_ALLOWED), CLIENT_EXIT_REFUSED);
    CHECK_INT(client_exit_of_code(E_UNSUPPORTED_MEDIA_TYPE), CLIENT_EXIT_REFUSED);
    /* What may work later, or is the server's fault: 1. */
    CHECK_INT(client_exit_of_code(E_SERVICE_UNAVAILABLE), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_code(E_RATE_LIMITED), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_code(E_INTERNAL), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_code(E_LLM_NOT_CONFIGURED), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_code("LLM_TIMEOUT"), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_code("SOMETHING_NEW"), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_code(NULL), CLIENT_EXIT_SERVER);
}

static void test_exit_of_http(void)
{
    CHECK_INT(client_exit_of_http(404), CLIENT_EXIT_NOT_FOUND);
    CHECK_INT(client_exit_of_http(401), CLIENT_EXIT_AUTH);
    CHECK_INT(client_exit_of_http(403), CLIENT_EXIT_AUTH);
    CHECK_INT(client_exit_of_http(400), CLIENT_EXIT_REFUSED);
    CHECK_INT(client_exit_of_http(413), CLIENT_EXIT_REFUSED);
    CHECK_INT(client_exit_of_http(429), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_http(500), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_http(502), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_http(302), CLIENT_EXIT_SERVER);
    CHECK_INT(client_exit_of_http(200), CLIENT_EXIT_SERVER); /* 200 without KnowHub's JSON */
    CHECK_INT(client_exit_of_http(0), CLIENT_EXIT_SERVER);
}

static void clear_env(void)
{
    unsetenv("KNOWHUB_URL");
    unsetenv("KNOWHUB_TOKEN");
    unsetenv("KNOWHUB_TOKEN_FILE");
    unsetenv("KNOWHUB_HOST");
    unsetenv("KNOWHUB_PORT");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_open(void)
{
    char dir[] = "/tmp/knowhub-client-XXXXXX", path[256], admin[256];
    struct config cfg;
    struct client *c = NULL;
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    clear_env();
    setenv("KNOWHUB_DATA", dir, 1);
    config_from_env(&cfg);
    snprintf(admin, sizeof admin, "%s/admin.token", dir);
    snprintf(path, sizeof path, "%s/token", dir);

    /* Not http(s): a usage error. */
    CHECK_INT(client_open(&cfg, "ftp://example.com", NULL, &c), CLIENT_EXIT_USAGE);
    CHECK(c == NULL);
    setenv("KNOWHUB_PORT", "99999", 1);
    CHECK_INT(client_open(&cfg, NULL, NULL, &c), CLIENT_EXIT_USAGE);
    unsetenv("KNOWHUB_PORT");

    /* Local mode without admin.token, a URL without a token: no token. */
    CHECK_INT(client_open(&cfg, NULL, NULL, &c), CLIENT_EXIT_AUTH);
    CHECK_INT(client_open(&cfg, "http://127.0.0.1:1", NULL, &c), CLIENT_EXIT_AUTH);
    /* With admin.token: local mode takes it, a chosen URL never does. */
    write_file(admin, "kh_0123456789abcdef_secret\n");
    CHECK_INT(client_open(&cfg, NULL, NULL, &c), CLIENT_EXIT_OK);
    CHECK(c != NULL);
    client_free(c);
    c = NULL;
    CHECK_INT(client_open(&cfg, "http://127.0.0.1:1", NULL, &c), CLIENT_EXIT_AUTH);
    setenv("KNOWHUB_URL", "http://127.0.0.1:1", 1);
    CHECK_INT(client_open(&cfg, NULL, NULL, &c), CLIENT_EXIT_AUTH);
    unsetenv("KNOWHUB_URL");

    /* Tokens that cannot go in a header are refused, from every source. */
    setenv("KNOWHUB_TOKEN", "two words", 1);
    CHECK_INT(client_open(&cfg, "http://127.0.0.1:1", NULL, &c), CLIENT_EXIT_AUTH);
    setenv("KNOWHUB_TOKEN", "kh_x\r\nX-Evil: 1", 1);
    CHECK_INT(client_open(&cfg, "http://127.0.0.1:1", NULL, &c), CLIENT_EXIT_AUTH);
    setenv("KNOWHUB_TOKEN", "kh_fine", 1);
    CHECK_INT(client_open(&cfg, "http://127.0.0.1:1", NULL, &c), CLIENT_EXIT_OK);
    client_free(c);
    c = NULL;
    unsetenv("KNOWHUB_TOKEN");
    write_file(path, "   \n");
    CHECK_INT(client_open(&cfg, "http://127.0.0.1:1", path, &c), CLIENT_EXIT_AUTH);
    write_file(path, "  kh_from_file \t\nsecond line ignored\n");
    CHECK_INT(client_open(&cfg, "http://127.0.0.1:1", path, &c), CLIENT_EXIT_OK);
    client_free(c);
    c = NULL;
    setenv("KNOWHUB_TOKEN_FILE", path, 1);
    CHECK_INT(client_open(&cfg, "http://127.0.0.1:1", NULL, &c), CLIENT_EXIT_OK);
    unsetenv("KNOWHUB_TOKEN_FILE");

    /* Percent-encoding, and a text too long for any URL fails the buffer. */
    if (c) {
        struct buf b;
        char *huge = malloc((64 << 10) + 1);
        buf_init(&b, 1 << 20);
        client_add_escaped(c, &b, "a b/c?d&e=\xc3\xa9");
        CHECK_STR(b.data, "a%20b%2Fc%3Fd%26e%3D%C3%A9");
        CHECK(!buf_failed(&b));
        memset(huge, 'x', 64 << 10);
        huge[64 << 10] = '\0';
        client_add_escaped(c, &b, huge);
        CHECK(buf_failed(&b));
        CHECK_STR(b.data, "a%20b%2Fc%3Fd%26e%3D%C3%A9");
        free(huge);
        buf_release(&b);
    }
    client_free(c);
    client_free(NULL);
    unlink(admin);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    test_exit_of_code();
    test_exit_of_http();
    test_open();
    return test_summary();
}
