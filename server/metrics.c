/* GET /metrics: the server's counters, the store's size and contents, and the straggler verdicts
 * in the Prometheus text exposition format (version 0.0.4). Label cardinality is bounded: only
 * job and rank label the per-verdict gauges, at most MAX_VERDICT_SERIES of them; kernel names
 * never become labels. The store part (jobs, ranks, dropped records) is read in the thread pool. */
#include "server/server_int.h"
#include "server/heap.h"

#include "common/clock.h"
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VERDICT_SERIES 100
#define MAX_GPU_SERIES 4096 /* GPUs of active jobs exported (each their newest reading) */

/* The newest NVML reading of one active rank's GPU. */
struct gpu_row {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint32_t rank;
    char host[RS_STORE_HOST_MAX], uuid[RS_STORE_UUID_MAX];
    struct rs_gpu_sample g;
};

struct store_totals {
    uint64_t jobs, jobs_active, ranks, dropped_records, kernels, collectives;
    uint64_t frames_lost, records_lost;
};

struct metrics_work {
    uv_work_t req;
    struct rs_server *srv;
    rs_http_conn *conn;
    uint64_t active_after_ns;
    struct store_totals t;
    struct rs_store_space space;
    struct gpu_row *gpus; /* MAX_GPU_SERIES */
    size_t n_gpus, gpus_omitted;
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
    t->frames_lost += r->frames_lost;
    t->records_lost += r->records_lost;
    t->kernels += r->n_kernels;
    t->collectives += r->n_collectives;
    return 0;
}

struct jobs_scan {
    rs_store_read *r;
    struct metrics_work *w;
    const char *job; /* active: its ranks' GPUs are read */
};

static int
add_gpu(struct jobs_scan *s, const struct rs_rank_info *r)
{
    struct metrics_work *w = s->w;
    struct rs_gpu_sample g;
    int rc;

    if (!r->gpu_uuid[0] || (rc = rs_store_gpu_last(s->r, s->job, r->rank, &g)) == RS_E_NOT_FOUND)
        return 0;
    if (rc != 0)
        return rc;
    if (w->n_gpus == MAX_GPU_SERIES || (!w->gpus && !(w->gpus = calloc(MAX_GPU_SERIES,
                                                                        sizeof *w->gpus)))) {
        w->gpus_omitted++;
        return 0;
    }
    struct gpu_row *row = &w->gpus[w->n_gpus++];
    snprintf(row->job, sizeof row->job, "%s", s->job);
    row->rank = r->rank;
    memcpy(row->host, r->host, sizeof row->host);
    memcpy(row->uuid, r->gpu_uuid, sizeof row->uuid);
    row->g = g;
    return 0;
}

static int
add_rank_and_gpu(void *arg, const struct rs_rank_info *r)
{
    struct jobs_scan *s = arg;

    add_rank(&s->w->t, r);
    return s->job ? add_gpu(s, r) : 0;
}

static int
add_job(void *arg, const struct rs_job_info *job)
{
    struct jobs_scan *s = arg;
    bool active = job->received_ns >= s->w->active_after_ns;

    s->w->t.jobs++;
    s->w->t.jobs_active += active;
    s->job = active ? job->name : NULL;
    return rs_store_ranks_scan(s->r, job->name, add_rank_and_gpu, s);
}

static void
read_store(uv_work_t *req) /* thread pool */
{
    struct metrics_work *w = req->data;
    struct jobs_scan s = {NULL, w, NULL};

    if ((w->rc = rs_store_space_get(w->srv->store, &w->space)) != 0 ||
        (w->rc = rs_store_read_begin(w->srv->store, &s.r)) != 0)
        return;
    w->rc = rs_store_jobs_scan(s.r, add_job, &s);
    rs_store_read_end(s.r);
}

/* The verdicts' two families, gathered in one pass: the format wants each family's samples
 * together after its HELP and TYPE, not one verdict's samples of both families side by side. */
struct verdict_text {
    struct text slowdown, detected, cause;
};

static void
verdict_series(void *arg, const struct rs_evaluator_verdict *e)
{
    struct verdict_text *v = arg;

    /* job names are [A-Za-z0-9._:@+=-]: nothing to escape in a label value */
    put(&v->slowdown, "rankscope_straggler_slowdown{job=\"%s\",rank=\"%u\"} %.6g\n", e->job,
        e->rank, e->slowdown);
    put(&v->detected, "rankscope_straggler_detected_seconds{job=\"%s\",rank=\"%u\"} %.3f\n",
        e->job, e->rank, (double)e->detected_ns / 1e9);
    /* the cause the log and REST give (a capture's, capture_evidence.h, where one ran) */
    put(&v->cause, "rankscope_straggler_cause{job=\"%s\",rank=\"%u\",cause=\"%s\",source=\"%s\"} 1\n",
        e->job, e->rank, rs_straggler_cause_name(e->cause), e->capture_id ? "capture" : "rule");
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

/* A label value from the wire (host, GPU UUID) as the exposition format wants it. */
static void
put_label(struct text *t, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            put(t, "\\%c", *v);
        else if (*v == '\n')
            put(t, "\\n");
        else
            put(t, "%c", *v);
    }
}

static void
gpu_labels(struct text *t, const struct gpu_row *row)
{
    put(t, "{job=\"%s\",rank=\"%u\",host=\"", row->job, row->rank);
    put_label(t, row->host);
    put(t, "\",gpu_uuid=\"");
    put_label(t, row->uuid);
    put(t, "\"");
}

/* The per-GPU gauges: each active rank's GPU, its newest reading (docs/telemetry.md). */
static void
write_gpu_metrics(const struct metrics_work *w, struct text *t)
{
    static const struct {
        const char *name, *help;
        uint32_t need;
    } fam[] = {
        {"gpu_sm_clock_hertz", "SM clock of the rank's GPU.", RS_GPU_SM_CLOCK},
        {"gpu_sm_clock_max_hertz", "Highest SM clock of the rank's GPU.", RS_GPU_SM_CLOCK_MAX},
        {"gpu_power_watts", "Power drawn by the rank's GPU.", RS_GPU_POWER},
        {"gpu_power_limit_watts", "Enforced power limit of the rank's GPU.", RS_GPU_POWER_LIMIT},
        {"gpu_temperature_celsius", "Temperature of the rank's GPU.", RS_GPU_TEMPERATURE},
        {"gpu_utilization_ratio", "NVML utilisation of the rank's GPU (busy, not efficient).",
         RS_GPU_UTILIZATION},
        {"gpu_memory_used_bytes", "Memory used on the rank's GPU.", RS_GPU_MEMORY},
        {"gpu_ecc_uncorrected_errors", "Volatile uncorrected ECC errors since the driver loaded.",
         RS_GPU_ECC},
        {"gpu_xid_events", "XID events in the newest reading's interval.", RS_GPU_XID},
        {"gpu_pcie_link_width", "PCIe link width (lanes) now.", RS_GPU_PCIE_LINK},
        {"gpu_pcie_link_width_max", "PCIe link width (lanes) at most.", RS_GPU_PCIE_LINK},
        {"gpu_nvlink_up", "NVLinks active.", RS_GPU_NVLINK},
    };
    for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++) {
        put(t, "# HELP rankscope_%s %s\n# TYPE rankscope_%s gauge\n", fam[f].name, fam[f].help,
            fam[f].name);
        for (size_t i = 0; i < w->n_gpus; i++) {
            const struct rs_gpu_sample *g = &w->gpus[i].g;
            if (!(g->present & fam[f].need))
                continue;
            double v[] = {g->sm_clock_mhz * 1e6,
                          g->sm_clock_max_mhz * 1e6,
                          g->power_mw / 1e3,
                          g->power_limit_mw / 1e3,
                          g->temperature_c,
                          g->util_gpu_pct / 100.0,
                          (double)g->mem_used_bytes,
                          (double)g->ecc_uncorrected,
                          g->xid_count,
                          g->pcie_width,
                          g->pcie_width_max,
                          g->nvlink_up};
            put(t, "rankscope_%s", fam[f].name);
            gpu_labels(t, &w->gpus[i]);
            put(t, "} %.17g\n", v[f]);
        }
    }
    static const struct {
        const char *reason;
        uint64_t bit;
    } reasons[] = {{"power_cap", RS_GPU_REASON_SW_POWER_CAP},
                   {"hw_slowdown", RS_GPU_REASON_HW_SLOWDOWN},
                   {"sw_thermal", RS_GPU_REASON_SW_THERMAL},
                   {"hw_thermal", RS_GPU_REASON_HW_THERMAL},
                   {"power_brake", RS_GPU_REASON_HW_POWER_BRAKE},
                   {"sync_boost", RS_GPU_REASON_SYNC_BOOST}};
    put(t, "# HELP rankscope_gpu_throttled 1 when the reason held the GPU's clocks down at its "
           "newest reading.\n# TYPE rankscope_gpu_throttled gauge\n");
    for (size_t i = 0; i < w->n_gpus; i++)
        for (size_t k = 0; k < sizeof reasons / sizeof reasons[0]; k++) {
            if (!(w->gpus[i].g.present & RS_GPU_CLOCK_REASONS))
                continue;
            put(t, "rankscope_gpu_throttled");
            gpu_labels(t, &w->gpus[i]);
            put(t, ",reason=\"%s\"} %d\n", reasons[k].reason,
                (w->gpus[i].g.clock_reasons & reasons[k].bit) != 0);
        }
    metric(t, "gpu_series_omitted", "gauge", "Active GPUs beyond the series limit, not exported.",
           (double)w->gpus_omitted);
    metric(t, "gpu_samples_unattributed_total", "counter",
           "GPU readings dropped: no rank had reported their GPU.",
           (double)rs_store_gpu_unattributed());
}

static void
write_metrics(struct rs_server *srv, const struct metrics_work *w, struct text *t)
{
    struct rs_evaluator_stats ev;

    metric(t, "uptime_seconds", "gauge", "Seconds since the server started.",
           (double)(rs_clock_mono_ns() - srv->start_ns) / 1e9);
    struct rs_heap_stats heap;
    rs__server_heap_stats(&heap);
    metric(t, "heap_in_use_bytes", "gauge", "Bytes the server's malloc has handed out.",
           (double)heap.in_use);
    metric(t, "heap_free_held_bytes", "gauge",
           "Bytes freed but kept by malloc's arenas, resident or not.",
           (double)heap.free_held);
    metric(t, "heap_arena_bytes", "gauge", "Bytes malloc's arenas took from the system.",
           (double)heap.arenas);
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
        metric(t, "collector_frames_lost", "gauge",
               "Frames collectors sent that never reached the store (gaps in their numbers, "
               "e.g. an agent killed with frames queued), summed over stored ranks.",
               (double)w->t.frames_lost);
        metric(t, "collector_records_lost", "gauge",
               "Records those lost frames carried, summed over stored ranks.",
               (double)w->t.records_lost);
        write_gpu_metrics(w, t);
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
    struct rs_heatmap_warm_stats wm;
    rs_heatmap_warm_get_stats(srv->heatmap_warm, &wm);
    metric(t, "heatmap_warmed_total", "counter",
           "Jobs whose whole-job heatmap was read into the cache in the background.",
           (double)wm.warmed);
    metric(t, "heatmap_warm_failed_total", "counter",
           "Background heatmap reads that failed or found the query pool full.", (double)wm.failed);
    metric(t, "heatmap_warm_queued", "gauge", "Jobs waiting for (or in) a background heatmap read.",
           (double)wm.queued);
    struct rs_captures_stats cs;
    rs_captures_get_stats(srv->captures, &cs);
    put(t, "# HELP rankscope_captures_total Rank captures by what became of them (requested: all; "
           "the others as they happen).\n# TYPE rankscope_captures_total counter\n");
    const struct {
        const char *state;
        uint64_t n;
    } cap[] = {{"requested", cs.requested}, {"delivered", cs.delivered}, {"started", cs.started},
               {"done", cs.done},           {"failed", cs.failed},       {"expired", cs.expired}};
    for (size_t i = 0; i < sizeof cap / sizeof cap[0]; i++)
        put(t, "rankscope_captures_total{state=\"%s\"} %llu\n", cap[i].state,
            (unsigned long long)cap[i].n);
    put(t, "# HELP rankscope_captures_refused_total Capture requests refused: the job's rate, or "
           "a rank with an open capture.\n# TYPE rankscope_captures_refused_total counter\n"
           "rankscope_captures_refused_total{reason=\"rate\"} %llu\n"
           "rankscope_captures_refused_total{reason=\"busy\"} %llu\n",
           (unsigned long long)cs.refused_rate, (unsigned long long)cs.refused_busy);
    metric(t, "capture_reports_ignored_total", "counter",
           "Capture reports or marks from a rank the capture is not for (or of unknown ids).",
           (double)cs.reports_ignored);
    metric(t, "capture_counts_refused_total", "counter",
           "Batches whose agent-reported capture count claims more than a whole capture could trace.",
           (double)cs.counts_refused);
    if (srv->answers) { /* the REST answer cache (answer_cache.h): loop-thread state */
        struct rs_answer_cache_stats as;
        rs_answer_cache_get_stats(srv->answers, &as);
        put(t, "# HELP rankscope_answer_cache_lookups_total REST answers looked up in the answer "
               "cache, by outcome (hit: kept answer served; joined: waited for the same scan in "
               "flight; miss: scanned).\n# TYPE rankscope_answer_cache_lookups_total counter\n"
               "rankscope_answer_cache_lookups_total{outcome=\"hit\"} %llu\n"
               "rankscope_answer_cache_lookups_total{outcome=\"joined\"} %llu\n"
               "rankscope_answer_cache_lookups_total{outcome=\"miss\"} %llu\n",
            (unsigned long long)as.hits, (unsigned long long)as.joined,
            (unsigned long long)as.misses);
        metric(t, "answer_cache_bytes", "gauge", "Bytes of REST answers kept.", (double)as.bytes);
        metric(t, "answer_cache_evicted_total", "counter",
               "Kept REST answers dropped to stay within answer-cache-mb.", (double)as.evicted);
        metric(t, "answer_cache_too_big_total", "counter",
               "REST answers over a quarter of answer-cache-mb: not kept.", (double)as.too_big);
    }
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
    family(t, "straggler_cause",
           "An active verdict's cause (1), as logged; source: capture when a capture's kernels "
           "gave it, else rule.",
           &v.cause);
    free(v.slowdown.s);
    free(v.detected.s);
    free(v.cause.s);
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
    free(w->gpus);
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
