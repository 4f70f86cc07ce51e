/* GET /metrics: the server's counters, the store's size and contents, and the straggler verdicts
 * in the Prometheus text exposition format (version 0.0.4). Label cardinality is bounded: only
 * job and rank label the per-verdict gauges, at most MAX_VERDICT_SERIES of them; kernel names
 * never become labels. The store part (jobs, ranks, dropped records) is read in the thread pool. */
#include "server/server_int.h"

#include "common/clock.h"
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VERDICT_SERIES 100

struct store_totals {
    uint64_t jobs, jobs_active, ranks, dropped_records, kernels, collectives;
};

struct metrics_work {
    uv_work_t req;
    struct rs_server *srv;
    rs_http_conn *conn;
    uint64_t active_after_ns;
    struct store_totals t;
    struct rs_store_space space;
    int rc;
};

struct text {
    char *s;
    size_t len, cap;
    bool failed;
};

static void
put(struct text *t, const char *fmt, ...)
{
    va_list ap;

    for (int attempt = 0; attempt < 2 && !t->failed; attempt++) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap ? t->cap : 8192) * 2 + (size_t)n;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

static void
metric(struct text *t, const char *name, const char *type, const char *help, double value)
{
    put(t, "# HELP rankscope_%s %s\n# TYPE rankscope_%s %s\nrankscope_%s %.17g\n", name, help, name,
        type, name, value);
}

static int
add_rank(void *arg, const struct rs_rank_info *r)
{
    struct store_totals *t = arg;

    t->ranks++;
    t->dropped_records += r->dropped_records;
    t->kernels += r->n_kernels;
    t->collectives += r->n_collectives;
    return 0;
}

struct jobs_scan {
    rs_store_read *r;
    struct metrics_work *w;
};

static int
add_job(void *arg, const struct rs_job_info *job)
{
    struct jobs_scan *s = arg;

    s->w->t.jobs++;
    s->w->t.jobs_active += job->received_ns >= s->w->active_after_ns;
    return rs_store_ranks_scan(s->r, job->name, add_rank, &s->w->t);
}

static void
read_store(uv_work_t *req) /* thread pool */
{
    struct metrics_work *w = req->data;
    struct jobs_scan s = {NULL, w};

    if ((w->rc = rs_store_space_get(w->srv->store, &w->space)) != 0 ||
        (w->rc = rs_store_read_begin(w->srv->store, &s.r)) != 0)
        return;
    w->rc = rs_store_jobs_scan(s.r, add_job, &s);
    rs_store_read_end(s.r);
}

/* The verdicts' two families, gathered in one pass: the format wants each family's samples
 * together after its HELP and TYPE, not one verdict's samples of both families side by side. */
struct verdict_text {
    struct text slowdown, detected;
};

static void
verdict_series(void *arg, const char *job, uint32_t rank, double slowdown, uint64_t detected_ns)
{
    struct verdict_text *v = arg;

    /* job names are [A-Za-z0-9._:@+=-]: nothing to escape in a label value */
    put(&v->slowdown, "rankscope_straggler_slowdown{job=\"%s\",rank=\"%u\"} %.6g\n", job, rank,
        slowdown);
    put(&v->detected, "rankscope_straggler_detected_seconds{job=\"%s\",rank=\"%u\"} %.3f\n", job,
        rank, (double)detected_ns / 1e9);
}

/* A family with labelled series: HELP, TYPE, then the series (written by the caller). */
static void
family(struct text *t, const char *name, const char *help, const struct text *series)
{
    put(t, "# HELP rankscope_%s %s\n# TYPE rankscope_%s gauge\n", name, help, name);
    if (series->failed)
        t->failed = true;
    else if (series->len)
        put(t, "%.*s", (int)series->len, series->s);
}

static void
write_metrics(struct rs_server *srv, const struct metrics_work *w, struct text *t)
{
    struct rs_evaluator_stats ev;

    metric(t, "uptime_seconds", "gauge", "Seconds since the server started.",
           (double)(rs_clock_mono_ns() - srv->start_ns) / 1e9);
    for (size_t i = 0; i < rs_counter_info_count; i++) {
        const struct rs_counter_info *c = &rs_counter_infos[i];
        metric(t, c->metric, c->gauge ? "gauge" : "counter", c->help,
               (double)rs_counter_value(&srv->counters, c) / c->divisor);
    }
    if (w->rc == 0) {
        metric(t, "store_data_bytes", "gauge", "Bytes of the store in use.",
               (double)w->space.data_bytes);
        metric(t, "store_map_bytes", "gauge", "Largest size of the store (--map-size-gb).",
               (double)w->space.map_bytes);
        metric(t, "jobs", "gauge", "Jobs in the store.", (double)w->t.jobs);
        metric(t, "jobs_active", "gauge", "Jobs that received data within --active-s.",
               (double)w->t.jobs_active);
        metric(t, "ranks", "gauge", "Ranks of all jobs in the store.", (double)w->t.ranks);
        metric(t, "kernels_stored", "gauge", "Kernel records in the store (NCCL excluded).",
               (double)w->t.kernels);
        metric(t, "collectives_stored", "gauge", "NCCL kernel records in the store.",
               (double)w->t.collectives);
        metric(t, "collector_dropped_records", "gauge",
               "Records collectors dropped (agent absent or slow), summed over stored ranks.",
               (double)w->t.dropped_records);
    }
    rs_evaluator_get_stats(srv->evaluator, &ev);
    metric(t, "evaluations_total", "counter", "Streaming straggler evaluations run.",
           (double)ev.evaluations);
    metric(t, "evaluation_errors_total", "counter", "Straggler evaluations that failed.",
           (double)ev.errors);
    metric(t, "evaluation_last_seconds", "gauge", "Duration of the newest straggler evaluation.",
           (double)ev.last_duration_ms / 1e3);
    metric(t, "evaluation_catchup_steps_total", "counter",
           "Rank-steps straggler evaluations loaded to summarize steps their windows left behind.",
           (double)ev.catchup_steps);
    metric(t, "stragglers_raised_total", "counter", "Straggler verdicts raised.",
           (double)ev.raised);
    metric(t, "stragglers_cleared_total", "counter", "Straggler verdicts cleared.",
           (double)ev.cleared);
    metric(t, "stragglers_active", "gauge", "Active straggler verdicts (all jobs).",
           (double)ev.active_stragglers);
    struct rs_hang_watch_stats hw;
    rs_hang_watch_get_stats(srv->hang_watch, &hw);
    metric(t, "hangs_active", "gauge",
           "Hang verdicts active (NCCL operations in flight past the collectors' limit).",
           (double)hw.active);
    metric(t, "hangs_raised_total", "counter", "Hang verdicts raised.", (double)hw.raised);
    metric(t, "hangs_cleared_total", "counter", "Hang verdicts cleared.", (double)hw.cleared);
    struct verdict_text v = {0};
    size_t active =
        rs_evaluator_foreach_active(srv->evaluator, MAX_VERDICT_SERIES, verdict_series, &v);
    char help[96];
    snprintf(help, sizeof help,
             "Step-time ratio of an active straggler to its peers (at most %d series).",
             MAX_VERDICT_SERIES);
    family(t, "straggler_slowdown", help, &v.slowdown);
    family(t, "straggler_detected_seconds", "When the verdict was raised (Unix time).",
           &v.detected);
    free(v.slowdown.s);
    free(v.detected.s);
    metric(t, "straggler_series_omitted", "gauge",
           "Active verdicts beyond the series limit, not exported.",
           active > MAX_VERDICT_SERIES ? (double)(active - MAX_VERDICT_SERIES) : 0);
}

static void
metrics_done(uv_work_t *req, int status) /* loop */
{
    struct metrics_work *w = req->data;
    struct text t = {0};

    if (status != 0)
        w->rc = status;
    write_metrics(w->srv, w, &t);
    if (t.failed)
        rs_http_respond_error(w->conn, 500, "out of memory");
    else
        rs_http_respond(w->conn, 200, "text/plain; version=0.0.4; charset=utf-8", t.s, t.len);
    free(t.s);
    free(w);
}

void
rs__server_metrics(struct rs_server *srv, rs_http_conn *c)
{
    struct metrics_work *w = calloc(1, sizeof *w);
    uint64_t now = rs_clock_realtime_ns(), active = (uint64_t)srv->cfg->active_s * 1000000000ull;

    if (!w) {
        rs_http_respond_error(c, 500, "out of memory");
        return;
    }
    w->srv = srv;
    w->conn = c;
    w->active_after_ns = now > active ? now - active : 0;
    w->req.data = w;
    if (uv_queue_work(&srv->loop, &w->req, read_store, metrics_done) != 0) {
        free(w);
        rs_http_respond_error(c, 500, "cannot schedule the metrics read");
    }
}
