/* Retention, rollups and reader-slot checks on a timer (see maintenance.h): one writer task per
 * tick, retention first, then the rollup. */
#include "server/maintenance.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "server/periodic.h"
#include "server/server_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#define ENTRIES_PER_TXN 10000

struct rs_maintenance {
    struct rs_periodic tick; /* first member: its callbacks get the owner */
    struct rs_server *srv;
    struct rs_maintenance_options o;
    bool sweeping; /* a sweep task is queued or running */
    /* the sweep in flight (written by the writer thread, read on the loop after it posts) */
    uint64_t cutoff_ns, deleted, jobs;
    bool expired; /* retention is done: the rollup's turn */
    struct rs_store_rollup rollup;
    int status;
    struct rs_maintenance_options next; /* rs_maintenance_set_options: applied at the next tick */
    bool next_due;
};

static bool
busy(void *arg)
{
    return ((rs_maintenance *)arg)->sweeping;
}

static int
sweep_step(rs_store_write *txn, void *arg, bool *done)
{
    rs_maintenance *m = arg;
    int rc;

    *done = false;
    if (!m->expired) {
        if (m->o.retention_s &&
            (rc = rs_store_expire_jobs(txn, m->cutoff_ns, ENTRIES_PER_TXN, &m->deleted, &m->jobs,
                                       &m->expired)) != 0)
            return rc;
        m->expired |= m->o.retention_s == 0;
        *done = m->expired && m->o.raw_retention_s == 0;
        return 0;
    }
    return rs_store_rollup_step(txn, &m->rollup, ENTRIES_PER_TXN, done);
}

static void
sweep_finished(void *arg) /* on the loop */
{
    rs_maintenance *m = arg;

    const struct rs_store_rollup *ru = &m->rollup;

    m->sweeping = false;
    RS_COUNT_ADD(&m->srv->counters, jobs_expired, m->jobs);
    RS_COUNT_ADD(&m->srv->counters, records_rolled_up, ru->records);
    RS_COUNT_ADD(&m->srv->counters, agent_windows_coarsened, ru->agent_windows);
    if (m->status != 0 && m->status != RS_E_CLOSED)
        rs_log(RS_LOG_ERROR, "RS-MAINTENANCE",
               "maintenance stopped after %llu expired jobs and %llu rolled-up records: %s",
               (unsigned long long)m->jobs, (unsigned long long)ru->records,
               rs_strerror(m->status));
    if (m->jobs)
        rs__server_audit(&rs__server_self, "expire", "jobs=%llu entries=%llu retention_s=%llu",
                         (unsigned long long)m->jobs, (unsigned long long)m->deleted,
                         (unsigned long long)m->o.retention_s);
    if (m->jobs)
        rs_log(RS_LOG_INFO, "RS-RETENTION",
               "deleted %llu jobs with no data for %llu s (%llu entries)",
               (unsigned long long)m->jobs, (unsigned long long)m->o.retention_s,
               (unsigned long long)m->deleted);
    if (ru->records || ru->agent_windows)
        rs_log(RS_LOG_INFO, "RS-ROLLUP",
               "rolled %llu kernel and memcpy records (%llu chunks) and %llu agent windows older "
               "than %llu s into %llu windows of %llu s",
               (unsigned long long)ru->records, (unsigned long long)ru->chunks,
               (unsigned long long)ru->agent_windows, (unsigned long long)m->o.raw_retention_s,
               (unsigned long long)ru->windows, (unsigned long long)m->o.rollup_window_s);
    if (ru->gpu_readings)
        rs_log(RS_LOG_INFO, "RS-ROLLUP-GPU",
               "rolled %llu NVML readings older than %llu s into GPU windows of %llu s",
               (unsigned long long)ru->gpu_readings, (unsigned long long)m->o.raw_retention_s,
               (unsigned long long)m->o.rollup_window_s);
    rs__periodic_settle(&m->tick);
}

static void
sweep_done(void *arg, int status) /* on the writer thread */
{
    rs_maintenance *m = arg;

    m->status = status;
    if (rs_post_call(m->srv->post, sweep_finished, m) != 0)
        m->sweeping = false; /* out of memory: the next tick tries again */
}

static void
on_tick(uv_timer_t *t)
{
    rs_maintenance *m = t->data;
    int cleared = 0;

    if (rs_store_reader_check(m->srv->store, &cleared) == 0 && cleared > 0) {
        RS_COUNT_ADD(&m->srv->counters, reader_slots_freed, (uint64_t)cleared);
        rs_log(RS_LOG_WARN, "RS-STORE-READERS", "freed %d reader slots of dead processes", cleared);
    }
    if (m->sweeping) /* its steps read m->o on the writer thread: new settings wait for it */
        return;
    if (m->next_due) {
        m->o.retention_s = m->next.retention_s;
        m->o.raw_retention_s = m->next.raw_retention_s;
        m->o.rollup_window_s = m->next.rollup_window_s;
        m->next_due = false;
    }
    if (m->o.retention_s == 0 && m->o.raw_retention_s == 0)
        return;
    uint64_t now = rs_clock_realtime_ns();
    m->cutoff_ns = now - m->o.retention_s * 1000000000ull;
    m->deleted = m->jobs = 0;
    m->expired = false;
    m->rollup = (struct rs_store_rollup){.now_ns = now,
                                         .raw_ns = m->o.raw_retention_s * 1000000000ull,
                                         .window_ns = m->o.rollup_window_s * 1000000000ull};
    m->status = 0;
    m->sweeping = true;
    if (rs_writer_submit_task(m->srv->writer, sweep_step, sweep_done, m) != 0)
        m->sweeping = false;
}

int
rs_maintenance_start(struct rs_server *srv, const struct rs_maintenance_options *o,
                     rs_maintenance **out)
{
    rs_maintenance *m;

    if (o->raw_retention_s && o->rollup_window_s == 0)
        return -EINVAL;
    if (!(m = calloc(1, sizeof *m)))
        return -ENOMEM;
    m->srv = srv;
    m->o = *o;
    rs__periodic_init(&m->tick, &srv->loop, m, busy, free);
    rs__periodic_start(&m->tick, on_tick, 0, (uint64_t)o->period_s * 1000);
    *out = m;
    return 0;
}

int
rs_maintenance_set_options(rs_maintenance *m, const struct rs_maintenance_options *o)
{
    if (o->raw_retention_s && o->rollup_window_s == 0)
        return -EINVAL;
    m->next = *o;
    m->next_due = true;
    return 0;
}

void
rs_maintenance_close(rs_maintenance *m)
{
    if (!m)
        return;
    rs__periodic_close(&m->tick);
}
