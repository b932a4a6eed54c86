/* test_server: where knowhub serve puts its socket and database, from the
 * environment (KNOWHUB_DATA, KNOWHUB_SOCKET) as config_from_env reads it. */
#include "base/config.h"
#include "harness.h"
#include "app/server.h"

#include <stdlib.h>

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

int main(void)
{
    test_socket_default();
    test_socket_from_env();
    return test_summary();
}
