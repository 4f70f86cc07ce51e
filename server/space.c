/* Retention by space on a timer (see space.h). */
#include "server/space.h"

#include "common/error.h"
#include "common/log.h"
#include "server/job_delete.h"
#include "server/periodic.h"
#include "server/server_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define ENTRIES_PER_TXN 1000 /* small transactions: a nearly full map has little room */

struct rs_space {
    struct rs_periodic tick; /* first member: its callbacks get the owner */
    struct rs_server *srv;
    uint64_t budget_bytes;
    uint64_t full_seen; /* the storage_full counter at the last check */
    bool freeing;       /* a deletion is queued or running */
    /* the deletion in flight */
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    const char *why;
    uint64_t data_bytes, limit_bytes;
};

static bool
busy(void *arg)
{
    return ((rs_space *)arg)->freeing;
}

static void
deleted(void *arg, const char *job, int status, uint64_t entries) /* on the loop */
{
    rs_space *s = arg;

    s->freeing = false;
    if (status == 0) {
        RS_COUNT(&s->srv->counters, jobs_deleted_for_space);
        rs__server_audit(&rs__server_self, "delete-for-space", "job=%s entries=%llu result=deleted",
                         job, (unsigned long long)entries);
        rs_log(RS_LOG_WARN, "RS-RETENTION-SPACE",
               "deleted job %s (%llu entries), the one that received data least recently: %s "
               "(data %.1f MB, limit %.1f MB)",
               job, (unsigned long long)entries, s->why, (double)s->data_bytes / 1e6,
               (double)s->limit_bytes / 1e6);
    } else if (status != RS_E_CLOSED && status != RS_E_NOT_FOUND) {
        rs_log(RS_LOG_ERROR, "RS-RETENTION-SPACE", "deleting job %s to free space failed: %s", job,
               rs_strerror(status));
    }
    rs__periodic_settle(&s->tick);
}

static int
count_jobs(void *arg, const struct rs_job_info *job)
{
    (void)job;
    return ++*(int *)arg >= 2; /* two are enough to know */
}

/* The oldest job, and whether it is the only one. */
static int
pick_victim(rs_space *s, bool *found, bool *alone)
{
    rs_store_read *r;
    int rc = rs_store_read_begin(s->srv->store, &r), jobs = 0;

    *found = *alone = false;
    if (rc != 0)
        return rc;
    if ((rc = rs_store_oldest_job(r, s->job, sizeof s->job, found)) == 0 && *found) {
        rc = rs_store_jobs_scan(r, count_jobs, &jobs);
        rc = rc == 1 ? 0 : rc;
        *alone = jobs < 2;
    }
    rs_store_read_end(r);
    return rc;
}

static void
on_check(uv_timer_t *t)
{
    rs_space *s = t->data;
    struct rs_store_space sp;
    uint64_t full = RS_COUNT_GET(&s->srv->counters, storage_full);
    bool found, alone;

    if (s->freeing || rs_store_space_get(s->srv->store, &sp) != 0)
        return;
    /* without a budget, act at 90% of the map, before ingest stops at 100% */
    uint64_t limit = s->budget_bytes ? s->budget_bytes : sp.map_bytes / 10 * 9;
    bool was_full = full != s->full_seen, over = sp.data_bytes > limit;
    s->full_seen = full;
    if (!was_full && !over)
        return;
    if (pick_victim(s, &found, &alone) != 0 || !found)
        return;
    if (alone) {
        rs_log_limited(60, RS_LOG_ERROR, "RS-RETENTION-SPACE",
                       "the store is %s and holds one job (%s): nothing older to delete; raise "
                       "--map-size-gb%s",
                       was_full ? "full" : "near its limit", s->job,
                       s->budget_bytes ? " or --disk-budget-gb" : "");
        return;
    }
    s->why = was_full          ? "the store's map was full"
             : s->budget_bytes ? "the store's data exceeded its budget"
                               : "the store's data passed 90% of its map";
    s->data_bytes = sp.data_bytes;
    s->limit_bytes = limit;
    s->freeing = rs__server_delete_job(s->srv, s->job, ENTRIES_PER_TXN, deleted, s) == 0;
}

int
rs_space_start(struct rs_server *srv, uint64_t budget_bytes, unsigned check_ms, rs_space **out)
{
    rs_space *s = calloc(1, sizeof *s);

    if (!s)
        return -ENOMEM;
    s->srv = srv;
    s->budget_bytes = budget_bytes;
    rs__periodic_init(&s->tick, &srv->loop, s, busy, free);
    rs__periodic_start(&s->tick, on_check, check_ms, check_ms);
    *out = s;
    return 0;
}

void
rs_space_set_budget(rs_space *s, uint64_t budget_bytes)
{
    s->budget_bytes = budget_bytes; /* read by the next check, on this thread */
}

void
rs_space_close(rs_space *s)
{
    if (!s)
        return;
    rs__periodic_close(&s->tick);
}
