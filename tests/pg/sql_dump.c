/* tests/pg/sql_dump.c: writes the SQL of fcgi/store/pg_sql.c (and of
 * statements.c, to compare) into a directory for tests/pg/sql_check.sh:
 * schema.sql, pg/<id>.sql and sqlite/<id>.sql per stmt_id (absent when
 * NULL), checks/<n>.name and checks/<n>.sql. Linked with pg_sql.c and
 * statements.c only (data, no library). */
#include "store/store_int.h"

#include <stdio.h>
#include <stdlib.h>

/* Write text into dir/sub/file (sub NULL: dir/file). */
static void put(const char *dir, const char *sub, const char *file, int n, const char *text)
{
    char path[4096];
    FILE *f;
    if (sub)
        snprintf(path, sizeof path, "%s/%s/%d.%s", dir, sub, n, file);
    else
        snprintf(path, sizeof path, "%s/%s", dir, file);
    if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f)) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR (with DIR/pg, DIR/sqlite, DIR/checks)\n", argv[0]);
        return 2;
    }
    put(argv[1], NULL, "schema.sql", 0, pg_schema_sql);
    for (int i = 0; i < S_COUNT; i++) {
        if (pg_stmt_sql[i])
            put(argv[1], "pg", "sql", i, pg_stmt_sql[i]);
        if (stmt_sql[i])
            put(argv[1], "sqlite", "sql", i, stmt_sql[i]);
    }
    for (int i = 0; pg_checks[i].name; i++) {
        put(argv[1], "checks", "name", i, pg_checks[i].name);
        put(argv[1], "checks", "sql", i, pg_checks[i].sql);
    }
    printf("%d\n", (int)S_COUNT);
    return 0;
}
