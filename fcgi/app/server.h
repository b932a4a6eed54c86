/* server: operator-side setup shared by the sub-commands: the data directory,
 * the database path, first-start initialisation (space "default" and the
 * admin token file), the proxy key shared with nginx. */
#ifndef KNOWHUB_SERVER_H
#define KNOWHUB_SERVER_H

#include "base/buf.h"
#include "base/config.h"

struct store;

/* Create data_dir (and data_dir/run) if missing; -1 with a message on stderr. */
int server_prepare_dirs(const struct config *cfg);
/* The database path, data_dir/knowhub.db, into out. */
void server_db_path(const struct config *cfg, struct buf *out);
/* Which store this configuration runs on, fit for a log: "sqlite PATH", or
 * "postgresql KEY=VALUE..." with the password written as ***. */
void server_store_said(const struct config *cfg, struct buf *out);
/* The FastCGI socket path into out: KNOWHUB_SOCKET when set (a service
 * manager's runtime directory nginx can reach), else data_dir/run/knowhub.sock. */
void server_socket_path(const struct config *cfg, struct buf *out);
/* Open the database (server_db_path) with the upgrade rules of
 * store_open_upgrade, backups going to data_dir/backups, and say on stderr
 * what happened: a migration (old -> new schema version, the backup), or
 * why the database was refused (newer than this knowhub, backup failed).
 * NULL on failure. */
struct store *server_open_store(const struct config *cfg);
/* On first start (no token ever created) create space "default" and an admin
 * token written to data_dir/admin.token (mode 0600). 0, or -1 on error. */
int server_first_start(const struct config *cfg, struct store *st);
/* Create an admin token of space "default" labelled label and write it to
 * data_dir/admin.token (mode 0600, replacing the file whole), saying so on
 * stderr. 0, or -1 with a message. */
int server_admin_token(const struct config *cfg, struct store *st, const char *label);

/* Hex characters of the proxy key (32 random bytes). */
#define SERVER_PROXY_KEY_HEX 64

/* The proxy key: nginx sends it as the FastCGI parameter KNOWHUB_PROXY_KEY,
 * so knowhub tells its own nginx from any other process that can reach the
 * socket. Read from data_dir/proxy.key, or made there (libsodium random,
 * mode 0600) when the file is absent; then written, for nginx's master to
 * include at its next (re)load, as data_dir/proxy_key.conf (mode 0600):
 * fastcgi_param KNOWHUB_PROXY_KEY "<key>";. Both files are replaced by a
 * rename, never half-written. 0 with the key in out, or -1 after a message
 * on stderr (the key is never printed). */
int server_proxy_key(const struct config *cfg, char out[static SERVER_PROXY_KEY_HEX + 1]);

#endif
