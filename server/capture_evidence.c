/* A verdict's cause from a capture (see capture_evidence.h). */
#include "server/capture_evidence.h"

#include "common/error.h"
#include "query/steps.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps a capture may cover (60 s of 1 ms steps): a span past it is not a capture's (the times
 * are checked when reported, captures.c; this bounds the steps read whatever they say). */
#define MAX_STEPS 60000u

/* What a capture gave, kept: a done capture's steps do not change, and applying the rule again
 * reads every rank's steps — each evaluation (every --evaluate-ms) and each answer would. Keyed by
 * the capture's id (unique across jobs); the least recently used goes. Only findings are kept
 * (a capture read too early, its last steps not stored yet, may give one later). */
#define CACHE_SLOTS 64
static struct cached {
    uint64_t capture_id, used; /* 0: empty */
    struct rs_capture_cause cc;  /* (its `without` is the caller's) */
    enum rs_straggler_cause cause;
    struct rs_straggler_kernel_evidence kernels[RS_STRAGGLER_MAX_EVIDENCE]; /* names owned */
    size_t n_kernels;
    double excess_gpu_slow_ms, excess_extra_work_ms, excess_host_side_ms;
} cache[CACHE_SLOTS];
static uint64_t cache_clock;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Keeps verdict `alt`'s cause as capture cc->capture_id's (names copied; out of memory: not kept). */
static void
cache_put(const struct rs_capture_cause *cc, const struct rs_straggler_verdict *alt)
{
    struct cached e = {cc->capture_id, 0, *cc, alt->cause, {{0}}, 0, alt->excess_gpu_slow_ms,
                       alt->excess_extra_work_ms, alt->excess_host_side_ms};

    for (size_t i = 0; i < alt->n_kernels; i++, e.n_kernels++)
        if (!(e.kernels[i] = alt->kernels[i], e.kernels[i].kernel = strdup(alt->kernels[i].kernel)))
            break;
    pthread_mutex_lock(&cache_lock);
    struct cached *slot = &cache[0];
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].capture_id == cc->capture_id || cache[i].used < slot->used) {
            slot = &cache[i];
            if (cache[i].capture_id == cc->capture_id)
                break;
        }
    for (size_t i = 0; i < slot->n_kernels; i++)
        free(slot->kernels[i].kernel);
    e.used = ++cache_clock;
    *slot = e;
    pthread_mutex_unlock(&cache_lock);
}

/* Capture `id` of `rank` kept: *v takes its cause as take_cause does (the names copied), *took
 * what it was. False when not kept (or out of memory). */
static bool cache_take(const struct rs_straggler_options *o, uint64_t id, uint32_t rank,
                       struct rs_straggler_verdict *v, struct rs_capture_cause *took);

/* The step the rank was at when the capture ended, from the report's newest window: steps are
 * taken as evenly spaced within it (an estimate; the window's own steps say how long one is). */
static uint64_t
step_at(const struct rs_straggler_report *rep, uint64_t t_ns, uint64_t *step_ns)
{
    const struct rs_straggler_span *w = &rep->window;
    uint64_t steps = w->last_step - w->first_step + 1;

    *step_ns = steps ? (w->until_ns - w->since_ns) / steps : 0;
    if (*step_ns == 0 || t_ns >= w->until_ns)
        return w->last_step;
    uint64_t back = (w->until_ns - t_ns) / *step_ns;
    return back > w->last_step ? 0 : w->last_step - back;
}

/* The action the policy of `o` gives a verdict of `cause` and `impact_pct` (query/stragglers.h:
 * drain_cause, drain_min_impact_pct). */
static enum rs_straggler_action
policy(const struct rs_straggler_options *o, enum rs_straggler_cause cause, double impact_pct)
{
    return cause == o->drain_cause && impact_pct >= o->drain_min_impact_pct
               ? RS_STRAGGLER_ACTION_DRAIN_CANDIDATE
               : RS_STRAGGLER_ACTION_OBSERVE;
}

/* Whether v's kernel evidence may be what comparing a captured rank with peers that traced
 * nothing gives: extra_work (more kernels than the peers' median; the captured healthy peer's
 * kernels make some ratios look real). A job whose ranks all trace keeps its other causes during
 * a capture. */
static bool
one_sided(const struct rs_straggler_verdict *v)
{
    return v->n_kernels > 0 && v->cause == RS_STRAGGLER_CAUSE_EXTRA_WORK;
}

/* `v` takes the cause and kernel evidence of `alt` (whose kernel names move to v). */
static void
take_cause(const struct rs_straggler_options *o, struct rs_straggler_verdict *v,
           struct rs_straggler_verdict *alt)
{
    /* a drain candidate for another reason than its cause (its GPU's errors) stays one */
    bool drain_otherwise = v->action == RS_STRAGGLER_ACTION_DRAIN_CANDIDATE &&
                           policy(o, v->cause, v->impact_pct) != RS_STRAGGLER_ACTION_DRAIN_CANDIDATE;

    v->cause = alt->cause;
    for (size_t k = 0; k < v->n_kernels; k++) /* the evidence it replaces (a window's, one-sided) */
        free(v->kernels[k].kernel);
    memcpy(v->kernels, alt->kernels, sizeof v->kernels);
    v->n_kernels = alt->n_kernels;
    alt->n_kernels = 0;
    v->excess_gpu_slow_ms = alt->excess_gpu_slow_ms;
    v->excess_extra_work_ms = alt->excess_extra_work_ms;
    v->excess_host_side_ms = alt->excess_host_side_ms;
    v->action = drain_otherwise ? RS_STRAGGLER_ACTION_DRAIN_CANDIDATE
                                : policy(o, v->cause, v->impact_pct);
}

/* The rule over the capture's steps of the ranks captured then (the suspect and its healthy peer:
 * the others have no kernels there, and would read as ranks that run less); when it finds the
 * rank with kernel evidence, `v` takes its cause (take_cause) and *took is set. */
static int
from_capture(rs_captures *cs, rs_store_read *r, const char *job,
             const struct rs_straggler_options *o, const struct rs_straggler_report *rep,
             const struct rs_capture_info *c, struct rs_straggler_verdict *v,
             struct rs_capture_cause *took, bool *taken)
{
    struct rs_straggler_options co = *o;
    struct rs_straggler_report alt = {0};
    uint64_t step_ns, end = step_at(rep, c->ended_ns, &step_ns);
    uint64_t steps =
        step_ns && c->ended_ns > c->started_ns ? (c->ended_ns - c->started_ns) / step_ns : 0;
    int rc;

    *taken = false;
    if (steps < 8 || steps > MAX_STEPS)
        return 0; /* too few steps traced for two windows of four; or more than a capture holds */
    co.window_steps = steps / co.windows_required;
    co.window_s = 0;
    co.fit_short = false;
    co.until_step = end;
    uint32_t captured[64];
    uint32_t n_captured =
        rs_captures_ranks_during(cs, job, c->started_ns, c->ended_ns, captured, 64);
    struct rs_rank_steps *ranks;
    size_t n, k = 0;
    if (n_captured < 2)
        return 0; /* no peer traced with it: nothing to compare its kernels with */
    if ((rc = rs_query_job_steps_until(r, job, rs_straggler_steps_needed(&co), co.until_step,
                                       &ranks, &n)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc;
    for (size_t i = 0; i < n; i++) /* the captured ranks first; all n are freed below */
        for (uint32_t j = 0; j < n_captured; j++)
            if (ranks[i].rank == captured[j]) {
                struct rs_rank_steps t = ranks[k];
                ranks[k++] = ranks[i];
                ranks[i] = t;
                break;
            }
    rc = k >= 2 ? rs_stragglers_evaluate(r, job, &co, ranks, k, &alt) : RS_E_NOT_FOUND;
    rs_job_steps_free(ranks, n);
    if (rc != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc;
    for (size_t i = 0; i < alt.n_verdicts && !*taken; i++) {
        if (alt.verdicts[i].rank != c->rank || alt.verdicts[i].n_kernels == 0)
            continue;
        *took = (struct rs_capture_cause){c->rank,           c->id,
                                          c->started_ns,     c->ended_ns,
                                          alt.window.first_step, alt.window.last_step,
                                          v->cause,          false};
        cache_put(took, &alt.verdicts[i]);
        take_cause(o, v, &alt.verdicts[i]);
        *taken = true;
    }
    rs_straggler_report_fini(&alt);
    return 0;
}

int
rs__server_capture_causes(rs_captures *cs, rs_store_read *r, const char *job,
                          const struct rs_straggler_options *o, struct rs_straggler_report *rep,
                          struct rs_capture_cause **out, size_t *n_out)
{
    struct rs_capture_cause *cc = NULL;
    size_t n = 0;
    int rc = 0;

    *out = NULL;
    *n_out = 0;
    if (!cs || !rep->has_window)
        return 0;
    for (size_t i = 0; i < rep->n_verdicts && rc == 0; i++) {
        struct rs_straggler_verdict *v = &rep->verdicts[i];
        struct rs_capture_info c;
        struct rs_capture_cause took;
        bool taken;
        if (rs_captures_latest_done(cs, job, v->rank, RS_CAPTURE_KERNELS, 0, &c) != 0) {
            if (one_sided(v) &&
                rs_captures_running_before(cs, job, v->rank, rep->window.until_ns, &c) == 0) {
                if (!cc && !(cc = calloc(rep->n_verdicts, sizeof *cc))) {
                    rc = -ENOMEM;
                    break;
                }
                cc[n++] = (struct rs_capture_cause){.rank = v->rank,
                                                    .capture_id = c.id,
                                                    .started_ns = c.started_ns,
                                                    .without = v->cause,
                                                    .pending = true};
                struct rs_straggler_verdict none = {.cause = RS_STRAGGLER_CAUSE_UNKNOWN};
                take_cause(o, v, &none);
            }
            continue;
        }
        /* kernel evidence of the newest window that a capture of the rank overlaps compared its
         * captured kernels with peers that had none there (extra_work, wrongly): the capture's
         * own comparison replaces it too */
        if (v->n_kernels > 0 && (!one_sided(v) || c.started_ns >= rep->window.until_ns ||
                                 c.ended_ns <= rep->window.since_ns))
            continue;
        if (!cc && !(cc = calloc(rep->n_verdicts, sizeof *cc))) {
            rc = -ENOMEM;
            break;
        }
        if (cache_take(o, c.id, v->rank, v, &took))
            cc[n++] = took;
        else if ((rc = from_capture(cs, r, job, o, rep, &c, v, &took, &taken)) == 0 && taken)
            cc[n++] = took;
    }
    for (size_t i = 0; n > 0 && i < rep->n_verdicts; i++) /* the strongest action, again */
        if (i == 0 || rep->verdicts[i].action > rep->action)
            rep->action = rep->verdicts[i].action;
    if (n == 0) {
        free(cc);
        cc = NULL;
    }
    *out = cc;
    *n_out = n;
    return rc;
}

static bool
cache_take(const struct rs_straggler_options *o, uint64_t id, uint32_t rank,
           struct rs_straggler_verdict *v, struct rs_capture_cause *took)
{
    struct rs_straggler_verdict alt = {0};
    bool hit = false;

    pthread_mutex_lock(&cache_lock);
    for (size_t i = 0; i < CACHE_SLOTS && !hit; i++) {
        struct cached *e = &cache[i];
        if (e->capture_id != id || e->cc.rank != rank)
            continue;
        hit = true;
        e->used = ++cache_clock;
        *took = e->cc;
        alt.cause = e->cause;
        alt.excess_gpu_slow_ms = e->excess_gpu_slow_ms;
        alt.excess_extra_work_ms = e->excess_extra_work_ms;
        alt.excess_host_side_ms = e->excess_host_side_ms;
        for (size_t k = 0; k < e->n_kernels && hit; k++, alt.n_kernels++)
            if (!(alt.kernels[k] = e->kernels[k],
                  alt.kernels[k].kernel = strdup(e->kernels[k].kernel)))
                hit = false;
    }
    pthread_mutex_unlock(&cache_lock);
    if (!hit) {
        for (size_t k = 0; k < alt.n_kernels; k++)
            free(alt.kernels[k].kernel);
        return false;
    }
    took->without = v->cause;
    take_cause(o, v, &alt);
    return true;
}

const struct rs_capture_cause *
rs__server_capture_cause_of(const struct rs_capture_cause *cc, size_t n, uint32_t rank)
{
    for (size_t i = 0; i < n; i++)
        if (cc[i].rank == rank)
            return &cc[i];
    return NULL;
}

int
rs__server_capture_causes_json(const struct rs_capture_cause *cc, size_t n, json_t *doc)
{
    json_t *list = json_object_get(doc, "stragglers"), *v;
    size_t i;
    char source[80];

    json_array_foreach(list, i, v)
    {
        const struct rs_capture_cause *c =
            rs__server_capture_cause_of(cc, n, (uint32_t)json_integer_value(json_object_get(v, "rank")));
        if (!c)
            continue;
        if (c->pending)
            snprintf(source, sizeof source, "capture %llu running: the cause waits for its end",
                     (unsigned long long)c->capture_id);
        else
            snprintf(source, sizeof source, "from capture %llu", (unsigned long long)c->capture_id);
        if (json_object_set_new(v, "cause_without_capture",
                                json_string(rs_straggler_cause_name(c->without))) != 0 ||
            json_object_set_new(v, "evidence_source", json_string(source)) != 0 ||
            json_object_set_new(
                v, "capture",
                c->pending ? json_pack("{s:I,s:I}", "id", (json_int_t)c->capture_id, "started_ns",
                                       (json_int_t)c->started_ns)
                           : json_pack("{s:I,s:I,s:I,s:I,s:I}", "id", (json_int_t)c->capture_id,
                                       "started_ns", (json_int_t)c->started_ns, "ended_ns",
                                       (json_int_t)c->ended_ns, "first_step",
                                       (json_int_t)c->first_step, "last_step",
                                       (json_int_t)c->last_step)) != 0)
            return -ENOMEM;
    }
    return 0;
}
