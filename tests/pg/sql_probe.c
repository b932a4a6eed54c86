/* tests/pg/sql_probe.c: PQprepare every statement the way the store will
 * (paramTypes NULL; BEGIN and COMMIT included, which SQL's PREPARE refuses),
 * then run S_READ_BEGIN, S_TOKEN_GET with a text parameter, S_LOGIN_GET with
 * a binary bytea one, S_GENERATION and S_READ_END. Usage: sql_probe CONNINFO
 * DIR READ_BEGIN_ID READ_END_ID TOKEN_GET_ID LOGIN_GET_ID GENERATION_ID
 * (DIR/pg/<id>.sql as sql_dump writes them). Prints one line; exit 1 on failure. */
#include <libpq-fe.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    static char text[1 << 16];
    size_t n;
    if (!f)
        return NULL;
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

static int run(PGconn *c, int id, int n, const char *const *values, const int *lengths,
               const int *formats, int want_rows)
{
    char name[16];
    PGresult *r;
    int ok;
    snprintf(name, sizeof name, "s%d", id);
    r = PQexecPrepared(c, name, n, values, lengths, formats, 0);
    ok = PQresultStatus(r) == (want_rows ? PGRES_TUPLES_OK : PGRES_COMMAND_OK);
    if (!ok)
        printf("FAIL probe: s%d: %s", id, PQresultErrorMessage(r));
    PQclear(r);
    return ok;
}

int main(int argc, char **argv)
{
    PGconn *c;
    int prepared = 0, ok = 1;
    if (argc != 8)
        return 2;
    c = PQconnectdb(argv[1]);
    if (PQstatus(c) != CONNECTION_OK) {
        printf("FAIL probe: %s", PQerrorMessage(c));
        return 1;
    }
    for (int id = 0; id < 1000; id++) {
        char path[4096], name[16];
        const char *sql;
        PGresult *r;
        snprintf(path, sizeof path, "%s/pg/%d.sql", argv[2], id);
        if (!(sql = slurp(path)))
            continue;
        snprintf(name, sizeof name, "s%d", id);
        r = PQprepare(c, name, sql, 0, NULL);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            printf("FAIL probe: PQprepare s%d: %s", id, PQresultErrorMessage(r));
            ok = 0;
        } else {
            prepared++;
        }
        PQclear(r);
    }
    {
        unsigned char hash[32];
        const char *token[] = {"no-such-token"};
        const char *login[] = {(const char *)hash, "2026-12-03 10:00:00"};
        const int lengths[] = {32, 0}, formats[] = {1, 0};
        memset(hash, 0xab, sizeof hash);
        ok &= run(c, atoi(argv[3]), 0, NULL, NULL, NULL, 0);
        ok &= run(c, atoi(argv[5]), 1, token, NULL, NULL, 1);
        ok &= run(c, atoi(argv[6]), 2, login, lengths, formats, 1);
        ok &= run(c, atoi(argv[7]), 0, NULL, NULL, NULL, 1);
        ok &= run(c, atoi(argv[4]), 0, NULL, NULL, NULL, 0);
    }
    if (ok)
        printf("ok   probe: libpq PQprepare of all %d statements (paramTypes NULL), BEGIN/COMMIT "
               "included; a read transaction with a text and a binary bytea parameter\n",
               prepared);
    PQfinish(c);
    return ok ? 0 : 1;
}
