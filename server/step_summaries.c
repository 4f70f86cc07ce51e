/* The writing of settled step summaries for the streaming evaluator (see step_summaries.h): the
 * list of one evaluation, its writer task, and the catch-up of steps its windows skipped. */
#include "server/step_summaries.h"

#include "common/array.h"
#include "common/error.h"
#include "common/log.h"
#include "server/server_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Settled step metrics of one rank, to be stored (a writer task takes the list). */
struct rank_summaries {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint32_t rank;
    struct rs_step_summary *v;
    size_t n;
};

struct rs_step_summaries {
    struct rank_summaries *v;
    size_t n, cap, next; /* next: the first not stored yet */
    struct rs_server *srv;
    void (*finished)(void *arg); /* the owner's (the evaluator waits for it before it frees) */
    void *arg;
    struct rs_post_node stored; /* back to the loop once the writer is done with them */
};

void
rs__step_summaries_free(struct rs_step_summaries *s)
{
    for (size_t i = 0; s && i < s->n; i++)
        free(s->v[i].v);
    if (s)
        free(s->v);
    free(s);
}

/* Keeps the metrics of a job's steps that were computed from kernels and are settled. */
int
rs__step_summaries_collect(struct rs_step_summaries *s, const char *job,
                           const struct rs_rank_steps *ranks, size_t n_ranks)
{
    for (size_t i = 0; i < n_ranks; i++) {
        const struct rs_rank_steps *rk = &ranks[i];
        if (rk->n_to_store == 0)
            continue;
        if (RS_ARRAY_RESERVE(s->v, s->cap, s->n, 1) != 0)
            return -ENOMEM;
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
    struct rs_step_summaries *s = arg;
    size_t budget = SUMMARIES_PER_TXN;

    for (; s->next < s->n && budget > 0; s->next++) {
        const struct rank_summaries *rs = &s->v[s->next];
        int rc = rs_store_step_summaries_put(txn, rs->job, rs->rank, rs->v, rs->n);
        rs_writer_task_writes(s->srv->writer, rs->job); /* only its answers change */
        if (rc == RS_E_NOT_FOUND) /* the job was deleted meanwhile */
            continue;
        if (rc != 0)
            return rc;
        RS_COUNT_ADD(&s->srv->counters, step_summaries, rs->n);
        budget = rs->n < budget ? budget - rs->n : 0;
    }
    *done = s->next == s->n;
    return 0;
}

static void
summaries_finished(void *arg) /* loop */
{
    struct rs_step_summaries *s = arg;
    void (*finished)(void *) = s->finished;
    void *owner = s->arg;

    rs__step_summaries_free(s);
    finished(owner);
}

static void
summaries_stored(void *arg, int status) /* writer thread */
{
    struct rs_step_summaries *s = arg;

    if (status != 0 && status != RS_E_CLOSED)
        rs_log_limited(60, RS_LOG_WARN, "RS-EVALUATE-SUMMARIES", "storing step summaries: %s",
                       rs_strerror(status));
    rs_post_node_call(s->srv->post, &s->stored, summaries_finished, s);
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
int
rs__step_summaries_catch_up(struct rs_step_summaries *s, rs_store_read *r, const char *job,
                            const struct rs_rank_steps *ranks, size_t n_ranks, uint64_t *next_io,
                            uint64_t *loaded)
{
    uint64_t next = *next_io, window_first = UINT64_MAX;
    struct rs_rank_steps *older;
    size_t n_older;

    for (size_t i = 0; i < n_ranks; i++)
        if (ranks[i].n > 0 && ranks[i].steps[0].step < window_first)
            window_first = ranks[i].steps[0].step;
    if (window_first == UINT64_MAX || strcmp(rs_steps_source(ranks, n_ranks), "markers") != 0)
        return 0;
    if (next == UINT64_MAX) { /* first seen since the server started: from what is still raw */
        for (size_t i = 0; i < n_ranks; i++) {
            uint64_t step;
            bool found;
            if (rs_store_oldest_raw_step(r, job, ranks[i].rank, &step, &found) == 0 && found &&
                step < next)
                next = step;
        }
    }
    if (next >= window_first) {
        *next_io = first_open_step(ranks, n_ranks); /* the windows cover the rest */
        return 0;
    }
    uint64_t until =
        window_first - next > CATCHUP_STEPS ? next + CATCHUP_STEPS - 1 : window_first - 1;
    if (rs_query_job_steps_until(r, job, until - next + 1, until, &older, &n_older) != 0)
        return 0; /* the next evaluation tries again */
    int rc = rs__step_summaries_collect(s, job, older, n_older);
    for (size_t i = 0; i < n_older; i++)
        *loaded += older[i].n;
    rs_job_steps_free(older, n_older);
    if (rc == 0)
        *next_io = until + 1 < window_first ? until + 1 : first_open_step(ranks, n_ranks);
    return rc;
}

struct rs_step_summaries *
rs__step_summaries_new(struct rs_server *srv, void (*finished)(void *arg), void *arg)
{
    struct rs_step_summaries *s = calloc(1, sizeof *s);

    if (s) {
        s->srv = srv;
        s->finished = finished;
        s->arg = arg;
    }
    return s;
}

int
rs__step_summaries_submit(struct rs_step_summaries *s)
{
    if (s->n == 0)
        return -ENODATA;
    return rs_writer_submit_task(s->srv->writer, store_summaries, summaries_stored, s);
}
