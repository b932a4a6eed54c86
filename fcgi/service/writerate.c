/* writerate: a token bucket per token, of items written. nginx limits
 * requests per address; one request may carry a hundred items (a batch, an
 * MCP batch of tool calls), so the items are counted here, where they are
 * known. Each token's bucket holds up to burst items and refills at rate
 * items a second; a write of n items is admitted when n fit (a write of
 * more than burst when the bucket is full), and takes them.
 *
 * The buckets live in a fixed table (WR_SLOTS), so memory is bounded
 * whatever tokens call: a token probes WR_PROBES slots from its hash, and
 * when none is its own or free, takes the one that has refilled most (a
 * full bucket is the same as none, so mostly nothing is forgotten). */
#include "service/writerate.h"
#include "base/config.h"
#include "base/util.h"
#include "service/ctx.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define WR_SLOTS 4096
#define WR_PROBES 8
#define WR_ID_MAX 64

struct bucket {
    char id[WR_ID_MAX + 1]; /* "" when free */
    double level;           /* items it may write now (burst at most) */
    double at;              /* when level was last brought up to date, seconds */
};

static struct bucket table[WR_SLOTS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long hash_of(const char *s)
{
    unsigned long h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

/* b's level at now. */
static double level_at(const struct bucket *b, double now, double rate, double burst)
{
    double level = b->level + (now - b->at) * rate;
    return level < burst ? level : burst;
}

/* id's bucket, brought up to date (a new one is full). */
static struct bucket *bucket_of(const char *id, double now, double rate, double burst)
{
    unsigned long h = hash_of(id);
    struct bucket *pick = NULL;
    double best = -1e300;
    for (int i = 0; i < WR_PROBES; i++) {
        struct bucket *b = &table[(h + (unsigned long)i) % WR_SLOTS];
        if (strcmp(b->id, id) == 0) {
            b->level = level_at(b, now, rate, burst);
            b->at = now;
            return b;
        }
        double level = b->id[0] ? level_at(b, now, rate, burst) : 2 * burst;
        if (level > best) {
            best = level;
            pick = b;
        }
    }
    snprintf(pick->id, sizeof pick->id, "%s", id);
    pick->level = burst;
    pick->at = now;
    return pick;
}

int write_admit(const struct svc_ctx *c, long items, struct error *err)
{
    double rate, burst, need, wait;
    struct bucket *b;
    if (!c->token_id || !c->cfg || c->cfg->write_rate <= 0 || items <= 0)
        return 0;
    if (strlen(c->token_id) > WR_ID_MAX)
        return 0; /* never a token id (they are checked at login) */
    rate = (double)c->cfg->write_rate;
    burst = (double)c->cfg->write_burst;
    need = (double)items < burst ? (double)items : burst;
    pthread_mutex_lock(&table_lock);
    b = bucket_of(c->token_id, now_seconds(), rate, burst);
    if (b->level >= need) {
        b->level -= (double)items;
        pthread_mutex_unlock(&table_lock);
        return 0;
    }
    wait = (need - b->level) / rate;
    pthread_mutex_unlock(&table_lock);
    error_set(err, E_RATE_LIMITED, "write_rate",
              "This token writes at most %ld items a second (%ld at once): %ld more now is "
              "over; retry in %ld s",
              c->cfg->write_rate, c->cfg->write_burst, items, (long)ceil(wait));
    error_int(err, "rate", c->cfg->write_rate);
    error_int(err, "items", items);
    error_int(err, "retry_after", (long)ceil(wait) > 0 ? (long)ceil(wait) : 1);
    return -1;
}
