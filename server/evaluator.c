/* Streaming straggler evaluation on a timer, verdict history per job (see evaluator.h). */
#include "server/evaluator.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "query/steps.h"
#include "query/stragglers.h"
#include "server/server_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_JOBS 4096         /* job histories kept; the least recently evaluated goes first */
#define MAX_EVENTS_PER_JOB 64 /* raised/cleared entries kept per job; cleared ones go first */
#define CAUSE_LEN 16          /* the longest cause ("extra_work", "host_side") and more */

/* One verdict's life: raised at detected_ns, cleared at cleared_ns (0 while active). */
struct verdict_state {
    uint32_t rank;
    uint64_t detected_ns, cleared_ns;
    double slowdown;       /* of the newest evaluation that found it */
    char cause[CAUSE_LEN]; /* as last logged: at the raise, or the last one other than unknown */
};

/* The final steps of a job's last load, which the next one takes from memory instead of reading
 * them again (rs_query_job_steps_kept). Every KEPT_RELOAD-th load reads everything again: a step
 * record that arrives late, older than the kept ones, is then seen too. */
#define KEPT_RELOAD 16
struct kept_steps {
    struct rs_rank_steps *v; /* rank order */
    size_t n;
    uint64_t first_ns; /* the job's first record time: another job of the same name differs */
    unsigned loads;    /* loads since the last full one */
};

static void
kept_free(struct kept_steps *k)
{
    rs_job_steps_free(k->v, k->n);
    *k = (struct kept_steps){0};
}

struct job_state {
    char name[RS_WIRE_MAX_JOB_LEN + 1];
    uint64_t evaluated_ns;
    uint64_t catchup_next; /* steps below it are summarized or had their turn (see catch_up) */
    struct kept_steps kept;
    struct verdict_state *v;
    size_t n;
};

/* What one evaluation found for one job (filled in the thread pool). */
struct job_result {
    char name[RS_WIRE_MAX_JOB_LEN + 1];
    json_t *verdicts;       /* the "stragglers" array of the answer */
    uint64_t first_ns;      /* the job's first record time */
    uint64_t catchup_next;  /* the job's next catch-up step, for job_state */
    struct kept_steps kept; /* the evaluator's kept steps at the start, then the new ones */
};

/* A job's state when the evaluation started (moved from the loop thread's job_state). */
struct job_start {
    char name[RS_WIRE_MAX_JOB_LEN + 1];
    uint64_t next;
    struct kept_steps kept;
};

/* Settled step metrics of one rank, to be stored (a writer task takes the list). */
struct rank_summaries {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint32_t rank;
    struct rs_step_summary *v;
    size_t n;
};

struct summaries {
    struct rank_summaries *v;
    size_t n, cap, next;        /* next: the first not stored yet */
    rs_evaluator *e;            /* alive until summaries_finished (maybe_free waits for it) */
    struct rs_post_node stored; /* back to the loop once the writer is done with them */
};

struct run {
    uv_work_t req;
    rs_evaluator *e;
    uint64_t now_ns, active_after_ns;
    uint64_t started_mono_ns;
    struct job_result *jobs;
    size_t n, cap;
    struct job_start *known; /* the evaluator's jobs, as of the start */
    size_t n_known;
    struct summaries *to_store;
    uint64_t catchup_steps; /* rank-steps the catch-ups loaded */
    int rc;
};

struct rs_evaluator {
    uv_timer_t timer;
    struct rs_server *srv;
    struct rs_evaluator_options o;
    bool running; /* an evaluation is in the thread pool */
    /* Summaries are with the writer: evaluations collect no more until they are stored, or they
     * would queue the same steps again behind them (see store_summaries). */
    bool storing;
    bool closed;
    uint64_t next_start_mono_ns; /* the share limit: no evaluation starts before this */
    struct job_state *jobs;
    size_t n_jobs;
    struct rs_evaluator_stats stats;
};

static void
maybe_free(rs_evaluator *e)
{
    if (!e->closed || e->running || e->storing || e->timer.data != NULL)
        return;
    for (size_t i = 0; i < e->n_jobs; i++) {
        free(e->jobs[i].v);
        kept_free(&e->jobs[i].kept);
    }
    free(e->jobs);
    free(e);
}

static int
collect_job(void *arg, const struct rs_job_info *job)
{
    struct run *run = arg;

    if (job->received_ns < run->active_after_ns || job->n_ranks < 2)
        return 0;
    if (run->n == run->cap) {
        size_t cap = run->cap ? 2 * run->cap : 16;
        struct job_result *v = realloc(run->jobs, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        run->jobs = v;
        run->cap = cap;
    }
    memcpy(run->jobs[run->n].name, job->name, sizeof job->name);
    struct job_result *res = &run->jobs[run->n];
    res->verdicts = NULL;
    res->first_ns = job->first_ns;
    res->catchup_next = UINT64_MAX; /* not seen since the start: catch_up finds it */
    res->kept = (struct kept_steps){0};
    for (size_t i = 0; i < run->n_known; i++)
        if (strcmp(run->known[i].name, job->name) == 0) {
            res->catchup_next = run->known[i].next;
            res->kept = run->known[i].kept; /* the job's now */
            run->known[i].kept = (struct kept_steps){0};
            if (res->kept.first_ns != job->first_ns || ++res->kept.loads >= KEPT_RELOAD)
                kept_free(&res->kept);
        }
    run->n++;
    return 0;
}

static void
summaries_free(struct summaries *s)
{
    for (size_t i = 0; s && i < s->n; i++)
        free(s->v[i].v);
    if (s)
        free(s->v);
    free(s);
}

/* Keeps the metrics of a job's steps that were computed from kernels and are settled. */
static int
collect_summaries(struct summaries *s, const char *job, const struct rs_rank_steps *ranks,
                  size_t n_ranks)
{
    for (size_t i = 0; i < n_ranks; i++) {
        const struct rs_rank_steps *rk = &ranks[i];
        if (rk->n_to_store == 0)
            continue;
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 64;
            struct rank_summaries *v = realloc(s->v, cap * sizeof *v);
            if (!v)
                return -ENOMEM;
            s->v = v;
            s->cap = cap;
        }
        struct rank_summaries *rs = &s->v[s->n];
        if (!(rs->v = malloc(rk->n_to_store * sizeof *rs->v)))
            return -ENOMEM;
        snprintf(rs->job, sizeof rs->job, "%s", job);
        rs->rank = rk->rank;
        rs->n = 0;
        for (size_t k = 0; k < rk->n; k++)
            if (rk->to_store[k])
                rs->v[rs->n++] = rk->steps[k];
        s->n++;
    }
    return 0;
}

/* Writer task: stores the summaries, a few thousand per transaction. */
#define SUMMARIES_PER_TXN 4096

static int
store_summaries(rs_store_write *txn, void *arg, bool *done)
{
    struct summaries *s = arg;
    size_t budget = SUMMARIES_PER_TXN;

    for (; s->next < s->n && budget > 0; s->next++) {
        const struct rank_summaries *rs = &s->v[s->next];
        int rc = rs_store_step_summaries_put(txn, rs->job, rs->rank, rs->v, rs->n);
        if (rc == RS_E_NOT_FOUND) /* the job was deleted meanwhile */
            continue;
        if (rc != 0)
            return rc;
        RS_COUNT_ADD(&s->e->srv->counters, step_summaries, rs->n);
        budget = rs->n < budget ? budget - rs->n : 0;
    }
    *done = s->next == s->n;
    return 0;
}

static void
summaries_finished(void *arg) /* loop */
{
    struct summaries *s = arg;
    rs_evaluator *e = s->e;

    summaries_free(s);
    e->storing = false;
    maybe_free(e);
}

static void
summaries_stored(void *arg, int status) /* writer thread */
{
    struct summaries *s = arg;

    if (status != 0 && status != RS_E_CLOSED)
        rs_log_limited(60, RS_LOG_WARN, "RS-EVALUATE-SUMMARIES", "storing step summaries: %s",
                       rs_strerror(status));
    rs_post_node_call(s->e->srv->post, &s->stored, summaries_finished, s);
}

/* Steps of a job loaded per evaluation to summarize those the newest windows no longer reach. */
#define CATCHUP_STEPS 300

/* The first step of the loaded ones that has no stored summary and is not being stored by this
 * evaluation (the oldest over the ranks), or the step after the newest when there is none: where
 * the next evaluation's catch-up starts. */
static uint64_t
first_open_step(const struct rs_rank_steps *ranks, size_t n_ranks)
{
    uint64_t open = UINT64_MAX, after = 0;

    for (size_t i = 0; i < n_ranks; i++) {
        const struct rs_rank_steps *rk = &ranks[i];
        for (size_t k = 0; k < rk->n; k++)
            if (!rs_step_is_final(rk, k, true)) {
                open = rk->steps[k].step < open ? rk->steps[k].step : open;
                break;
            }
        if (rk->n > 0 && rk->steps[rk->n - 1].step + 1 > after)
            after = rk->steps[rk->n - 1].step + 1;
    }
    return open != UINT64_MAX ? open : after;
}

/* Steps arrive faster than the evaluations when data comes in bulk (an agent's spool after an
 * outage, a job sent faster than real time): the newest windows then skip steps, which would
 * never be summarized — and rollups keep the records of steps without a summary for good. So each
 * evaluation also loads the steps from the job's catch-up position up to its newest windows, at
 * most CATCHUP_STEPS of them, and stores the summaries of those that lack one. The position then
 * moves to the windows' first step that is neither summarized nor being stored (first_open_step):
 * at a steady pace the windows summarize every step as it settles, and the catch-up loads nothing.
 * A job first seen since the server started begins at its oldest step with raw records (older
 * ones are rolled up, hence summarized). Jobs with step markers only (inferred steps are numbered
 * per load). */
static int
catch_up(rs_store_read *r, struct run *run, struct job_result *job,
         const struct rs_rank_steps *ranks, size_t n_ranks)
{
    uint64_t next = job->catchup_next, window_first = UINT64_MAX; /* as collect_job found it */
    struct rs_rank_steps *older;
    size_t n_older;

    for (size_t i = 0; i < n_ranks; i++)
        if (ranks[i].n > 0 && ranks[i].steps[0].step < window_first)
            window_first = ranks[i].steps[0].step;
    if (!run->to_store || window_first == UINT64_MAX ||
        strcmp(rs_steps_source(ranks, n_ranks), "markers") != 0)
        return 0;
    if (next == UINT64_MAX) { /* first seen since the server started: from what is still raw */
        for (size_t i = 0; i < n_ranks; i++) {
            uint64_t step;
            bool found;
            if (rs_store_oldest_raw_step(r, job->name, ranks[i].rank, &step, &found) == 0 &&
                found && step < next)
                next = step;
        }
    }
    if (next >= window_first) {
        job->catchup_next = first_open_step(ranks, n_ranks); /* the windows cover the rest */
        return 0;
    }
    uint64_t until =
        window_first - next > CATCHUP_STEPS ? next + CATCHUP_STEPS - 1 : window_first - 1;
    if (rs_query_job_steps_until(r, job->name, until - next + 1, until, &older, &n_older) != 0)
        return 0; /* the next evaluation tries again */
    int rc = collect_summaries(run->to_store, job->name, older, n_older);
    for (size_t i = 0; i < n_older; i++)
        run->catchup_steps += older[i].n;
    rs_job_steps_free(older, n_older);
    if (rc == 0)
        job->catchup_next = until + 1 < window_first ? until + 1 : first_open_step(ranks, n_ranks);
    return rc;
}

static void
evaluate(uv_work_t *req) /* thread pool */
{
    struct run *run = req->data;
    rs_store_read *r;
    struct rs_straggler_options o;

    rs_straggler_options_default(&o);
    /* The lookback (10 windows) only dates a straggler back (`since`) for the answers of the REST
     * API, which compute their own; the evaluator dates its verdicts itself (detected_ns). Twice
     * the windows required keeps everything it logs and keeps as it was (a verdict needs that many
     * in a row; confidence is full from twice that) and reads 120 steps per rank instead of 300:
     * under 20,000 summaries/s the evaluation was most of the decline (docs/BENCHMARKS.md). */
    o.lookback_windows = 2 * o.windows_required;
    if ((run->rc = rs_store_read_begin(run->e->srv->store, &r)) != 0)
        return;
    run->rc = rs_store_jobs_scan(r, collect_job, run);
    for (size_t i = 0; run->rc == 0 && i < run->n; i++) {
        struct job_result *job = &run->jobs[i];
        json_t *doc = NULL;
        struct rs_rank_steps *ranks;
        size_t n_ranks;
        /* one load of the steps serves the verdict and the summaries: settled steps computed
         * from kernels are stored, so later evaluations read one value per rank-step and cost the
         * same in the job's first minute and its tenth hour; the final ones are kept, so the next
         * load reads only the steps that came since */
        int rc = rs_query_job_steps_kept(r, job->name, rs_straggler_steps_needed(&o), o.until_step,
                                         job->kept.v, job->kept.n, &ranks, &n_ranks);
        if (rc == 0) {
            if ((run->to_store &&
                 collect_summaries(run->to_store, job->name, ranks, n_ranks) != 0) ||
                catch_up(r, run, job, ranks, n_ranks) != 0)
                run->rc = -ENOMEM;
            rc = rs_query_stragglers_on(r, job->name, &o, ranks, n_ranks, &doc);
            unsigned loads = job->kept.loads; /* 0 after a full load */
            kept_free(&job->kept);
            rs_job_steps_keep_final(ranks, n_ranks, run->to_store != NULL);
            job->kept = (struct kept_steps){ranks, n_ranks, job->first_ns, loads};
        }
        if (rc == RS_E_NOT_FOUND) /* deleted since the scan */
            continue;
        if (rc != 0) {
            run->rc = rc;
            break;
        }
        run->jobs[i].verdicts = json_incref(json_object_get(doc, "stragglers"));
        json_decref(doc);
    }
    rs_store_read_end(r);
}

static struct job_state *
find_job(const rs_evaluator *e, const char *name)
{
    for (size_t i = 0; i < e->n_jobs; i++)
        if (strcmp(e->jobs[i].name, name) == 0)
            return &e->jobs[i];
    return NULL;
}

static struct job_state *
add_job(rs_evaluator *e, const char *name)
{
    if (e->n_jobs == MAX_JOBS) { /* forget the job evaluated longest ago */
        size_t old = 0;
        for (size_t i = 1; i < e->n_jobs; i++)
            if (e->jobs[i].evaluated_ns < e->jobs[old].evaluated_ns)
                old = i;
        free(e->jobs[old].v);
        kept_free(&e->jobs[old].kept);
        e->jobs[old] = e->jobs[--e->n_jobs];
    }
    if (!e->jobs && !(e->jobs = calloc(MAX_JOBS, sizeof *e->jobs)))
        return NULL;
    struct job_state *j = &e->jobs[e->n_jobs++];
    memset(j, 0, sizeof *j);
    snprintf(j->name, sizeof j->name, "%s", name);
    return j;
}

static struct verdict_state *
active_verdict(struct job_state *j, uint32_t rank)
{
    for (size_t i = 0; i < j->n; i++)
        if (j->v[i].rank == rank && j->v[i].cleared_ns == 0)
            return &j->v[i];
    return NULL;
}

static int
add_verdict(struct job_state *j, uint32_t rank, uint64_t now_ns)
{
    if (j->n == MAX_EVENTS_PER_JOB) { /* drop the oldest cleared entry (or the oldest) */
        size_t drop = 0;
        for (size_t i = 0; i < j->n; i++)
            if (j->v[i].cleared_ns) {
                drop = i;
                break;
            }
        memmove(&j->v[drop], &j->v[drop + 1], (j->n - drop - 1) * sizeof j->v[0]);
        j->n--;
    }
    struct verdict_state *v = realloc(j->v, (j->n + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    j->v = v;
    j->v[j->n++] = (struct verdict_state){.rank = rank, .detected_ns = now_ns};
    return 0;
}

static bool
in_verdicts(json_t *verdicts, uint32_t rank)
{
    size_t i;
    json_t *v;
    json_array_foreach(verdicts, i, v)
    {
        if (json_integer_value(json_object_get(v, "rank")) == (json_int_t)rank)
            return true;
    }
    return false;
}

/* Logs a verdict: raised, or its cause changed (a summarized job's first verdicts may say
 * "unknown" until the agents' kernel windows of its steps arrive). */
static void
log_verdict(const char *job, json_t *v, const char *was)
{
    uint32_t rank = (uint32_t)json_integer_value(json_object_get(v, "rank"));
    const char *cause = json_string_value(json_object_get(v, "cause"));
    double slower = 100 * (json_real_value(json_object_get(v, "slowdown")) - 1);
    double impact = json_real_value(json_object_get(v, "impact_pct"));
    const char *action = json_string_value(json_object_get(v, "action"));

    if (!was)
        rs_log(RS_LOG_WARN, "RS-STRAGGLER-RAISED",
               "job %s: rank %u on %s (GPU %s) is a straggler: %+.1f%% slower, cause %s, "
               "impact %.1f%% of step time, action %s",
               job, rank, json_string_value(json_object_get(v, "host")),
               json_string_value(json_object_get(v, "gpu_uuid")), slower, cause, impact, action);
    else
        rs_log(RS_LOG_WARN, "RS-STRAGGLER-CAUSE",
               "job %s: rank %u: cause %s (was %s): %+.1f%% slower, impact %.1f%% of step time, "
               "action %s",
               job, rank, cause, was, slower, impact, action);
}

/* Compares one job's new verdicts with its history: raises new ones, clears vanished ones, logs
 * changed causes. */
static void
merge_job(rs_evaluator *e, struct job_result *res, uint64_t now_ns)
{
    struct job_state *j = find_job(e, res->name);
    size_t i;
    json_t *v;

    if (!j && !(j = add_job(e, res->name)))
        return;
    j->evaluated_ns = now_ns;
    j->catchup_next = res->catchup_next;
    kept_free(&j->kept);
    j->kept = res->kept; /* the job's now */
    res->kept = (struct kept_steps){0};
    e->stats.jobs_evaluated++;
    json_array_foreach(res->verdicts, i, v)
    {
        uint32_t rank = (uint32_t)json_integer_value(json_object_get(v, "rank"));
        const char *cause = json_string_value(json_object_get(v, "cause"));
        struct verdict_state *known = active_verdict(j, rank);
        if (!known) {
            if (add_verdict(j, rank, now_ns) != 0)
                continue;
            known = &j->v[j->n - 1];
            e->stats.raised++;
            log_verdict(res->name, v, NULL);
            snprintf(known->cause, sizeof known->cause, "%s", cause ? cause : "");
        } else if (cause && strcmp(cause, "unknown") != 0 && strcmp(known->cause, cause) != 0) {
            log_verdict(res->name, v, known->cause); /* ("unknown" again tells nothing new) */
            snprintf(known->cause, sizeof known->cause, "%s", cause);
        }
        known->slowdown = json_real_value(json_object_get(v, "slowdown"));
    }
    for (size_t k = 0; k < j->n; k++) {
        if (j->v[k].cleared_ns || in_verdicts(res->verdicts, j->v[k].rank))
            continue;
        j->v[k].cleared_ns = now_ns;
        e->stats.cleared++;
        rs_log(RS_LOG_INFO, "RS-STRAGGLER-CLEARED", "job %s: rank %u is no longer a straggler",
               res->name, j->v[k].rank);
    }
}

static void
evaluated(uv_work_t *req, int status) /* loop */
{
    struct run *run = req->data;
    rs_evaluator *e = run->e;

    e->running = false;
    uint64_t now = rs_clock_mono_ns(), took = now - run->started_mono_ns;
    e->stats.last_duration_ms = took / 1000000;
    e->next_start_mono_ns = now + (RS_EVALUATOR_SHARE_DIVISOR - 1) * took;
    if (status == 0 && run->rc != 0) {
        e->stats.errors++;
        rs_log_limited(60, RS_LOG_ERROR, "RS-EVALUATE", "straggler evaluation failed: %s",
                       rs_strerror(run->rc));
    }
    for (size_t i = 0; i < run->n; i++) {
        if (status == 0 && !e->closed && run->jobs[i].verdicts)
            merge_job(e, &run->jobs[i], run->now_ns);
        json_decref(run->jobs[i].verdicts);
        kept_free(&run->jobs[i].kept);
    }
    e->stats.evaluations++;
    e->stats.catchup_steps += run->catchup_steps;
    e->stats.active_stragglers = 0;
    for (size_t i = 0; i < e->n_jobs; i++)
        for (size_t k = 0; k < e->jobs[i].n; k++)
            e->stats.active_stragglers += e->jobs[i].v[k].cleared_ns == 0;
    if (run->to_store && run->to_store->n > 0 && !e->closed &&
        rs_writer_submit_task(e->srv->writer, store_summaries, summaries_stored, run->to_store) ==
            0) {
        run->to_store = NULL; /* the task owns it now */
        e->storing = true;
    }
    summaries_free(run->to_store);
    free(run->jobs);
    for (size_t i = 0; i < run->n_known; i++) /* jobs no longer running: nothing to keep */
        kept_free(&run->known[i].kept);
    free(run->known);
    free(run);
    maybe_free(e);
}

static void
on_tick(uv_timer_t *t)
{
    rs_evaluator *e = t->data;
    struct run *run;

    if (e->running || rs_clock_mono_ns() < e->next_start_mono_ns || !(run = calloc(1, sizeof *run)))
        return;        /* the previous evaluation is still going, or took long: skip this tick */
    if (!e->storing) { /* else the verdicts only: the steps stay unsummarized until next time */
        if (!(run->to_store = calloc(1, sizeof *run->to_store))) {
            free(run);
            return;
        }
        run->to_store->e = e;
    }
    if (e->n_jobs && (run->known = calloc(e->n_jobs, sizeof *run->known))) {
        for (size_t i = 0; i < e->n_jobs; i++) {
            memcpy(run->known[i].name, e->jobs[i].name, sizeof run->known[i].name);
            run->known[i].next = e->jobs[i].catchup_next;
            run->known[i].kept = e->jobs[i].kept; /* the evaluation's until it ends */
            e->jobs[i].kept = (struct kept_steps){0};
        }
        run->n_known = e->n_jobs;
    }
    run->e = e;
    run->started_mono_ns = rs_clock_mono_ns();
    run->now_ns = rs_clock_realtime_ns();
    run->active_after_ns = run->now_ns - (uint64_t)e->o.active_s * 1000000000ull;
    run->req.data = run;
    if (uv_queue_work(&e->srv->loop, &run->req, evaluate, evaluated) != 0) {
        summaries_free(run->to_store);
        for (size_t i = 0; i < run->n_known; i++) /* the next evaluation reads everything */
            kept_free(&run->known[i].kept);
        free(run->known);
        free(run);
        return;
    }
    e->running = true;
}

int
rs_evaluator_start(struct rs_server *srv, const struct rs_evaluator_options *o, rs_evaluator **out)
{
    rs_evaluator *e = calloc(1, sizeof *e);

    if (!e)
        return -ENOMEM;
    e->srv = srv;
    e->o = *o;
    uv_timer_init(&srv->loop, &e->timer);
    e->timer.data = e;
    if (o->period_ms > 0)
        uv_timer_start(&e->timer, on_tick, o->period_ms, o->period_ms);
    *out = e;
    return 0;
}

static void
on_closed(uv_handle_t *h)
{
    rs_evaluator *e = h->data;

    e->timer.data = NULL;
    maybe_free(e);
}

void
rs_evaluator_close(rs_evaluator *e)
{
    if (!e)
        return;
    e->closed = true;
    uv_close((uv_handle_t *)&e->timer, on_closed);
}

/* A JSON integer, or null for 0 (unknown). */
static json_t *
time_or_null(uint64_t ns)
{
    return ns ? json_integer((json_int_t)ns) : json_null();
}

int
rs_evaluator_annotate(const rs_evaluator *e, const char *job, uint64_t since_ns, json_t *doc)
{
    struct job_state *j = e ? find_job(e, job) : NULL;
    json_t *verdicts = json_object_get(doc, "stragglers"), *cleared = json_array(), *v;
    uint64_t events_ns = 0;
    size_t i;

    if (!cleared)
        return -ENOMEM;
    for (i = 0; i < json_array_size(verdicts);) {
        v = json_array_get(verdicts, i);
        struct verdict_state *st =
            j ? active_verdict(j, (uint32_t)json_integer_value(json_object_get(v, "rank"))) : NULL;
        uint64_t detected = st ? st->detected_ns : 0;
        uint64_t when =
            detected ? detected : (uint64_t)json_integer_value(json_object_get(v, "since_ns"));
        if (since_ns && when <= since_ns) {
            json_array_remove(verdicts, i);
            continue;
        }
        json_object_set_new(v, "detected_ns", time_or_null(detected));
        i++;
    }
    for (size_t k = 0; j && k < j->n; k++) {
        const struct verdict_state *s = &j->v[k];
        uint64_t last = s->cleared_ns > s->detected_ns ? s->cleared_ns : s->detected_ns;
        events_ns = last > events_ns ? last : events_ns;
        if (s->cleared_ns && s->cleared_ns > since_ns)
            json_array_append_new(cleared, json_pack("{s:I, s:I, s:I}", "rank", (json_int_t)s->rank,
                                                     "detected_ns", (json_int_t)s->detected_ns,
                                                     "cleared_ns", (json_int_t)s->cleared_ns));
    }
    json_object_set_new(doc, "cleared", cleared);
    json_object_set_new(doc, "events_ns", time_or_null(events_ns));
    json_object_set_new(doc, "streaming", json_boolean(e && e->o.period_ms > 0));
    return 0;
}

void
rs_evaluator_forget(rs_evaluator *e, const char *job)
{
    struct job_state *j = e ? find_job(e, job) : NULL;

    if (!j)
        return;
    free(j->v);
    kept_free(&j->kept);
    *j = e->jobs[--e->n_jobs];
}

void
rs_evaluator_get_stats(const rs_evaluator *e, struct rs_evaluator_stats *out)
{
    memset(out, 0, sizeof *out);
    if (e)
        *out = e->stats;
}

size_t
rs_evaluator_foreach_active(const rs_evaluator *e, size_t max, rs_evaluator_verdict_fn fn,
                            void *arg)
{
    size_t seen = 0;

    for (size_t i = 0; e && i < e->n_jobs; i++)
        for (size_t k = 0; k < e->jobs[i].n; k++) {
            const struct verdict_state *v = &e->jobs[i].v[k];
            if (v->cleared_ns)
                continue;
            if (seen++ < max)
                fn(arg, e->jobs[i].name, v->rank, v->slowdown, v->detected_ns);
        }
    return seen;
}
