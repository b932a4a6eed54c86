/* store/turn.c: the writers' turn in this process: one write transaction
 * (or lone write statement, stmt.c) at a time, a cap on how many wait long. */
#include "store/store_int.h"
#include "base/metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* One write transaction at a time in this process: a waiting writer sleeps on
 * this mutex and wakes as soon as it is free, where SQLite's busy handler would
 * retry in 1-100 ms sleeps. Initialised before any thread starts; other
 * processes (the CLI) still meet SQLite's busy timeout. */
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;

/* Writers waiting for writer_lock, and how many may wait the whole busy
 * timeout (store_set_writers_waiting): the others wait WRITER_SHORT_WAIT_MS
 * at most. A write lock is held for milliseconds, so a burst of writers
 * still gets it; when it is held long (a frozen node on PostgreSQL, another
 * process's long write), those past the cap are answered busy soon instead
 * of holding every thread, and readers find one. 0: no cap. */
#define WRITER_SHORT_WAIT_MS 1000
static atomic_int writers_waiting, writers_waiting_max;

void store_set_writers_waiting(int max)
{
    atomic_store(&writers_waiting_max, max > 0 ? max : 0);
}

int store_turn_take(struct store *st)
{
    struct timespec deadline;
    int max = atomic_load(&writers_waiting_max), rc = STORE_OK;
    long wait_ms = BUSY_TIMEOUT_MS;
    if (pthread_mutex_trylock(&writer_lock) == 0)
        return STORE_OK;
    if (atomic_fetch_add(&writers_waiting, 1) >= max && max > 0)
        wait_ms = WRITER_SHORT_WAIT_MS;
    metrics_store_event(st->metrics, METRICS_WRITER_WAIT);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += wait_ms / 1000;
    deadline.tv_nsec += (wait_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    if (pthread_mutex_timedlock(&writer_lock, &deadline) != 0) {
        metrics_store_event(st->metrics, METRICS_WRITER_TIMEOUT);
        rc = STORE_BUSY;
    }
    atomic_fetch_sub(&writers_waiting, 1);
    return rc;
}

void store_turn_give(void)
{
    pthread_mutex_unlock(&writer_lock);
}
