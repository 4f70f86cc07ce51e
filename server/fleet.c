/* GET /v1/gpus and /v1/hosts: the fleet view (docs/telemetry.md "Fleet view"). GPUs and hosts
 * ranked by how often they were the straggler across jobs — "slow in 4 of its 5 jobs" tells bad
 * hardware from a bad job config — from the verdict history in the store (storage/store.h
 * rs_store_verdicts_scan; recorded by the evaluator, verdict_history.h, kept across restarts and
 * deleted with its job) joined with the store's ranks (which GPU and host each rank of each job
 * ran on) and each GPU's newest NVML reading. All of it is read in the thread pool. */
#include "server/server_int.h"

#include "common/array.h"
#include "common/clock.h"
#include "common/error.h"
#include "query/gpus.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FLEET_MAX_ROWS 1000 /* rows answered, worst first */

/* One GPU (or host) of the fleet. */
struct row {
    char key[RS_STORE_UUID_MAX > RS_STORE_HOST_MAX ? RS_STORE_UUID_MAX : RS_STORE_HOST_MAX];
    char host[RS_STORE_HOST_MAX];
    uint32_t ranks;                            /* hosts: ranks it ran, over its jobs */
    char counted_job[RS_WIRE_MAX_JOB_LEN + 1]; /* jobs are scanned one by one: counted once */
    uint64_t jobs, straggler_jobs, verdicts;
    double slowdown_sum;
    char last_job[RS_WIRE_MAX_JOB_LEN + 1]; /* the job it was in that received data last */
    uint32_t last_rank;
    uint64_t last_received_ns;
    char last_straggler_job[RS_WIRE_MAX_JOB_LEN + 1];
    bool has_reading;
    struct rs_gpu_sample reading;
};

struct fleet_work {
    struct rs_work req;   /* first member: the pool's callbacks get the work */
    uint64_t deadline_ns; /* monotonic: the store's scans stop there (-ETIMEDOUT: 504) */
    struct rs_server *srv;
    rs_http_conn *conn;
    bool hosts;
    uint64_t n_verdicts; /* read from the store */
    struct row *rows;
    size_t n_rows, cap_rows;
    json_t *doc;
    int rc;
};

static struct row *
row_of(struct fleet_work *w, const char *key)
{
    for (size_t i = 0; i < w->n_rows; i++)
        if (strcmp(w->rows[i].key, key) == 0)
            return &w->rows[i];
    if (RS_ARRAY_RESERVE(w->rows, w->cap_rows, w->n_rows, 1) != 0)
        return NULL;
    struct row *r = &w->rows[w->n_rows++];
    memset(r, 0, sizeof *r);
    snprintf(r->key, sizeof r->key, "%s", key);
    return r;
}

struct job_scan {
    struct fleet_work *w;
    rs_store_read *r;
    struct rs_store_verdict *verdicts; /* the current job's, by rank */
    size_t n_verdicts, cap_verdicts;
};

static int
copy_verdict(void *arg, const struct rs_store_verdict *v)
{
    struct job_scan *s = arg;

    if (RS_ARRAY_RESERVE(s->verdicts, s->cap_verdicts, s->n_verdicts, 1) != 0)
        return -ENOMEM;
    s->verdicts[s->n_verdicts++] = *v;
    return 0;
}

/* The current job's verdicts of rank `rank`: how many, and their slowdowns' sum. */
static size_t
verdicts_of(const struct job_scan *s, uint32_t rank, double *slowdown_sum)
{
    size_t n = 0;

    for (size_t i = 0; i < s->n_verdicts; i++)
        if (s->verdicts[i].rank == rank) {
            n++;
            *slowdown_sum += s->verdicts[i].slowdown;
        }
    return n;
}

static int
add_job(void *arg, const struct rs_job_info *job)
{
    struct job_scan *s = arg;
    struct fleet_work *w = s->w;
    struct rs_rank_info *ranks;
    size_t n;
    int rc = rs_store_ranks_get(s->r, job->name, &ranks, &n);

    if (rc != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc;
    s->n_verdicts = 0;
    if ((rc = rs_store_verdicts_scan(s->r, job->name, copy_verdict, s)) != 0) {
        free(ranks);
        return rc;
    }
    w->n_verdicts += s->n_verdicts;
    /* one count per job for a GPU (or host) however many of its ranks it ran */
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *key = w->hosts ? ranks[i].host : ranks[i].gpu_uuid;
        if (!key[0])
            continue; /* imported traces say neither */
        struct row *r = row_of(w, key);
        if (!r) {
            rc = -ENOMEM;
            break;
        }
        bool first_in_job = strcmp(r->counted_job, job->name) != 0;
        double sum = 0;
        size_t v = verdicts_of(s, ranks[i].rank, &sum);
        if (first_in_job) {
            snprintf(r->counted_job, sizeof r->counted_job, "%s", job->name);
            r->jobs++;
            if (job->received_ns >= r->last_received_ns) {
                snprintf(r->last_job, sizeof r->last_job, "%s", job->name);
                r->last_rank = ranks[i].rank;
                r->last_received_ns = job->received_ns;
            }
        }
        if (w->hosts)
            r->ranks++;
        else
            snprintf(r->host, sizeof r->host, "%s", ranks[i].host);
        if (v > 0) {
            if (strcmp(r->last_straggler_job, job->name) != 0)
                r->straggler_jobs++;
            snprintf(r->last_straggler_job, sizeof r->last_straggler_job, "%s", job->name);
            r->verdicts += v;
            r->slowdown_sum += sum;
        }
    }
    free(ranks);
    return rc;
}

static int
by_badness(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    double fx = x->jobs ? (double)x->straggler_jobs / (double)x->jobs : 0;
    double fy = y->jobs ? (double)y->straggler_jobs / (double)y->jobs : 0;

    if (x->straggler_jobs != y->straggler_jobs)
        return x->straggler_jobs > y->straggler_jobs ? -1 : 1;
    if (fx != fy)
        return fx > fy ? -1 : 1;
    return strcmp(x->key, y->key);
}

static json_t *
reading_json(const struct row *r)
{
    const struct rs_gpu_sample *g = &r->reading;

    if (!r->has_reading)
        return json_null();
    return json_pack("{s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I}", "time_ns",
                     (json_int_t)g->time_ns, "sm_clock_mhz", (json_int_t)g->sm_clock_mhz,
                     "sm_clock_max_mhz", (json_int_t)g->sm_clock_max_mhz, "power_watts",
                     g->power_mw / 1000.0, "temperature_c", (json_int_t)g->temperature_c,
                     "clock_reasons", (json_int_t)g->clock_reasons, "ecc_uncorrected_total",
                     (json_int_t)g->ecc_uncorrected, "pcie_width", (json_int_t)g->pcie_width,
                     "pcie_width_max", (json_int_t)g->pcie_width_max);
}

static void
read_fleet(struct rs_work *req) /* query pool */
{
    struct fleet_work *w = (struct fleet_work *)req;
    struct job_scan s = {w, NULL, NULL, 0, 0};

    if (w->rc != 0 || (w->rc = rs_store_read_begin(w->srv->store, &s.r)) != 0)
        return;
    rs_store_read_set_deadline(s.r, w->deadline_ns);
    if ((w->rc = rs_store_jobs_scan(s.r, add_job, &s)) == 0) {
        qsort(w->rows, w->n_rows, sizeof *w->rows, by_badness);
        for (size_t i = 0; i < w->n_rows && i < FLEET_MAX_ROWS && !w->hosts; i++)
            w->rows[i].has_reading =
                rs_store_gpu_last(s.r, w->rows[i].last_job, w->rows[i].last_rank,
                                  &w->rows[i].reading) == 0;
    }
    rs_store_read_end(s.r);
    free(s.verdicts);
    if (w->rc != 0)
        return;
    json_t *list = json_array();
    for (size_t i = 0; list && i < w->n_rows && i < FLEET_MAX_ROWS; i++) {
        const struct row *r = &w->rows[i];
        char text[96];
        snprintf(text, sizeof text, "the straggler in %llu of its %llu jobs",
                 (unsigned long long)r->straggler_jobs, (unsigned long long)r->jobs);
        json_t *o =
            json_pack("{s:s, s:I, s:I, s:I, s:o, s:s, s:s}", w->hosts ? "host" : "gpu_uuid", r->key,
                      "jobs", (json_int_t)r->jobs, "straggler_jobs", (json_int_t)r->straggler_jobs,
                      "straggler_verdicts", (json_int_t)r->verdicts, "mean_slowdown",
                      r->verdicts ? json_real(r->slowdown_sum / (double)r->verdicts) : json_null(),
                      "last_job", r->last_job, "summary", text);
        if (o && w->hosts)
            json_object_set_new(o, "ranks", json_integer(r->ranks));
        if (o && !w->hosts) {
            json_object_set_new(o, "host", json_string(r->host));
            json_object_set_new(o, "last_rank", json_integer(r->last_rank));
            json_object_set_new(o, "newest_reading", reading_json(r));
        }
        if (!o || json_array_append_new(list, o) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    w->doc =
        list ? json_pack("{s:o, s:I, s:I, s:s}", w->hosts ? "hosts" : "gpus", list,
                         "verdicts_known", (json_int_t)w->n_verdicts, "rows_omitted",
                         (json_int_t)(w->n_rows > FLEET_MAX_ROWS ? w->n_rows - FLEET_MAX_ROWS : 0),
                         "history",
                         "straggler verdicts of the server's continuous evaluation, stored with "
                         "their jobs (kept across restarts; at most 16 per rank)")
             : NULL;
    if (!w->doc)
        w->rc = -ENOMEM;
}

static void
fleet_done(struct rs_work *req, int status) /* loop */
{
    struct fleet_work *w = (struct fleet_work *)req;

    if (status == 0 && w->rc == 0) {
        rs_http_respond_json(w->conn, 200, w->doc); /* takes the document */
        w->doc = NULL;
    } else if (status != 0)
        rs_http_respond_error(w->conn, 503, "the server is stopping");
    else if (w->rc == -ETIMEDOUT) {
        RS_COUNT(&w->srv->counters, queries_timed_out);
        rs_http_respond_error(w->conn, 504,
                              "the fleet view took longer than the server allows "
                              "(query-timeout-ms %lld)",
                              (long long)w->srv->cfg->query_timeout_ms);
    } else
        rs_http_respond_error(w->conn, 500, "fleet view: %s", rs_strerror(w->rc));
    json_decref(w->doc);
    free(w->rows);
    free(w);
}

void
rs__server_fleet(struct rs_server *srv, rs_http_conn *c, bool hosts)
{
    struct fleet_work *w = calloc(1, sizeof *w);

    if (!w) {
        rs_http_respond_error(c, 500, "out of memory");
        return;
    }
    w->srv = srv;
    w->conn = c;
    w->hosts = hosts;
    w->deadline_ns = rs_clock_mono_ns() + (uint64_t)srv->cfg->query_timeout_ms * 1000000ull;
    w->req.work = read_fleet;
    w->req.done = fleet_done;
    if (rs__server_query_submit(srv, c, &w->req) != 0) /* answered */
        free(w);
}
