/* store/fts_compact.c: SQLite's full-text indexes kept in few segments
 * (docs/performance.md "Full-text segments").
 *
 * FTS5 writes a segment per write transaction and merges segments level by
 * level, so an index written one entry at a time holds 10 to 20 of them,
 * and every term of every search pass is looked up in each: a pass on 13
 * segments took 3.4 times as long as on one. Once no other connection has
 * written for QUIET_MS (a burst of writes is left to FTS5's own merging),
 * the job thread merges each index into one segment, a step at a time
 * (at most STEP_PAGES pages per write transaction, so a writer waits for
 * one step at most), and spends at most 1/DUTY of its time on it: after a
 * merge that took D, the next starts no sooner than max(MIN_GAP, DUTY * D)
 * later. A large index written to all day is merged about once a minute;
 * a small one within seconds of its last write. PostgreSQL keeps no
 * segments: nothing to do. */
#include "store/store_int.h"
#include "base/util.h"

#include <stdio.h>

#define STEP_PAGES 256 /* pages a step writes, at most */
#define DUTY 20        /* merging takes at most 1/DUTY of the time */
#define MIN_GAP_MS 2000
#define QUIET_MS 1000

static const char *const indexes[] = FTS_INDEXES;

/* An SQLite varint (FTS5 uses SQLite's): the value, or -1 when torn. */
static long long varint(const unsigned char **p, const unsigned char *end)
{
    unsigned long long v = 0;
    for (int i = 0; i < 9; i++) {
        if (*p >= end)
            return -1;
        unsigned char b = *(*p)++;
        if (i == 8)
            return (long long)((v << 8) | b);
        v = (v << 7) | (b & 0x7F);
        if (!(b & 0x80))
            return (long long)v;
    }
    return -1;
}

long store_fts_segments(struct store *st, const char *index)
{
    /* The structure record (FTS5's row 10 of <index>_data): a 4-byte cookie,
     * then the number of levels and the number of segments. */
    char sql[128];
    sqlite3_stmt *s;
    long n = -1;
    if (st->pg)
        return 0;
    snprintf(sql, sizeof sql, "SELECT block FROM %s_data WHERE id = 10", index);
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(s) == SQLITE_ROW) {
        const unsigned char *p = sqlite3_column_blob(s, 0), *end;
        int len = sqlite3_column_bytes(s, 0);
        if (p && len > 4) {
            end = p + len;
            p += 4;
            if (varint(&p, end) >= 0)
                n = (long)varint(&p, end);
        }
    } else {
        n = 0; /* never written */
    }
    sqlite3_finalize(s);
    return n;
}

/* One merge step of index in its own write transaction. */
static int merge_step(struct store *st, const char *index)
{
    char sql[256];
    int rc;
    /* usermerge 2: a negative merge merges down to one segment, not four */
    snprintf(sql, sizeof sql,
             "INSERT INTO %s(%s, rank) VALUES('usermerge', 2);"
             "INSERT INTO %s(%s, rank) VALUES('merge', -%d)",
             index, index, index, index, STEP_PAGES);
    if ((rc = store_begin(st)))
        return rc;
    return store_tx_end(st, store_db_exec(st, sql));
}

int store_fts_compact(struct store *st)
{
    long now = monotonic_ms(), took;
    uint64_t version;
    int worked = 0;
    if (st->pg || now < st->compact_next_ms)
        return 0;
    if (store_data_version(st, &version) != STORE_OK)
        return 0; /* unknown: no merge now */
    if (version != st->compact_version) {
        /* written since the last look: wait for a quiet moment */
        st->compact_version = version;
        st->compact_next_ms = now + QUIET_MS;
        return 0;
    }
    for (size_t i = 0; i < sizeof indexes / sizeof *indexes; i++) {
        long n = store_fts_segments(st, indexes[i]);
        if (n > 1) {
            if (merge_step(st, indexes[i]))
                n = -1; /* try again after the gap */
            else
                worked = 1;
            break; /* one step per call: the caller sees to requests in between */
        }
    }
    took = monotonic_ms() - now;
    st->compact_spent_ms += took;
    if (!worked) {
        /* merged (or failed): wait DUTY times what the merge took */
        long gap = DUTY * st->compact_spent_ms;
        st->compact_next_ms = now + took + (gap > MIN_GAP_MS ? gap : MIN_GAP_MS);
        st->compact_spent_ms = 0;
    }
    return worked;
}
