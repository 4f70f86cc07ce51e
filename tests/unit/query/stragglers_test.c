/* Unit tests of the straggler rule on synthetic jobs (tests/straggler_fixture.h): 3 ranks, 90
 * steps; a rank whose kernels run 10% longer (gpu_slow), a rank that starts its kernels 100 us late
 * every step (host_side), and a job without a fault (no verdict); the typed report, its JSON and
 * the action policy of the options. */
#include "common/error.h"
#include "query/stragglers.h"
#include "tests/store_fixture.h"
#include "tests/straggler_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"
#include "tests/t_noise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 90

/* The fault from step `onset` on (0: from the start). */
static void
put_job_from(rs_store *st, const char *job, enum t_fault fault, uint32_t bad_rank, uint32_t onset)
{
    t_straggler_put(st, job, fault, bad_rank, onset, 0, STEPS);
}

static void
put_job(rs_store *st, const char *job, enum t_fault fault, uint32_t bad_rank)
{
    put_job_from(st, job, fault, bad_rank, 0);
}

static json_t *
verdicts(rs_store_read *r, const char *job)
{
    struct rs_straggler_options o;
    json_t *doc = NULL;

    rs_straggler_options_default(&o);
    T_EQ(rs_query_stragglers(r, job, &o, &doc), 0);
    return doc;
}

static void
rule(void)
{
    char dir[] = "/tmp/rs-straggle-XXXXXX";
    rs_store *st = NULL;
    rs_store_read *r;
    json_t *d, *v;

    st = t_store_open(dir, NULL);
    put_job(st, "gpu", T_SLOW_GPU, 2);
    put_job(st, "host", T_LATE_HOST, 1);
    put_job(st, "clean", T_NO_FAULT, 0);
    put_job_from(st, "onset", T_SLOW_GPU, 2, 37);
    T_EQ(rs_store_read_begin(st, &r), 0);

    d = verdicts(r, "gpu");
    T_EQ(json_array_size(json_object_get(d, "stragglers")), 1);
    v = json_array_get(json_object_get(d, "stragglers"), 0);
    T_EQ(json_integer_value(json_object_get(v, "rank")), 2);
    T_CHECK(v && strcmp(json_string_value(json_object_get(v, "cause")), "gpu_slow") == 0);
    T_CHECK(v &&
            !json_object_get(json_array_get(json_object_get(v, "evidence"), 0), "launch_wait_ms"));
    /* compute + host gap: (2 x 275 + 10) / (2 x 250 + 10) = 1.098 */
    T_CHECK(v && json_real_value(json_object_get(v, "slowdown")) > 1.09 &&
            json_real_value(json_object_get(v, "slowdown")) < 1.11);
    T_CHECK(v && json_real_value(json_object_get(v, "last_frac")) == 1.0);
    T_EQ(json_integer_value(json_object_get(v, "windows")), 3); /* all 90 steps = 3 windows */
    T_EQ(json_integer_value(json_object_get(v, "since_step")), 0);
    json_decref(d);

    d = verdicts(r, "host");
    v = json_array_get(json_object_get(d, "stragglers"), 0);
    T_EQ(json_array_size(json_object_get(d, "stragglers")), 1);
    T_EQ(json_integer_value(json_object_get(v, "rank")), 1);
    T_CHECK(v && strcmp(json_string_value(json_object_get(v, "cause")), "host_side") == 0);
    json_t *e = json_array_get(json_object_get(v, "evidence"), 0);
    T_CHECK(e && json_real_value(json_object_get(e, "host_gap_ms")) > 0.109 &&
            json_real_value(json_object_get(e, "host_gap_ms")) < 0.111);
    T_CHECK(e && json_real_value(json_object_get(e, "launch_wait_ms")) > 0.099 &&
            json_real_value(json_object_get(e, "launch_wait_ms")) < 0.101);
    T_CHECK(e && json_real_value(json_object_get(e, "peers_launch_wait_ms")) > 0.0049 &&
            json_real_value(json_object_get(e, "peers_launch_wait_ms")) < 0.0051);
    json_decref(d);

    d = verdicts(r, "clean");
    T_EQ(json_array_size(json_object_get(d, "stragglers")), 0);
    T_CHECK(strncmp(json_string_value(json_object_get(d, "summary")), "no straggler", 12) == 0);
    json_decref(d);

    /* slow from step 37: the rule holds from window 30..59 (23 slow steps of 30), the onset is
     * found per step, over windows 0..29 and 30..59; the windows are named */
    d = verdicts(r, "onset");
    v = json_array_get(json_object_get(d, "stragglers"), 0);
    T_EQ(json_array_size(json_object_get(d, "stragglers")), 1);
    T_EQ(json_integer_value(json_object_get(v, "since_step")), 37); /* the onset */
    json_t *o = json_object_get(v, "onset");
    T_EQ(json_integer_value(json_object_get(o, "step")), 37);
    T_EQ(json_integer_value(json_object_get(o, "searched_from_step")), 0);
    T_EQ(json_integer_value(json_object_get(o, "searched_to_step")), 59);
    T_EQ(json_integer_value(json_object_get(o, "steps_disagreeing")), 0);
    T_CHECK(json_is_false(json_object_get(o, "before_search")));
    T_EQ(json_integer_value(json_object_get(json_object_get(d, "window"), "first_step")), 60);
    T_EQ(json_integer_value(json_object_get(json_object_get(d, "window"), "last_step")), 89);
    T_EQ(json_integer_value(json_object_get(v, "instances")), 30);
    T_EQ(json_integer_value(json_object_get(json_object_get(v, "impact_window"), "first_step")),
         30);
    json_decref(d);
    /* a fault from the first step: the onset may be older than what was searched */
    d = verdicts(r, "gpu");
    o = json_object_get(json_array_get(json_object_get(d, "stragglers"), 0), "onset");
    T_EQ(json_integer_value(json_object_get(o, "step")), 0);
    T_CHECK(json_is_true(json_object_get(o, "before_search")));
    json_decref(d);

    T_EQ(rs_query_stragglers(r, "nope", NULL, &d), RS_E_NOT_FOUND);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* The action of job's one verdict, and of the report, under a drain policy. */
static void
policy(rs_store_read *r, const char *job, enum rs_straggler_cause drain_cause, double min_pct,
       enum rs_straggler_action want)
{
    struct rs_straggler_options o;
    struct rs_straggler_report rep;

    rs_straggler_options_default(&o);
    o.drain_cause = drain_cause;
    o.drain_min_impact_pct = min_pct;
    T_OK(rs_stragglers_evaluate_job(r, job, &o, &rep));
    T_EQ(rep.n_verdicts, 1);
    T_EQ(rep.n_verdicts ? rep.verdicts[0].action : RS_STRAGGLER_ACTION_NONE, want);
    T_EQ(rep.action, want);
    rs_straggler_report_fini(&rep);
}

/* The typed report: its figures, its JSON (the answer rs_query_stragglers gives), and the action
 * policy named in the options. */
static void
typed(void)
{
    char dir[] = "/tmp/rs-straggle-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_straggler_options o;
    struct rs_straggler_report rep;
    rs_store_read *r;
    json_t *doc = NULL, *built;

    put_job(st, "gpu", T_SLOW_GPU, 2);
    put_job(st, "host", T_LATE_HOST, 1);
    put_job(st, "clean", T_NO_FAULT, 0);
    T_EQ(rs_store_read_begin(st, &r), 0);
    rs_straggler_options_default(&o);
    T_EQ(o.drain_cause, RS_STRAGGLER_CAUSE_GPU_SLOW);
    T_CHECK(o.drain_min_impact_pct == 5);

    T_EQ(rs_stragglers_evaluate_job(r, "gpu", &o, &rep), 0);
    T_EQ(rep.n_verdicts, 1);
    T_EQ(rep.n_ranks, T_STRAGGLER_RANKS);
    T_CHECK(rep.enough_data && rep.has_window && rep.window_steps == 30);
    T_EQ(rep.window_choice, RS_STRAGGLER_WINDOW_DEFAULT);
    const struct rs_straggler_verdict *v = rep.n_verdicts ? &rep.verdicts[0] : NULL;
    T_CHECK(v && v->rank == 2 && v->cause == RS_STRAGGLER_CAUSE_GPU_SLOW);
    T_CHECK(v && v->slowdown > 1.09 && v->slowdown < 1.11 && v->last_frac == 1.0);
    T_CHECK(v && v->slowdown == rep.ranks[2].slowdown && v->last_frac == rep.ranks[2].last_frac);
    T_CHECK(v && v->n_kernels > 0 && strcmp(v->kernels[0].kernel, "gemm") == 0);
    T_CHECK(v && v->onset.known && v->onset.before_search && v->windows == 3);
    /* the JSON at the edge is the answer of rs_query_stragglers, figure for figure */
    T_EQ(rs_query_stragglers(r, "gpu", &o, &doc), 0);
    built = rs_straggler_report_json(&rep);
    T_CHECK(built && doc && json_equal(built, doc));
    json_t *jv = json_array_get(json_object_get(built, "stragglers"), 0);
    T_CHECK(v && json_real_value(json_object_get(jv, "slowdown")) == v->slowdown);
    T_CHECK(v && strcmp(json_string_value(json_object_get(jv, "action")),
                        rs_straggler_action_name(v->action)) == 0);
    json_decref(built);
    json_decref(doc);
    rs_straggler_report_fini(&rep);
    rs_straggler_report_fini(&rep); /* idempotent */

    T_EQ(rs_stragglers_evaluate_job(r, "clean", &o, &rep), 0);
    T_CHECK(rep.n_verdicts == 0 && rep.action == RS_STRAGGLER_ACTION_NONE);
    T_CHECK(strcmp(rs_straggler_action_name(rep.action), "none") == 0);
    rs_straggler_report_fini(&rep);

    /* the policy: drain_cause and drain_min_impact_pct decide, in one place */
    policy(r, "gpu", RS_STRAGGLER_CAUSE_GPU_SLOW, 0, RS_STRAGGLER_ACTION_DRAIN_CANDIDATE);
    policy(r, "gpu", RS_STRAGGLER_CAUSE_GPU_SLOW, 1e9, RS_STRAGGLER_ACTION_OBSERVE);
    policy(r, "gpu", RS_STRAGGLER_CAUSE_HOST_SIDE, 0, RS_STRAGGLER_ACTION_OBSERVE);
    policy(r, "host", RS_STRAGGLER_CAUSE_HOST_SIDE, 0, RS_STRAGGLER_ACTION_DRAIN_CANDIDATE);
    policy(r, "host", RS_STRAGGLER_CAUSE_GPU_SLOW, 0, RS_STRAGGLER_ACTION_OBSERVE);

    T_EQ(rs_stragglers_evaluate_job(r, "nope", &o, &rep), RS_E_NOT_FOUND);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* Step summaries of a job whose buckets go back to back after the backward pass, built by hand:
 * 8 ranks, 60 steps of 4 collectives; ranks in `slow` (a bit mask) compute 8% longer. Per step the
 * slow ranks (taking turns when there are two) arrive last at the first collective only, where the
 * others wait 2.4 ms; the other three start together and cost 5 us of waiting, spread round-robin
 * over all ranks. Returns the ranks (caller frees the steps). */
#define BTB_RANKS 8
#define BTB_STEPS 60
static struct rs_rank_steps *
back_to_back(unsigned slow)
{
    struct rs_rank_steps *rk = calloc(BTB_RANKS, sizeof *rk);
    unsigned n_slow = (unsigned)__builtin_popcount(slow), turn = 0;

    for (uint32_t r = 0; rk && r < BTB_RANKS; r++) {
        rk[r].rank = r;
        rk[r].n = BTB_STEPS;
        rk[r].steps = calloc(BTB_STEPS, sizeof *rk[r].steps);
    }
    for (uint32_t i = 0; rk && i < BTB_STEPS; i++) {
        uint32_t first_last = 0; /* the rank last at the group's first collective */
        if (n_slow) {
            unsigned k = turn++ % n_slow;
            for (uint32_t r = 0; r < BTB_RANKS; r++)
                if ((slow >> r & 1) && k-- == 0)
                    first_last = r;
        } else
            first_last = i % BTB_RANKS;
        for (uint32_t r = 0; r < BTB_RANKS; r++) {
            struct rs_step_summary *st = &rk[r].steps[i];
            uint64_t work = (slow >> r & 1) ? 32400 * T_US : 30000 * T_US;
            *st = (struct rs_step_summary){.step = i,
                                           .start_ns = i * 40000000ull,
                                           .end_ns = i * 40000000ull + 39000000ull,
                                           .step_ns = 39000000ull,
                                           .compute_ns = work,
                                           .instances = 4};
            if (r == first_last) {
                st->last_arrivals++;
                st->peer_wait_ns += 2400 * T_US;
            }
            for (uint32_t c = 1; c < 4; c++)
                if ((i * 3 + c) % BTB_RANKS == r) {
                    st->last_arrivals++;
                    st->peer_wait_ns += 5 * T_US;
                }
        }
    }
    return rk;
}

/* The share of the others' waiting a rank caused names it where the share of last arrivals
 * cannot: back-to-back buckets, one slow rank or two late together; nobody in a fault-free job. */
static void
back_to_back_buckets(void)
{
    struct rs_straggler_options o;
    static const unsigned cases[] = {1u << 5, 1u << 2 | 1u << 6, 0};
    char dir[] = "/tmp/rs-stragglers-btb-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;

    rs_straggler_options_default(&o);
    for (uint32_t i = 0; i < BTB_RANKS; i++) { /* the job and its ranks exist; no records */
        struct rs_rank_batch rb = {.identity = T_IDENTITY("btb", i, BTB_RANKS, "GPU")};
        t_store_put(st, &rb, 1);
    }
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct rs_rank_steps *rk = back_to_back(cases[k]);
        struct rs_straggler_report rep = {0};
        T_OK(rs_store_read_begin(st, &r));
        T_OK(rs_stragglers_evaluate(r, "btb", &o, rk, BTB_RANKS, &rep));
        rs_store_read_end(r);
        unsigned named = 0;
        for (size_t v = 0; v < rep.n_verdicts; v++) {
            named |= 1u << rep.verdicts[v].rank;
            T_CHECK(rep.verdicts[v].last_frac < 0.5); /* last at 1 of 4, or fewer */
            T_CHECK(rep.verdicts[v].wait_share > 0.4);
        }
        T_EQ(named, cases[k]);
        json_t *doc = rs_straggler_report_json(&rep); /* and it is in the API's answer */
        json_t *first = json_array_get(json_object_get(doc, "stragglers"), 0);
        T_CHECK(doc && (!first || json_is_real(json_object_get(first, "wait_share"))));
        json_decref(doc);
        rs_straggler_report_fini(&rep);
        for (uint32_t i = 0; i < BTB_RANKS; i++)
            free(rk[i].steps);
        free(rk);
    }
    t_store_remove(st, dir);
}

/* A hand-built job of step summaries (physics of a synchronous job, not the rule's): every rank's
 * work per step is 30 ms x its factor x a constant per-GPU noise (±0.4%) x per-step noise (±0.2%);
 * its NCCL time 4 ms plus its wait for the step's latest rank; 4 collectives per step; at the first
 * the rank of `late()` arrives last and the others wait 2.4 ms for it (at all 4 when `every` —
 * buckets interleaved with backward — else the other 3 cost 5 us of waiting spread round-robin,
 * buckets back to back); 1 ms host gap before every step's first kernel. */
struct job_model {
    size_t n_ranks, n_steps;
    double (*factor)(const struct job_model *m, uint32_t r, uint32_t step);
    uint32_t (*late)(const struct job_model *m, uint32_t step);
    bool every;
    uint32_t slow[4]; /* for the callbacks */
    size_t n_slow;
    double slow_factor[4];
    uint32_t onset;
};

static struct rs_rank_steps *
model_steps(const struct job_model *m)
{
    struct rs_rank_steps *rk = calloc(m->n_ranks, sizeof *rk);
    for (uint32_t r = 0; r < m->n_ranks; r++) {
        rk[r].rank = r;
        rk[r].n = m->n_steps;
        rk[r].steps = calloc(m->n_steps, sizeof *rk[r].steps);
    }
    for (uint32_t i = 0; i < m->n_steps; i++) {
        uint32_t late = m->late(m, i);
        double latest = 0;
        for (uint32_t r = 0; r < m->n_ranks; r++) {
            double f = m->factor(m, r, i) * (1 + 0.004 * t_noise(r)) *
                       (1 + 0.002 * t_noise(1000003ull * i + r));
            latest = f > latest ? f : latest;
        }
        for (uint32_t r = 0; r < m->n_ranks; r++) {
            double f = m->factor(m, r, i) * (1 + 0.004 * t_noise(r)) *
                       (1 + 0.002 * t_noise(1000003ull * i + r));
            struct rs_step_summary *st = &rk[r].steps[i];
            *st = (struct rs_step_summary){.step = i,
                                           .start_ns = i * 40000000ull,
                                           .end_ns = i * 40000000ull + 39000000ull,
                                           .step_ns = 39000000ull,
                                           .compute_ns = (uint64_t)(30000 * T_US * f),
                                           .host_gap_ns = 1000 * T_US,
                                           /* 4 ms of transfer, and the wait for the latest */
                                           .comm_ns =
                                               (uint64_t)((4000 + 30000 * (latest - f)) * T_US),
                                           .instances = 4};
            for (uint32_t c = 0; c < 4; c++) {
                bool last = c == 0 || m->every ? r == late : (i * 3 + c) % m->n_ranks == r;
                if (last) {
                    st->last_arrivals++;
                    st->peer_wait_ns += c == 0 || m->every ? 2400 * T_US : 5 * T_US;
                }
            }
        }
    }
    return rk;
}

static double
slow_from_onset(const struct job_model *m, uint32_t r, uint32_t step)
{
    for (size_t k = 0; k < m->n_slow; k++)
        if (m->slow[k] == r && step >= m->onset)
            return m->slow_factor[k];
    return 1.0;
}

/* The slowest rank arrives last; a noise rank (round-robin) when none is slow. */
static uint32_t
slowest_late(const struct job_model *m, uint32_t step)
{
    double best = 1.0;
    uint32_t who = step % m->n_ranks;
    for (size_t k = 0; k < m->n_slow; k++)
        if (step >= m->onset && m->slow_factor[k] > best) {
            best = m->slow_factor[k];
            who = m->slow[k];
        }
    return who;
}

static uint32_t
round_robin_late(const struct job_model *m, uint32_t step)
{
    return (step * 5 + 1) % m->n_ranks;
}

/* Evaluates the model's job (ranks already in the store as "model" with m->n_ranks ranks). */
static void
model_evaluate(rs_store *st, const struct job_model *m, struct rs_straggler_report *rep)
{
    struct rs_straggler_options o;
    rs_store_read *r;
    struct rs_rank_steps *rk = model_steps(m);

    rs_straggler_options_default(&o);
    *rep = (struct rs_straggler_report){0};
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs_stragglers_evaluate(r, "model", &o, rk, m->n_ranks, rep));
    rs_store_read_end(r);
    for (uint32_t i = 0; i < m->n_ranks; i++)
        free(rk[i].steps);
    free(rk);
}

static unsigned long long
named_mask(const struct rs_straggler_report *rep)
{
    unsigned long long mask = 0;
    for (size_t v = 0; v < rep->n_verdicts; v++)
        mask |= 1ull << rep->verdicts[v].rank;
    return mask;
}

#define MODEL_RANKS 40
static rs_store *
model_store(char *dir)
{
    rs_store *st = t_store_open(dir, NULL);
    for (uint32_t i = 0; i < MODEL_RANKS; i++) {
        struct rs_rank_batch rb = {.identity = T_IDENTITY("model", i, MODEL_RANKS, "GPU")};
        t_store_put(st, &rb, 1);
    }
    return st;
}

/* Several slow ranks (5% of 40): both named though the slower one hides the other (last at every
 * step: the other's lateness shows only as less waiting in its collectives); and a fault-free
 * 40-rank job with noise: nothing named, no suspect. */
static void
several_stragglers(void)
{
    char dir[] = "/tmp/rs-stragglers-several-XXXXXX";
    rs_store *st = model_store(dir);
    struct rs_straggler_report rep;
    struct job_model m = {MODEL_RANKS,  90, slow_from_onset, slowest_late, false, {7, 23}, 2,
                          {1.08, 1.06}, 0};

    model_evaluate(st, &m, &rep);
    T_EQ(named_mask(&rep), 1ull << 7 | 1ull << 23);
    T_EQ(rep.n_suspects, 0);
    for (size_t v = 0; v < rep.n_verdicts; v++) {
        T_EQ(rep.verdicts[v].kind, RS_STRAGGLER_KIND_STEADY);
        /* each against its clean peers, not a reference raised by the other */
        double want = rep.verdicts[v].rank == 7 ? 1.08 : 1.06;
        T_CHECK(rep.verdicts[v].slowdown > want - 0.01 && rep.verdicts[v].slowdown < want + 0.01);
        /* rank 23 is never last and causes no wait: its evidence is its NCCL time, 1.8 ms per
         * step below the others' for 1.8 ms of excess work — a confidence as high as rank 7's
         * (margin 1, separation 1, 3 windows: 0.9), not 0 */
        T_CHECK(rep.verdicts[v].confidence >= 0.85);
    }
    rs_straggler_report_fini(&rep);

    m.n_slow = 0; /* fault-free, noise only */
    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    T_EQ(rep.n_suspects, 0);
    rs_straggler_report_fini(&rep);
    t_store_remove(st, dir);
}

/* Near the threshold: a rank measured 2% slower (a 3% fault under interference) and last at every
 * collective is named; as slow but last no more than the others, neither named nor suspect; 0.9%
 * slower and last everywhere, a suspect only. */
static void
near_threshold(void)
{
    char dir[] = "/tmp/rs-stragglers-near-XXXXXX";
    rs_store *st = model_store(dir);
    struct rs_straggler_report rep;
    struct job_model m = {MODEL_RANKS, 90, slow_from_onset, slowest_late, true, {3}, 1, {1.02}, 0};

    model_evaluate(st, &m, &rep);
    T_EQ(named_mask(&rep), 1ull << 3);
    T_CHECK(rep.n_verdicts == 1 && rep.verdicts[0].slowdown < 1.03);
    T_CHECK(rep.n_verdicts == 1 && rep.verdicts[0].confidence < 0.9); /* a small margin */
    rs_straggler_report_fini(&rep);

    m.late = round_robin_late;
    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    T_EQ(rep.n_suspects, 0);
    rs_straggler_report_fini(&rep);

    m.late = slowest_late;
    m.slow_factor[0] = 1.009;
    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    T_EQ(rep.n_suspects, 1);
    T_CHECK(rep.n_suspects == 1 && rep.suspects[0].rank == 3 && rep.suspects[0].last_frac > 0.9);
    json_t *doc = rs_straggler_report_json(&rep);
    json_t *sus = json_array_get(json_object_get(doc, "suspects"), 0);
    T_CHECK(json_is_string(json_object_get(sus, "reason")));
    json_decref(doc);
    rs_straggler_report_fini(&rep);
    t_store_remove(st, dir);
}

/* 2 ranks: the slower one is last everywhere whatever it is, so a 1% difference (within the spread
 * of two healthy GPUs) is neither a verdict nor a suspect; 2.5% slower in the newest window only,
 * a suspect ("newest window only"); 2.5% slower from the first step (no rise: a pair whose GPUs
 * differ by that much, as ddp_tracegen's fault-free pair of seed 53 measured 1.86%), a suspect
 * below the threshold, not a verdict; 3.5% from the first step, a verdict. */
static void
two_ranks(void)
{
    char dir[] = "/tmp/rs-stragglers-two-XXXXXX";
    rs_store *st = model_store(dir);
    struct rs_straggler_report rep;
    struct job_model m = {2, 90, slow_from_onset, slowest_late, true, {1}, 1, {1.01}, 0};

    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    T_EQ(rep.n_suspects, 0);
    rs_straggler_report_fini(&rep);

    m.slow_factor[0] = 1.025;
    m.onset = 70; /* windows [60, 89] and [30, 59]: slow on 20 of the newest's 30 steps */
    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    T_EQ(rep.n_suspects, 1);
    T_CHECK(rep.n_suspects == 1 && rep.suspects[0].rank == 1 &&
            strcmp(rep.suspects[0].reason, "meets the rule in the newest window only") == 0);
    rs_straggler_report_fini(&rep);

    m.onset = 0;
    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    T_EQ(rep.n_suspects, 1);
    T_CHECK(rep.n_suspects == 1 && rep.suspects[0].rank == 1 &&
            strcmp(rep.suspects[0].reason, "slower than its peers by less than the threshold") ==
                0);
    rs_straggler_report_fini(&rep);

    m.slow_factor[0] = 1.035;
    model_evaluate(st, &m, &rep);
    T_EQ(named_mask(&rep), 1ull << 1);
    T_EQ(rep.n_suspects, 0);
    rs_straggler_report_fini(&rep);
    t_store_remove(st, dir);
}

/* 2 ranks, a GPU that became slower: rank 1 1.5% slower than rank 0 from step 20 (below the 1.8%
 * that separates 2 ranks) is named — its work over its peer's rose at step 20, which two healthy
 * GPUs' constant spread does not do; the same 1.5% from step 0 (no rise) is not, nor a rise of
 * 1% (below 0.4 x threshold). */
static void
two_ranks_rise(void)
{
    char dir[] = "/tmp/rs-stragglers-rise-XXXXXX";
    rs_store *st = model_store(dir);
    struct rs_straggler_report rep;
    struct job_model m = {2, 90, slow_from_onset, slowest_late, true, {1}, 1, {1.015}, 20};

    model_evaluate(st, &m, &rep);
    T_EQ(named_mask(&rep), 1ull << 1);
    T_CHECK(rep.n_verdicts == 1 && rep.verdicts[0].slowdown - 1.0 < 0.018 &&
            rep.verdicts[0].since_step == 20);
    rs_straggler_report_fini(&rep);

    m.onset = 0;
    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    rs_straggler_report_fini(&rep);

    m.onset = 20;
    m.slow_factor[0] = 1.01;
    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    rs_straggler_report_fini(&rep);
    t_store_remove(st, dir);
}

/* since in GPU time: slow from step 37; the host marks each step 1 ms before its GPU starts it
 * (host gap), so since_ns is step 37's start + 1 ms, and since_step the onset itself, not the
 * oldest window's first step. A clear 10% straggler in a long run: confidence >= 0.9. */
static void
since_gpu_time(void)
{
    char dir[] = "/tmp/rs-stragglers-since-XXXXXX";
    rs_store *st = model_store(dir);
    struct rs_straggler_report rep;
    struct job_model m = {MODEL_RANKS, 150, slow_from_onset, slowest_late, true, {11}, 1,
                          {1.10},      37};

    model_evaluate(st, &m, &rep);
    T_EQ(named_mask(&rep), 1ull << 11);
    if (rep.n_verdicts == 1) {
        T_EQ(rep.verdicts[0].since_step, 37);
        T_EQ(rep.verdicts[0].since_ns, 37 * 40000000ull + 1000 * T_US);
        T_CHECK(rep.verdicts[0].confidence >= 0.9);
    }
    rs_straggler_report_fini(&rep);
    t_store_remove(st, dir);
}

/* A rank 50% slower on every 4th step: a verdict of kind intermittent with its duty; random
 * spikes (2% of rank-steps, 40% slower) spread over the ranks, or one block of slow steps (a
 * straggler that recovered): none. */
static double
every_fourth(const struct job_model *m, uint32_t r, uint32_t step)
{
    return r == m->slow[0] && step % 4 == 1 ? 1.5 : 1.0;
}

static double
spiky(const struct job_model *m, uint32_t r, uint32_t step)
{
    (void)m;
    return t_noise(7919ull * step + 104729ull * r + 1) > 0.96 ? 1.4 : 1.0;
}

/* 50% slower on every 4th step and 1.5% on the others: the slow steps lift its median past
 * 0.4 x threshold, and it is last everywhere (strong evidence) */
static double
every_fourth_lifted(const struct job_model *m, uint32_t r, uint32_t step)
{
    return r != m->slow[0] ? 1.0 : step % 4 == 1 ? 1.5 : 1.015;
}

/* slow steps 40 .. 69, then recovered: one block, not intermittent */
static double
recovered(const struct job_model *m, uint32_t r, uint32_t step)
{
    return r == m->slow[0] && step >= 40 && step < 70 ? 1.5 : 1.0;
}

static uint32_t
intermittent_late(const struct job_model *m, uint32_t step)
{
    for (uint32_t r = 0; r < m->n_ranks; r++)
        if (m->factor(m, r, step) > 1.2)
            return r;
    return (step * 5 + 1) % m->n_ranks;
}

static void
intermittent_kind(void)
{
    char dir[] = "/tmp/rs-stragglers-interm-XXXXXX";
    rs_store *st = model_store(dir);
    struct rs_straggler_report rep;
    struct job_model m = {MODEL_RANKS, 90, every_fourth, intermittent_late, true, {5}, 1, {1}, 0};

    model_evaluate(st, &m, &rep);
    T_EQ(named_mask(&rep), 1ull << 5);
    if (rep.n_verdicts == 1) {
        T_EQ(rep.verdicts[0].kind, RS_STRAGGLER_KIND_INTERMITTENT);
        T_CHECK(rep.verdicts[0].duty > 0.2 && rep.verdicts[0].duty < 0.3);
        T_CHECK(rep.verdicts[0].tail_slowdown > 1.45 && rep.verdicts[0].tail_slowdown < 1.55);
        T_CHECK(rep.verdicts[0].impact_s > 0);
        json_t *doc = rs_straggler_report_json(&rep);
        json_t *v = json_array_get(json_object_get(doc, "stragglers"), 0);
        T_CHECK(strcmp(json_string_value(json_object_get(v, "kind")), "intermittent") == 0);
        T_CHECK(json_is_real(json_object_get(v, "duty")));
        json_decref(doc);
    }
    rs_straggler_report_fini(&rep);

    /* named near the threshold as well, yet intermittent is what it is: that kind, not both */
    m.factor = every_fourth_lifted;
    m.late = slowest_late;
    m.n_slow = 1;
    m.slow_factor[0] = 1.5;
    model_evaluate(st, &m, &rep);
    T_EQ(named_mask(&rep), 1ull << 5);
    T_CHECK(rep.n_verdicts == 1 && rep.verdicts[0].kind == RS_STRAGGLER_KIND_INTERMITTENT);
    rs_straggler_report_fini(&rep);

    m.late = intermittent_late;
    m.factor = spiky;
    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    rs_straggler_report_fini(&rep);

    m.factor = recovered; /* a straggler that recovered inside the steps examined */
    model_evaluate(st, &m, &rep);
    T_EQ(rep.n_verdicts, 0);
    rs_straggler_report_fini(&rep);
    t_store_remove(st, dir);
}

/* A capture on 2 of 8 ranks of a job traced in windows, between its windows (physics of the
 * tiers, docs/collector.md): untraced ranks have no compute kernels — their step's host gap runs to
 * its first NCCL operation (the plugin's records), after the forward pass and half the backward —
 * while the captured ranks' steps have their kernels (30 ms x the GPU's factor) and a 1 ms host
 * gap. Rank 3 is 10% slow and last at every first collective; the evaluator captured it and a
 * healthy peer, rank 5, over steps [from, 90). Kernels of the capture are in the store for ranks 3
 * and 5 only. The rule compares the captured ranks with each other where the capture covers a
 * window, and leaves the captured steps out where it covers part of one: rank 3 stays ~1.10x
 * (not its kernels against the others' host gaps, ~2.1x), rank 5 is not slow, and no cause comes
 * from comparing rank 3's kernels with peers that traced none (extra_work): the rule compares no
 * kernels over a capture's steps. */
#define CAP_RANKS 8
static void
capture_on_two_ranks_from(uint32_t from)
{
    char dir[] = "/tmp/rs-stragglers-capture-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    static const char *const names[] = {"gemm"};
    struct job_model m = {CAP_RANKS, 90, slow_from_onset, slowest_late, false, {3}, 1, {1.10}, 0};
    struct rs_straggler_options o;
    struct rs_straggler_report rep = {0};
    rs_store_read *r;

    for (uint32_t i = 0; i < CAP_RANKS; i++) {
        struct rs_kernel_record k[10 * 30];
        uint32_t n = 0;
        for (uint32_t step = from; (i == 3 || i == 5) && step < 90; step++)
            for (uint32_t j = 0; j < 10 && n < 10 * 30; j++) {
                uint64_t t = step * 40000000ull + 1000 * T_US + j * 3500 * T_US;
                k[n++] = (struct rs_kernel_record){t, t + (i == 3 ? 3300 : 3000) * T_US, 0, 7, 0,
                                                   0};
            }
        struct rs_rank_batch rb = {.identity = T_IDENTITY("cap", i, CAP_RANKS, "GPU"),
                                   T_RECORDS(strings, names, 1), T_RECORDS(kernels, k, n)};
        t_store_put(st, &rb, 1);
    }
    struct rs_rank_steps *rk = model_steps(&m);
    for (uint32_t i = 0; i < CAP_RANKS; i++)
        for (uint32_t step = 0; step < 90; step++) {
            struct rs_step_summary *x = &rk[i].steps[step];
            double f = (double)x->compute_ns / (30000.0 * T_US);
            if ((i == 3 || i == 5) && step >= from) {
                x->kernels = 10;
                continue; /* traced: the model's compute and 1 ms host gap */
            }
            x->compute_ns = 0;
            x->kernels = 0;
            x->host_gap_ns = (uint64_t)((1000 + 15000 * f) * T_US);
        }
    rs_straggler_options_default(&o);
    T_OK(rs_store_read_begin(st, &r));
    T_OK(rs_stragglers_evaluate(r, "cap", &o, rk, CAP_RANKS, &rep));
    rs_store_read_end(r);
    T_EQ(named_mask(&rep), 1ull << 3);
    for (size_t i = 0; i < rep.n_ranks; i++) {
        double sd = rep.ranks[i].slowdown;
        if (rep.ranks[i].rank == 3)
            T_CHECK(sd > 1.07 && sd < 1.13);
        else
            T_CHECK(sd < 1.02);
    }
    if (rep.n_verdicts == 1) {
        const struct rs_straggler_verdict *v = &rep.verdicts[0];
        T_CHECK(v->slowdown > 1.07 && v->slowdown < 1.13);
        /* rank 3's excess over the peers compared likewise: 1.5 ms per untraced step (its host
         * gap), 3 ms per captured one (its kernels); not 18 ms (its kernels against host gaps) */
        T_CHECK(v->impact_s > 0.0015 * 30 * (double)v->windows * 0.8 &&
                v->impact_s < 0.003 * 30 * (double)v->windows * 1.2);
        /* no kernel comparison of the rule's over the capture's steps (the server compares the
         * captured ranks with each other: server/capture_evidence.h) */
        T_EQ(v->n_kernels, 0);
        T_CHECK(v->cause != RS_STRAGGLER_CAUSE_EXTRA_WORK);
    }
    rs_straggler_report_fini(&rep);
    for (uint32_t i = 0; i < CAP_RANKS; i++)
        free(rk[i].steps);
    free(rk);
    t_store_remove(st, dir);
}

static void
capture_on_two_ranks(void)
{
    capture_on_two_ranks_from(60); /* the newest window, whole */
    capture_on_two_ranks_from(75); /* half of it */
}

/* A rank whose steps arrived further than the others' (its node's agent delivered, the others'
 * lag: a spool replayed, a busy link): rank 0 has steps 0 .. 419, ranks 1 and 2 (2 the slow GPU)
 * 0 .. 119. The windows end at step 119, the newest all ranks have, and rank 0's steps must be
 * read up to there too: read from its own newest back (the last 300: 120 .. 419), they left every
 * window without rank 0 and the answer was "not enough data" (the 1,024-rank dashboard run). */
static void
rank_ahead(void)
{
    char dir[] = "/tmp/rs-straggle-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_straggler_options o;
    struct rs_straggler_report rep;
    rs_store_read *r;

    t_straggler_put(st, "ahead", T_SLOW_GPU, 2, 0, 0, 120);
    t_straggler_put_ranks(st, "ahead", T_SLOW_GPU, 2, 0, 120, 420, 0, 1);
    T_EQ(rs_store_read_begin(st, &r), 0);
    rs_straggler_options_default(&o);
    T_EQ(rs_stragglers_evaluate_job(r, "ahead", &o, &rep), 0);
    T_CHECK(rep.enough_data);
    T_CHECK(rep.has_window && rep.window.last_step == 119 && rep.window_steps == 30);
    T_EQ(rep.n_verdicts, 1);
    T_CHECK(rep.n_verdicts && rep.verdicts[0].rank == 2 &&
            rep.verdicts[0].cause == RS_STRAGGLER_CAUSE_GPU_SLOW && rep.verdicts[0].windows == 4);
    if (!rep.enough_data)
        fprintf(stderr, "    %s\n", rep.summary);
    rs_straggler_report_fini(&rep);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(rule);
    T_RUN(typed);
    T_RUN(back_to_back_buckets);
    T_RUN(several_stragglers);
    T_RUN(near_threshold);
    T_RUN(two_ranks);
    T_RUN(two_ranks_rise);
    T_RUN(since_gpu_time);
    T_RUN(intermittent_kind);
    T_RUN(capture_on_two_ranks);
    T_RUN(rank_ahead);
    return T_DONE("query/stragglers");
}
