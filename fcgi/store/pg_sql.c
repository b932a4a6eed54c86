/* store/pg_sql.c: the PostgreSQL text of every statement (placeholder). */
#include "store/store_int.h"

const char *const pg_stmt_sql[S_COUNT] = {0};
const char pg_schema_sql[] = "";
const struct pg_check pg_checks[] = {{NULL, NULL}};
