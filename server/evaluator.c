/* Streaming straggler evaluation on a timer, verdict history per job (see evaluator.h); the steps
 * it loads also feed the step summaries (step_summaries.h). */
#include "server/evaluator.h"
#include "server/auto_capture.h"
#include "server/capture_evidence.h"

#include "common/array.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "query/steps.h"
#include "query/stragglers.h"
#include "server/periodic.h"
#include "server/server_int.h"
#include "server/step_summaries.h"
#include "server/verdict_history.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#define MAX_JOBS 4096         /* job histories kept; the least recently evaluated goes first */
#define MAX_EVENTS_PER_JOB 64 /* raised/cleared entries kept per job; cleared ones go first */

/* One verdict's life: raised at detected_ns, cleared at cleared_ns (0 while active). */
struct verdict_state {
    uint32_t rank;
    uint64_t detected_ns, cleared_ns;
    double slowdown;               /* of the newest evaluation that found it */
    double stored_slowdown;        /* as last noted for the store (verdict_history.h) */
    enum rs_straggler_cause cause; /* as last logged: at the raise, or the last one not unknown */
    uint64_t capture_id;           /* the capture that cause came from (0: the rule's own) */
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
    uint64_t catchup_next; /* steps below it are summarized or had their turn (the catch-up) */
    struct kept_steps kept;
    struct verdict_state *v;
    size_t n, cap;
};

/* What one evaluation found for one job (filled in the thread pool). */
struct job_result {
    char name[RS_WIRE_MAX_JOB_LEN + 1];
    bool evaluated;                    /* report holds the evaluation's answer */
    struct rs_straggler_report report; /* owned */
    struct rs_capture_cause *causes;   /* report's verdicts whose cause a capture gave (owned) */
    size_t n_causes;
    uint64_t first_ns;                 /* the job's first record time */
    uint64_t catchup_next;             /* the job's next catch-up step, for job_state */
    struct kept_steps kept; /* the evaluator's kept steps at the start, then the new ones */
};

/* A job's state when the evaluation started (moved from the loop thread's job_state). */
struct job_start {
    char name[RS_WIRE_MAX_JOB_LEN + 1];
    uint64_t next;
    struct kept_steps kept;
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
    rs_step_summaries *to_store; /* NULL: verdicts only (see rs_evaluator.storing) */
    uint64_t catchup_steps;      /* rank-steps the catch-ups loaded */
    int rc;
};

struct rs_evaluator {
    struct rs_periodic tick; /* first member: its callbacks get the owner */
    struct rs_server *srv;
    struct rs_evaluator_options o;
    bool running; /* an evaluation is in the thread pool */
    /* Summaries are with the writer: evaluations collect no more until they are stored, or they
     * would queue the same steps again behind them (step_summaries.h). */
    bool storing;
    uint64_t next_start_mono_ns; /* the share limit: no evaluation starts before this */
    struct job_state *jobs;
    size_t n_jobs;
    struct rs_evaluator_stats stats;
    struct rs_verdict_notes notes; /* this evaluation's changes, for the store */
};

static bool
busy(void *arg)
{
    const rs_evaluator *e = arg;

    return e->running || e->storing;
}

static void
evaluator_free(void *arg)
{
    rs_evaluator *e = arg;

    for (size_t i = 0; i < e->n_jobs; i++) {
        free(e->jobs[i].v);
        kept_free(&e->jobs[i].kept);
    }
    free(e->jobs);
    rs__verdict_notes_fini(&e->notes);
    free(e);
}

/* The step summaries of an evaluation are stored (loop thread). */
static void
summaries_finished(void *arg)
{
    rs_evaluator *e = arg;

    e->storing = false;
    rs__periodic_settle(&e->tick);
}

static int
collect_job(void *arg, const struct rs_job_info *job)
{
    struct run *run = arg;

    if (job->received_ns < run->active_after_ns || job->n_ranks < 2)
        return 0;
    if (RS_ARRAY_RESERVE(run->jobs, run->cap, run->n, 1) != 0)
        return -ENOMEM;
    struct job_result *res = &run->jobs[run->n];
    *res = (struct job_result){0};
    memcpy(res->name, job->name, sizeof job->name);
    res->first_ns = job->first_ns;
    res->catchup_next = UINT64_MAX; /* not seen since the start: the catch-up finds it */
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
        struct rs_rank_steps *ranks;
        size_t n_ranks;
        /* one load of the steps serves the verdict and the summaries: settled steps computed
         * from kernels are stored, so later evaluations read one value per rank-step and cost the
         * same in the job's first minute and its tenth hour; the final ones are kept, so the next
         * load reads only the steps that came since */
        int rc = rs_query_job_steps_kept(r, job->name, rs_straggler_steps_needed(&o), o.until_step,
                                         job->kept.v, job->kept.n, &ranks, &n_ranks);
        if (rc == 0) {
            if (run->to_store &&
                (rs__step_summaries_collect(run->to_store, job->name, ranks, n_ranks) != 0 ||
                 rs__step_summaries_catch_up(run->to_store, r, job->name, ranks, n_ranks,
                                             &job->catchup_next, &run->catchup_steps) != 0))
                run->rc = -ENOMEM;
            /* a rank further than the others (its agent delivered more): the rule over every
             * rank's steps up to the newest all of them have (rs_straggler_steps_misaligned) */
            struct rs_rank_steps *aligned = NULL;
            size_t n_aligned = 0;
            uint64_t common;
            if (rs_straggler_steps_misaligned(ranks, n_ranks, &o, &common) &&
                rs_query_job_steps_until(r, job->name, rs_straggler_steps_needed(&o), common,
                                         &aligned, &n_aligned) != 0)
                aligned = NULL;
            rc = rs_stragglers_evaluate(r, job->name, &o, aligned ? aligned : ranks,
                                        aligned ? n_aligned : n_ranks, &job->report);
            rs_job_steps_free(aligned, n_aligned);
            /* a verdict without kernel evidence takes its cause from a capture of its rank, as
             * the REST answer's does: one cause in the log, /metrics and REST (capture_evidence.h;
             * an error there leaves the rule's cause) */
            if (rc == 0)
                (void)rs__server_capture_causes(run->e->srv->captures, r, job->name, &o,
                                                &job->report, &job->causes, &job->n_causes);
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
        job->evaluated = true;
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
    if (RS_ARRAY_RESERVE(j->v, j->cap, j->n, 1) != 0)
        return -ENOMEM;
    j->v[j->n++] = (struct verdict_state){.rank = rank, .detected_ns = now_ns};
    return 0;
}

static bool
in_verdicts(const struct rs_straggler_report *rep, uint32_t rank)
{
    for (size_t i = 0; i < rep->n_verdicts; i++)
        if (rep->verdicts[i].rank == rank)
            return true;
    return false;
}

/* Logs a verdict: raised, or its cause changed (a summarized job's first verdicts may say
 * "unknown" until the agents' kernel windows of its steps arrive). */
static void
log_verdict(const char *job, const struct rs_straggler_verdict *v, const char *was,
            const struct rs_capture_cause *cc)
{
    uint32_t rank = v->rank;
    const char *cause = rs_straggler_cause_name(v->cause);
    char source[48] = "";

    if (cc)
        snprintf(source, sizeof source, " (from capture %llu)", (unsigned long long)cc->capture_id);
    double slower = 100 * (v->slowdown - 1);
    double impact = v->impact_pct;
    const char *action = rs_straggler_action_name(v->action);

    if (!was)
        rs_log(RS_LOG_WARN, "RS-STRAGGLER-RAISED",
               "job %s: rank %u on %s (GPU %s) is a%s %s: %+.1f%% slower, cause %s%s, "
               "impact %.1f%% of step time, action %s",
               job, rank, v->host, v->gpu_uuid,
               v->kind == RS_STRAGGLER_KIND_INTERMITTENT ? "n" : "",
               rs_straggler_kind_name(v->kind), slower, cause, source, impact, action);
    else
        rs_log(RS_LOG_WARN, "RS-STRAGGLER-CAUSE",
               "job %s: rank %u: cause %s%s (was %s): %+.1f%% slower, impact %.1f%% of step "
               "time, action %s",
               job, rank, cause, source, was, slower, impact, action);
}

/* Compares one job's new verdicts with its history: raises new ones, clears vanished ones, logs
 * changed causes. */
static void
merge_job(rs_evaluator *e, struct job_result *res, uint64_t now_ns)
{
    struct job_state *j = find_job(e, res->name);

    if (!j && !(j = add_job(e, res->name)))
        return;
    j->evaluated_ns = now_ns;
    j->catchup_next = res->catchup_next;
    kept_free(&j->kept);
    j->kept = res->kept; /* the job's now */
    res->kept = (struct kept_steps){0};
    e->stats.jobs_evaluated++;
    for (size_t i = 0; i < res->report.n_verdicts; i++) {
        const struct rs_straggler_verdict *v = &res->report.verdicts[i];
        struct verdict_state *known = active_verdict(j, v->rank);
        const struct rs_capture_cause *cc =
            rs__server_capture_cause_of(res->causes, res->n_causes, v->rank);
        if (cc && cc->pending)
            cc = NULL; /* its cause is unknown until the capture ends: not from it */
        if (!known) {
            if (add_verdict(j, v->rank, now_ns) != 0)
                continue;
            known = &j->v[j->n - 1];
            e->stats.raised++;
            log_verdict(res->name, v, NULL, cc);
            known->cause = v->cause;
            known->capture_id = cc ? cc->capture_id : 0;
        } else if (v->cause != RS_STRAGGLER_CAUSE_UNKNOWN && known->cause != v->cause) {
            /* ("unknown" again tells nothing new) */
            log_verdict(res->name, v, rs_straggler_cause_name(known->cause), cc);
            known->cause = v->cause;
            known->capture_id = cc ? cc->capture_id : 0;
        }
        known->slowdown = v->slowdown;
        /* the store hears of a raise and of a slowdown that moved half a point: the fleet
         * view's mean needs no more (a note costs a writer put) */
        if (known->stored_slowdown == 0 || fabs(known->stored_slowdown - v->slowdown) > 0.005) {
            if (rs__verdict_notes_add(&e->notes, res->name, v->rank, true, v->slowdown, now_ns) ==
                0)
                known->stored_slowdown = v->slowdown;
        }
    }
    for (size_t k = 0; k < j->n; k++) {
        if (j->v[k].cleared_ns || in_verdicts(&res->report, j->v[k].rank))
            continue;
        j->v[k].cleared_ns = now_ns;
        e->stats.cleared++;
        (void)rs__verdict_notes_add(&e->notes, res->name, j->v[k].rank, false, 0, now_ns);
        rs_log(RS_LOG_INFO, "RS-STRAGGLER-CLEARED", "job %s: rank %u is no longer a straggler",
               res->name, j->v[k].rank);
    }
    /* a verdict or suspect without per-kernel evidence: capture it (auto_capture.h) */
    rs__server_auto_capture_stragglers(e->srv, res->name, &res->report, rs_clock_realtime_ns());
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
        if (status == 0 && !e->tick.closed && run->jobs[i].evaluated)
            merge_job(e, &run->jobs[i], run->now_ns);
        rs_straggler_report_fini(&run->jobs[i].report);
        free(run->jobs[i].causes);
        kept_free(&run->jobs[i].kept);
    }
    if (!e->tick.closed)
        rs__verdict_notes_submit(e->srv, &e->notes);
    e->stats.evaluations++;
    e->stats.catchup_steps += run->catchup_steps;
    e->stats.active_stragglers = 0;
    for (size_t i = 0; i < e->n_jobs; i++)
        for (size_t k = 0; k < e->jobs[i].n; k++)
            e->stats.active_stragglers += e->jobs[i].v[k].cleared_ns == 0;
    if (run->to_store && !e->tick.closed && rs__step_summaries_submit(run->to_store) == 0) {
        run->to_store = NULL; /* the writer's task owns it now */
        e->storing = true;
    }
    rs__step_summaries_free(run->to_store);
    free(run->jobs);
    for (size_t i = 0; i < run->n_known; i++) /* jobs no longer running: nothing to keep */
        kept_free(&run->known[i].kept);
    free(run->known);
    free(run);
#ifdef __GLIBC__
    /* An evaluation frees arrays of every rank's steps (10,000 ranks x 120 steps: ~115 MB) that it
     * allocated in a pool thread's malloc arena; glibc keeps freed arena memory for reuse, and
     * with the evaluations moving between threads the heap held nearly twice the steps' size and
     * kept rising (tests/bench/soak.sh, docs/BENCHMARKS.md "Soak"). Giving it back costs
     * milliseconds every evaluate-ms. */
    malloc_trim(0);
#endif
    rs__periodic_settle(&e->tick);
}

static void
on_tick(uv_timer_t *t)
{
    rs_evaluator *e = t->data;
    struct run *run;

    if (e->running || rs_clock_mono_ns() < e->next_start_mono_ns || !(run = calloc(1, sizeof *run)))
        return;        /* the previous evaluation is still going, or took long: skip this tick */
    if (!e->storing) { /* else the verdicts only: the steps stay unsummarized until next time */
        if (!(run->to_store = rs__step_summaries_new(e->srv, summaries_finished, e))) {
            free(run);
            return;
        }
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
        rs__step_summaries_free(run->to_store);
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
    rs__periodic_init(&e->tick, &srv->loop, e, busy, evaluator_free);
    if (o->period_ms > 0)
        rs__periodic_start(&e->tick, on_tick, o->period_ms, o->period_ms);
    *out = e;
    return 0;
}

void
rs_evaluator_close(rs_evaluator *e)
{
    if (!e)
        return;
    rs__periodic_close(&e->tick);
}

/* A JSON integer, or null for 0 (unknown). */
static json_t *
time_or_null(uint64_t ns)
{
    return ns ? json_integer((json_int_t)ns) : json_null();
}

int
rs_evaluator_annotate(const rs_evaluator *e, const char *job, uint64_t since_ns,
                      const struct rs_straggler_report *rep, json_t *doc)
{
    struct job_state *j = e ? find_job(e, job) : NULL;
    json_t *verdicts = json_object_get(doc, "stragglers"), *cleared = json_array();
    uint64_t events_ns = 0;
    size_t i = 0; /* the verdict's place in doc: the ones removed go */

    if (!cleared)
        return -ENOMEM;
    for (size_t k = 0; k < rep->n_verdicts; k++) {
        const struct rs_straggler_verdict *v = &rep->verdicts[k];
        struct verdict_state *st = j ? active_verdict(j, v->rank) : NULL;
        uint64_t detected = st ? st->detected_ns : 0;
        uint64_t when = detected ? detected : v->since_ns;
        if (since_ns && when <= since_ns) {
            json_array_remove(verdicts, i);
            continue;
        }
        json_object_set_new(json_array_get(verdicts, i), "detected_ns", time_or_null(detected));
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
            struct rs_evaluator_verdict out = {e->jobs[i].name, v->rank,  v->slowdown,
                                               v->detected_ns,  v->cause, v->capture_id};
            if (seen++ < max)
                fn(arg, &out);
        }
    return seen;
}
