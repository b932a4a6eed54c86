/* test_server: where knowhub serve puts its socket and database, from the
 * environment (KNOWHUB_DATA, KNOWHUB_SOCKET) as config_from_env reads it. */
#include "base/config.h"
#include "harness.h"
#include "app/server.h"

#include <stdlib.h>
#include <string.h>

static void test_socket_default(void)
{
    struct config cfg;
    struct buf b;
    setenv("KNOWHUB_DATA", "/var/lib/knowhub", 1);
    unsetenv("KNOWHUB_SOCKET");
    config_from_env(&cfg);
    buf_init(&b, 4096);
    server_socket_path(&cfg, &b);
    CHECK_STR(b.data, "/var/lib/knowhub/run/knowhub.sock");
    server_db_path(&cfg, &b);
    CHECK_STR(b.data, "/var/lib/knowhub/knowhub.db");
    buf_release(&b);
}

static void test_socket_from_env(void)
{
    struct config cfg;
    struct buf b;
    setenv("KNOWHUB_DATA", "/var/lib/knowhub", 1);
    setenv("KNOWHUB_SOCKET", "/run/knowhub/knowhub.sock", 1);
    config_from_env(&cfg);
    buf_init(&b, 4096);
    server_socket_path(&cfg, &b);
    CHECK_STR(b.data, "/run/knowhub/knowhub.sock");
    /* Empty counts as unset (stack.sh passes KNOWHUB_SOCKET= for the default). */
    setenv("KNOWHUB_SOCKET", "", 1);
    config_from_env(&cfg);
    server_socket_path(&cfg, &b);
    CHECK_STR(b.data, "/var/lib/knowhub/run/knowhub.sock");
    buf_release(&b);
}

/* What the startup line and `knowhub version` say of the store: never a
 * PostgreSQL password, in whichever form libpq accepts it. */
static void test_store_said(void)
{
    static const struct {
        const char *url, *said;
    } cases[] = {
        {"postgresql://kh:s3cret@db.example:5433/knowhub",
         "postgresql user=kh password=*** dbname=knowhub host=db.example port=5433"},
        {"postgres://kh@db/knowhub?password=s3cret&sslmode=require",
         "postgresql user=kh password=*** dbname=knowhub host=db sslmode=require"},
        {"host=/run/pg dbname=kh password='s3 cret' application_name='a b'",
         "postgresql password=*** dbname=kh host=/run/pg application_name='a b'"},
        {"postgresql://kh:s3cret@[::1", "postgresql (not a valid connection string)"},
    };
    struct config cfg;
    struct buf b;
    setenv("KNOWHUB_DATA", "/var/lib/knowhub", 1);
    buf_init(&b, 4096);
    /* the last case is none: the SQLite file of KNOWHUB_DATA */
    for (size_t i = 0; i <= sizeof cases / sizeof *cases; i++) {
        int sqlite = i == sizeof cases / sizeof *cases;
        if (sqlite)
            unsetenv("KNOWHUB_DATABASE_URL");
        else
            setenv("KNOWHUB_DATABASE_URL", cases[i].url, 1);
        config_from_env(&cfg);
        server_store_said(&cfg, &b);
        CHECK_STR(b.data, sqlite ? "sqlite /var/lib/knowhub/knowhub.db" : cases[i].said);
        CHECK(strstr(b.data, "s3") == NULL);
    }
    buf_release(&b);
}

int main(void)
{
    test_socket_default();
    test_socket_from_env();
    test_store_said();
    return test_summary();
}
