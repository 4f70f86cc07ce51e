/* Warming the whole-job heatmap cache in the background (heatmap_warm.h): a queue of job names on
 * the loop thread, one read at a time in the query pool (the same call a GET .../heatmap of the
 * whole job makes, its answer dropped), so that the warm-up never takes more than one query
 * thread from the REST clients. */
#include "server/heatmap_warm.h"

#include "common/array.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "query/heatmap.h"
#include "server/server_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The dashboard's overview asks for compute time in 200 columns (web/src/views/overview.js);
 * the cache keeps base bins per (job, metric), whatever the columns. */
#define WARM_METRIC RS_HEATMAP_COMPUTE
#define WARM_COLUMNS 200
#define WARM_MAX_QUEUED 256
/* What a job's cache entry takes per rank (query/heatmap.h: 12 bytes a rank and bin, at most
 * 1,024 bins): jobs are queued at start only while their entries fit the cache together. */
#define WARM_BYTES_PER_RANK (12u * 1024u)

struct warm_read {
    struct rs_work req; /* in srv->queries */
    rs_heatmap_warm *w;
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    int rc;
    uint64_t took_ns;
};

struct rs_heatmap_warm {
    struct rs_server *srv;
    char (*queue)[RS_WIRE_MAX_JOB_LEN + 1]; /* ring of job names */
    size_t head, n;
    struct warm_read *running; /* the read under way (NULL: none) */
    bool closed;               /* freed while a read ran: its done frees w */
    uint64_t warmed, failed;
    uv_timer_t tick;       /* live jobs (on_tick); closed by rs_heatmap_warm_stop */
    bool ticking;          /* tick initialised and not closed yet */
    uint64_t last_tick_ns; /* jobs with data since then are queued at the next tick */
};

static void
warm_work(struct rs_work *req) /* query thread */
{
    struct warm_read *q = (struct warm_read *)req;
    const struct rs_heatmap_window all = {0, UINT64_MAX, 0};
    rs_store_read *r;
    json_t *answer = NULL;
    uint64_t t0 = rs_clock_mono_ns();

    if ((q->rc = rs_store_read_begin(q->w->srv->store, &r)) != 0)
        return;
    q->rc = rs_query_heatmap(r, q->job, &all, WARM_METRIC, WARM_COLUMNS, q->w->srv->heatmaps,
                             &answer);
    rs_store_read_end(r);
    json_decref(answer);
    q->took_ns = rs_clock_mono_ns() - t0;
}

static void pump(rs_heatmap_warm *w);

static void
warm_done(struct rs_work *req, int status) /* loop */
{
    struct warm_read *q = (struct warm_read *)req;
    rs_heatmap_warm *w = q->w;

    w->running = NULL;
    if (status == 0 && q->rc == 0) {
        w->warmed++;
        rs_log(RS_LOG_INFO, "RS-HEATMAP-WARM", "job %s: whole-job heatmap cached in %.2f s",
               q->job, (double)q->took_ns / 1e9);
    } else if (status == 0 && q->rc != RS_E_NOT_FOUND) { /* a job deleted meanwhile: nothing */
        w->failed++;
        rs_log(RS_LOG_WARN, "RS-HEATMAP-WARM", "job %s: whole-job heatmap not cached: %s",
               q->job, rs_strerror(q->rc));
    }
    free(q);
    if (w->closed)
        free(w);
    else if (status == 0)
        pump(w);
}

/* Starts the next queued job's read, unless one runs. */
static void
pump(rs_heatmap_warm *w)
{
    while (!w->running && w->n > 0) {
        struct warm_read *q = calloc(1, sizeof *q);
        if (!q)
            return; /* the queue stays: the next rs_heatmap_warm_job tries again */
        q->w = w;
        memcpy(q->job, w->queue[w->head], sizeof q->job);
        w->head = (w->head + 1) % WARM_MAX_QUEUED;
        w->n--;
        q->req.work = warm_work;
        q->req.done = warm_done;
        int rc = rs_work_pool_submit(w->srv->queries, &q->req);
        if (rc != 0) { /* the pool is full of clients' queries (or closing): they go first */
            free(q);
            w->failed++;
            continue;
        }
        w->running = q;
    }
}

void
rs_heatmap_warm_job(rs_heatmap_warm *w, const char *job)
{
    if (!w || !job || w->closed || strlen(job) > RS_WIRE_MAX_JOB_LEN)
        return;
    /* a job being read now is queued again: its read may not have seen what just arrived */
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->queue[(w->head + i) % WARM_MAX_QUEUED], job) == 0)
            return;
    if (w->n == WARM_MAX_QUEUED)
        return;
    snprintf(w->queue[(w->head + w->n) % WARM_MAX_QUEUED], RS_WIRE_MAX_JOB_LEN + 1, "%s", job);
    w->n++;
    pump(w);
}

struct recent {
    uint64_t after_ns;
    struct rs_job_info *v;
    size_t n, cap;
};

static int
collect_recent(void *arg, const struct rs_job_info *j)
{
    struct recent *s = arg;

    if (j->received_ns < s->after_ns)
        return 0;
    if (RS_ARRAY_RESERVE(s->v, s->cap, s->n, 1) != 0)
        return -ENOMEM;
    s->v[s->n++] = *j;
    return 0;
}

static int
newest_first(const void *a, const void *b)
{
    const struct rs_job_info *x = a, *y = b;
    return (x->received_ns < y->received_ns) - (x->received_ns > y->received_ns);
}

/* Queues the jobs that received data at or after after_ns, the most recent first, while their
 * cache entries fit the cache together. */
static void
queue_recent(rs_heatmap_warm *w, uint64_t after_ns)
{
    struct recent s = {.after_ns = after_ns};
    rs_store_read *r;
    uint64_t bytes = 0;
    int rc;

    if ((rc = rs_store_read_begin(w->srv->store, &r)) == 0) {
        rc = rs_store_jobs_scan(r, collect_recent, &s);
        rs_store_read_end(r);
    }
    if (rc != 0) {
        rs_log(RS_LOG_WARN, "RS-HEATMAP-WARM", "cannot list the jobs to warm: %s",
               rs_strerror(rc));
        free(s.v);
        return;
    }
    if (s.n > 1) /* (qsort of a NULL array is undefined even when empty) */
        qsort(s.v, s.n, sizeof *s.v, newest_first);
    for (size_t i = 0; i < s.n && w->n < WARM_MAX_QUEUED; i++) {
        bytes += (uint64_t)s.v[i].n_ranks * WARM_BYTES_PER_RANK;
        if (bytes > RS_SERVER_HEATMAP_CACHE_BYTES)
            break; /* warming more would push the first ones out again */
        rs_heatmap_warm_job(w, s.v[i].name);
    }
    free(s.v);
}

/* Live jobs: what arrived since the last tick is read into the cache now, so that a job nobody
 * opened yet (or not since a while) never leaves more than one period of steps to read on open. */
static void
on_tick(uv_timer_t *t)
{
    rs_heatmap_warm *w = t->data;
    uint64_t now = rs_clock_realtime_ns();

    queue_recent(w, w->last_tick_ns);
    w->last_tick_ns = now;
}

int
rs_heatmap_warm_start(struct rs_server *srv, uint64_t recent_s, uint64_t every_s,
                      rs_heatmap_warm **out)
{
    rs_heatmap_warm *w = calloc(1, sizeof *w);
    uint64_t now = rs_clock_realtime_ns(), recent_ns = recent_s * 1000000000ull;

    if (!w || !(w->queue = calloc(WARM_MAX_QUEUED, sizeof *w->queue))) {
        free(w);
        return -ENOMEM;
    }
    w->srv = srv;
    w->last_tick_ns = now;
    *out = w;
    if (!srv->heatmaps)
        return 0;
    if (recent_s > 0)
        queue_recent(w, now > recent_ns ? now - recent_ns : 0);
    if (every_s > 0) {
        uv_timer_init(&srv->loop, &w->tick);
        w->tick.data = w;
        w->ticking = true;
        uv_timer_start(&w->tick, on_tick, every_s * 1000, every_s * 1000);
    }
    return 0;
}

void
rs_heatmap_warm_get_stats(const rs_heatmap_warm *w, struct rs_heatmap_warm_stats *out)
{
    *out = (struct rs_heatmap_warm_stats){0};
    if (w)
        *out = (struct rs_heatmap_warm_stats){w->warmed, w->failed, w->n + (w->running != NULL)};
}

void
rs_heatmap_warm_stop(rs_heatmap_warm *w)
{
    if (!w || !w->ticking)
        return;
    w->ticking = false;
    uv_close((uv_handle_t *)&w->tick, NULL);
}

void
rs_heatmap_warm_free(rs_heatmap_warm *w)
{
    if (!w)
        return;
    free(w->queue);
    w->queue = NULL;
    w->n = 0;
    if (w->running)
        w->closed = true;
    else
        free(w);
}
