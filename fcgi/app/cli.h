/* cli: the operator sub-commands other than serve. Each takes the arguments
 * after its name and returns the process exit status (0 ok, 1 failure,
 * 2 usage error). They work on $KNOWHUB_DATA while the server runs. */
#ifndef KNOWHUB_CLI_H
#define KNOWHUB_CLI_H

#include "base/config.h"

/* knowhub init: create the data directory, database and first admin token. */
int cli_init(const struct config *cfg, int argc, char **argv);
/* knowhub token create|list|revoke ... */
int cli_token(const struct config *cfg, int argc, char **argv);

/* knowhub import DIR|FILE.jsonl|- [--space S] [--on-conflict skip|overwrite|rename]
 * [--flatten]: exit 0 imported, 1 failed, 2 usage, 3 some document refused. */
int cli_import(const struct config *cfg, int argc, char **argv);
/* knowhub export DIR [--space S] */
int cli_export(const struct config *cfg, int argc, char **argv);

/* The interop formats of import and export (cli_interop.c, docs/agents.md). */
struct import_options;
/* 1 when import should read src as an interop format: --format given, or
 * src an AGENTS.md / CLAUDE.md file, a .tar / .tar.gz / .tgz archive, or a
 * folder with .cursor/rules, .mdc files or SKILL.md files that is not a
 * knowledge tree (rules/ or experiences/ in it). */
int cli_interop_source(const char *src, const char *format);
/* knowhub import SRC [--format F]: as cli_import (exit 0, 1, 2, 3). */
int cli_import_interop(const struct config *cfg, const char *src, const char *format,
                       const struct import_options *opt);
/* knowhub export TARGET --format agents_md|claude_md|cursor|skills: for
 * the single-file formats - (standard output), a FILE.md, or a folder that
 * gets AGENTS.md / CLAUDE.md; a folder (created if needed) else. */
int cli_export_interop(const struct config *cfg, const char *target, const char *space,
                       const char *format);

/* knowhub backup FILE [--force]: an online copy of the database, through a
 * temporary file renamed to FILE; an existing FILE only with --force. */
int cli_backup(const struct config *cfg, int argc, char **argv);
/* knowhub login-link: print the panel's one-click login link for the admin
 * token ($KNOWHUB_DATA/admin.token) at http://$KNOWHUB_HOST:$KNOWHUB_PORT/
 * (default 127.0.0.1:8080), so run.sh need not print it into logs. */
int cli_login_link(const struct config *cfg, int argc, char **argv);

/* knowhub check: integrity, index against table, statements (exit 1 on a problem). */
int cli_check(const struct config *cfg, int argc, char **argv);

/* knowhub migrate-to URL: copy $KNOWHUB_DATA/knowhub.db into the empty
 * PostgreSQL database URL, every table checked by row count and checksum
 * (exit 1, nothing committed, on a difference or a non-empty target). */
int cli_migrate_to(const struct config *cfg, int argc, char **argv);

/* knowhub version: the version, the stores and libraries this binary runs
 * with, and which store this configuration ($KNOWHUB_DATA or
 * $KNOWHUB_DATABASE_URL, its password hidden) names. */
int cli_version(const struct config *cfg, int argc, char **argv);

#endif
