/* live: the live streams (GET /mcp, GET /api/events), all held by one
 * thread: a worker writes a stream's head and hands its FastCGI connection
 * over (live_adopt), and goes back to answering requests. The thread
 * follows the knowledge's changes (store_changes_read: SQLite's rows,
 * PostgreSQL's notifications, so a change made on any node reaches every
 * node's streams) and writes each stream what its reader asked for: the
 * panel every change of its space, an MCP session the resources it
 * subscribed to and list changes. Heartbeats keep idle streams open through
 * nginx; a client gone, a token revoked or a stop ends them. */
#ifndef KNOWHUB_LIVE_H
#define KNOWHUB_LIVE_H

#include <fcgiapp.h>

struct config;
struct live;
struct metrics;

/* The stream thread with its own store connection and metrics slot (it
 * says the streams it holds: knowhub_streams_open); NULL after a message on
 * stderr (streams are then refused with 503) or when cfg->streams_max is 0. */
struct live *live_start(const struct config *cfg, struct metrics *metrics);
/* End every stream (with its FastCGI end: the client sees a whole answer)
 * and the thread. */
void live_stop(struct live *lv);

/* Room for one more stream of token_id: 0, or -1 when the process holds
 * streams_max, -2 when the token holds streams_per_token. */
int live_reserve(struct live *lv, const char *token_id);
void live_unreserve(struct live *lv, const char *token_id);
/* Hand over fr (its head written and flushed, reserved): the thread owns
 * it from now on and frees it. kind is RESPONSE_LIVE_*; role the caller's
 * (enum role: the review queue's events go to editors and admins only);
 * session "" for none. */
void live_adopt(struct live *lv, FCGX_Request *fr, int kind, int role, const char *space,
                const char *token_id, const char *session);
/* Streams open now (for tests and /api/health). */
long live_open(struct live *lv);

#endif
