/* Unit tests of per-step metrics on a hand-built step with known unions: overlapping compute
 * kernels, NCCL partly hidden under compute, idle gaps, the host gap before the first kernel, a
 * kernel outside any step, and a second rank. */
#include "common/error.h"
#include "query/steps.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdbool.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>

static const char *const names[] = {"gemm", "nccl"};

#define US 1000ull

/* A fresh store in dir (a mkdtemp template) holding the rank batches rb[0..n). */
static rs_store *
store_with(char *dir, const struct rs_rank_batch *rb, uint32_t n)
{
    rs_store *st = t_store_open(dir, NULL);

    t_store_put(st, rb, n);
    return st;
}

static void
known_step(void)
{
    /* step 7 of rank 0: [1000, 2000) us
     *   compute [1100,1400) [1300,1500) [1850,1950)    -> union 400 + 100 = 500 us
     *   NCCL    [1450,1700) [1800,1900)                -> union 250 + 100 = 350 us
     *   busy = [1100,1700) + [1800,1950) = 750 us: exposed NCCL 250, idle 250, host gap 100
     * and one compute kernel at [5000, 5100) outside the step. */
    struct rs_kernel_record k[] = {{1100 * US, 1400 * US, 0, 7, 0, 0},
                                   {1300 * US, 1500 * US, 0, 7, 0, 0},
                                   {1850 * US, 1950 * US, 0, 7, 0, 0},
                                   {3000000 * US, 3000100 * US, 0, 7, 0, 0}};
    struct rs_collective_record c[] = {
        {1450 * US, 1700 * US, 8, 1, 0, RS_COLL_ALLREDUCE, 1, 17, false},
        {1800 * US, 1900 * US, 8, 1, 1, RS_COLL_ALLREDUCE, 1, 17, false}};
    /* step 9 ends too recently (3 s) to be settled (not step 8: step 7 would last until it) */
    struct rs_step_record s[] = {{.step = 7, .start_ns = 1000 * US, .end_ns = 2000 * US},
                                 {.step = 9, .start_ns = 2900000 * US, .end_ns = 3000000 * US}};
    /* rank 1: the same step 7, no kernels in it -> all idle, host gap = the whole step; a kernel
     * at 3 s outside its steps */
    struct rs_step_record s1[] = {{.step = 7, .start_ns = 1000 * US, .end_ns = 2000 * US}};
    struct rs_kernel_record k1[] = {{3000000 * US, 3000100 * US, 0, 7, 0, 0}};
    char dir[] = "/tmp/rs-steps-XXXXXX";
    struct rs_rank_steps *ranks = NULL;
    rs_store_read *r;
    rs_store_write *w;
    size_t n = 0;

    struct rs_rank_batch rb[2] = {{.identity = T_IDENTITY("j", 0, 2, "G"),
                                   T_RECORDS(strings, names, 2),
                                   T_RECORDS(kernels, k, 4),
                                   T_RECORDS(collectives, c, 2),
                                   T_RECORDS(steps, s, 2)},
                                  {.identity = T_IDENTITY("j", 1, 2, "G"),
                                   T_RECORDS(strings, names, 2),
                                   T_RECORDS(kernels, k1, 1),
                                   T_RECORDS(steps, s1, 1)}};
    rs_store *st = store_with(dir, rb, 2);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_query_job_steps(r, "j", 30, &ranks, &n), 0);
    T_EQ(n, 2);
    if (n == 2 && ranks[0].n == 2 && ranks[1].n == 1) {
        const struct rs_step_summary *m = &ranks[0].steps[0];
        T_EQ(m->step, 7);
        T_EQ(m->step_ns, 1000 * US);
        T_EQ(m->compute_ns, 500 * US);
        T_EQ(m->comm_ns, 350 * US);
        T_EQ(m->exposed_comm_ns, 250 * US);
        T_EQ(m->idle_ns, 250 * US);
        T_EQ(m->host_gap_ns, 100 * US);
        T_EQ(m->kernels, 5);
        const struct rs_step_summary *e = &ranks[1].steps[0];
        T_EQ(e->idle_ns, 1000 * US);
        T_EQ(e->host_gap_ns, 1000 * US);
        T_EQ(e->kernels, 0);
        /* the collective instances were seen by rank 0 alone: no cross-rank information */
        T_EQ(m->instances, 0);
        /* step 7 computed now and settled: for the server to store; step 8 is not settled */
        T_CHECK(ranks[0].n_to_store == 1 && ranks[0].to_store && ranks[0].to_store[0] &&
                !ranks[0].to_store[1]);
        T_EQ(ranks[1].n_to_store, 1);
    }
    rs_job_steps_free(ranks, n);

    /* A stored summary replaces the computation (its made-up compute time shows it is read); one
     * for another step record with the same number (other start) is ignored. */
    struct rs_step_summary sum = {7, 1000 * US, 2000 * US, 1000 * US, 123 * US, 0, 0,
                                  0, 0,         9,         0,         0,        0};
    struct rs_step_summary other = {7, 1500 * US, 2000 * US, 500 * US, 77 * US, 0, 0,
                                    0, 0,         1,         0,        0,       0};
    rs_store_read_end(r);
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_step_summaries_put(w, "j", 0, &sum, 1), 0);
    T_EQ(rs_store_step_summaries_put(w, "j", 1, &other, 1), 0);
    T_EQ(rs_store_step_summaries_put(w, "nope", 0, &sum, 1), RS_E_NOT_FOUND);
    T_EQ(rs_store_write_commit(w), 0);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_query_job_steps(r, "j", 30, &ranks, &n), 0);
    if (n == 2 && ranks[0].n == 2 && ranks[1].n == 1) {
        T_EQ(ranks[0].steps[0].compute_ns, 123 * US);
        T_EQ(ranks[0].steps[0].kernels, 9);
        T_EQ(ranks[0].n_to_store, 0); /* step 7 read, step 8 computed but not settled */
        T_EQ(ranks[1].steps[0].compute_ns, 0);
        T_EQ(ranks[1].steps[0].host_gap_ns, 1000 * US);
    }
    rs_job_steps_free(ranks, n);
    json_t *doc = NULL;
    T_EQ(rs_query_steps(r, "j", 30, &doc), 0);
    T_CHECK(json_array_size(json_object_get(doc, "ranks")) == 2);
    /* the text built one rank at a time is exactly the whole tree's compact dump */
    size_t flags[] = {JSON_COMPACT | JSON_REAL_PRECISION(9), JSON_COMPACT};
    for (size_t f = 0; f < 2; f++) {
        char *whole = json_dumps(doc, flags[f]), *text = NULL;
        size_t len = 0;
        T_EQ(rs_query_steps_text(r, "j", 30, flags[f], &text, &len), 0);
        T_CHECK(whole && text && strcmp(whole, text) == 0 && len == strlen(whole));
        free(whole);
        free(text);
    }
    char *no = NULL;
    size_t no_len = 0; /* indented or spaced: refused, not a different document */
    T_EQ(rs_query_steps_text(r, "j", 30, JSON_INDENT(2), &no, &no_len), -EINVAL);
    T_EQ(rs_query_steps_text(r, "j", 30, 0, &no, &no_len), -EINVAL);
    T_CHECK(no == NULL);
    json_t *one = NULL; /* last_steps 1: the newest step of each rank, the same both ways */
    char *text = NULL, *whole = NULL;
    size_t len = 0;
    T_EQ(rs_query_steps(r, "j", 1, &one), 0);
    T_EQ(rs_query_steps_text(r, "j", 1, JSON_COMPACT, &text, &len), 0);
    whole = json_dumps(one, JSON_COMPACT);
    T_CHECK(whole && text && strcmp(whole, text) == 0);
    free(whole);
    free(text);
    json_decref(one);
    json_decref(doc);
    T_EQ(rs_query_steps(r, "nope", 30, &doc), RS_E_NOT_FOUND);
    T_EQ(rs_query_steps_text(r, "nope", 30, JSON_COMPACT, &text, &len), RS_E_NOT_FOUND);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* Collective instances counted per step across ranks: in step 1 (both ranks: [0, 10 ms)) rank 1
 * arrives last at an AllReduce (its kernel is the shortest: 1 ms against 4 ms and 3 ms, so the
 * others wait 3 and 2 ms: median 2.5 ms); a second AllReduce is a tie (nobody last); a third is
 * seen by rank 0 alone (no cross-rank information). */
static void
last_arrivals(void)
{
    const uint64_t MS = 1000 * US;
    struct rs_collective_record c0[] = {{1 * MS, 5 * MS, 8, 9, 0, RS_COLL_ALLREDUCE, 1, 17, false},
                                        {6 * MS, 7 * MS, 8, 9, 1, RS_COLL_ALLREDUCE, 1, 17, false},
                                        {8 * MS, 9 * MS, 8, 9, 2, RS_COLL_ALLREDUCE, 1, 17, false}};
    struct rs_collective_record c1[] = {{4 * MS, 5 * MS, 8, 9, 0, RS_COLL_ALLREDUCE, 1, 17, false},
                                        {6 * MS, 7 * MS, 8, 9, 1, RS_COLL_ALLREDUCE, 1, 17, false}};
    struct rs_collective_record c2[] = {{2 * MS, 5 * MS, 8, 9, 0, RS_COLL_ALLREDUCE, 1, 17, false},
                                        {6 * MS, 7 * MS, 8, 9, 1, RS_COLL_ALLREDUCE, 1, 17, false}};
    struct rs_step_record s[] = {{.step = 1, .start_ns = 0, .end_ns = 10 * MS}};
    struct rs_rank_batch rb[3] = {{.identity = T_IDENTITY("j", 0, 3, "G"),
                                   T_RECORDS(strings, names, 2),
                                   T_RECORDS(collectives, c0, 3),
                                   T_RECORDS(steps, s, 1)},
                                  {.identity = T_IDENTITY("j", 1, 3, "G"),
                                   T_RECORDS(strings, names, 2),
                                   T_RECORDS(collectives, c1, 2),
                                   T_RECORDS(steps, s, 1)},
                                  {.identity = T_IDENTITY("j", 2, 3, "G"),
                                   T_RECORDS(strings, names, 2),
                                   T_RECORDS(collectives, c2, 2),
                                   T_RECORDS(steps, s, 1)}};
    char dir[] = "/tmp/rs-steps-XXXXXX";
    struct rs_rank_steps *ranks = NULL;
    rs_store_read *r;
    size_t n = 0;
    rs_store *st = store_with(dir, rb, 3);

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_query_job_steps(r, "j", 30, &ranks, &n), 0);
    T_EQ(n, 3);
    for (size_t i = 0; n == 3 && i < 3; i++) {
        T_EQ(ranks[i].n, 1);
        T_EQ(ranks[i].steps[0].instances, 2); /* the one seen by rank 0 alone does not count */
        T_EQ(ranks[i].steps[0].last_arrivals, i == 1 ? 1 : 0);
        T_EQ(ranks[i].steps[0].peer_wait_ns, i == 1 ? 2500 * US : 0);
    }
    rs_job_steps_free(ranks, n);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* Host-time markers that end long before the next step starts (a host that runs ahead of its
 * GPU): step 1 [0, 2 ms) and step 2 [10, 12 ms), a kernel at [5, 9 ms) launched in step 1 — step 1
 * lasts until step 2 starts, so the kernel is its compute time. */
static void
steps_last_until_the_next(void)
{
    const uint64_t MS = 1000 * US;
    struct rs_kernel_record k[] = {{5 * MS, 9 * MS, 0, 7, 0, 0}};
    struct rs_step_record s[] = {{.step = 1, .start_ns = 0 + 1, .end_ns = 2 * MS},
                                 {.step = 2, .start_ns = 10 * MS, .end_ns = 12 * MS}};
    struct rs_rank_batch rb = {.identity = T_IDENTITY("j", 0, 1, "G"),
                               T_RECORDS(strings, names, 2),
                               T_RECORDS(kernels, k, 1),
                               T_RECORDS(steps, s, 2)};
    char dir[] = "/tmp/rs-steps-XXXXXX";
    struct rs_rank_steps *ranks = NULL;
    rs_store_read *r;
    size_t n = 0;
    rs_store *st = store_with(dir, &rb, 1);

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_query_job_steps(r, "j", 30, &ranks, &n), 0);
    if (n == 1 && ranks[0].n == 2) {
        T_EQ(ranks[0].steps[0].end_ns, 10 * MS);
        T_EQ(ranks[0].steps[0].compute_ns, 4 * MS);
        T_EQ(ranks[0].steps[1].end_ns, 12 * MS); /* the newest keeps its own end */
    } else
        T_CHECK(!"two steps of one rank");
    rs_job_steps_free(ranks, n);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

/* Steps k0 .. k1-1 of ranks 0 .. n_ranks-1, 100 ms apart: a kernel and an AllReduce (seq k, rank
 * 1 arriving last) in each; committed as one agent batch. */
static void
put_steps(rs_store *st, uint32_t n_ranks, uint64_t k0, uint64_t k1)
{
    const uint64_t MS = 1000 * US;
    size_t n = (size_t)(k1 - k0);
    struct rs_rank_batch *rb = calloc(n_ranks, sizeof *rb);
    struct rs_kernel_record *k = calloc(n_ranks * n, sizeof *k);
    struct rs_collective_record *c = calloc(n_ranks * n, sizeof *c);
    struct rs_step_record *s = calloc(n_ranks * n, sizeof *s);

    for (uint32_t r = 0; r < n_ranks; r++) {
        for (size_t i = 0; i < n; i++) {
            uint64_t t = (k0 + i) * 100 * MS + 1;
            s[r * n + i] =
                (struct rs_step_record){.step = k0 + i, .start_ns = t, .end_ns = t + 90 * MS};
            k[r * n + i] = (struct rs_kernel_record){t + (10 + r) * MS, t + 50 * MS, 0, 7, 0, 0};
            c[r * n + i] = (struct rs_collective_record){
                t + (60 + 2 * r) * MS, t + 80 * MS, 8, 1, k0 + i, RS_COLL_ALLREDUCE, 1, 17, false};
        }
        rb[r] = (struct rs_rank_batch){.identity = T_IDENTITY("j", r, n_ranks, "G"),
                                       T_RECORDS(strings, names, 2),
                                       T_RECORDS(kernels, k + r * n, n),
                                       T_RECORDS(collectives, c + r * n, n),
                                       T_RECORDS(steps, s + r * n, n)};
    }
    t_store_put(st, rb, n_ranks);
    free(rb);
    free(k);
    free(c);
    free(s);
}

/* Stores the summaries a load flagged, as the server's evaluator does. */
static void
store_flagged(rs_store *st, const struct rs_rank_steps *ranks, size_t n)
{
    rs_store_write *w;

    T_EQ(rs_store_write_begin(st, &w), 0);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < ranks[i].n; k++)
            if (ranks[i].to_store && ranks[i].to_store[k])
                T_EQ(rs_store_step_summaries_put(w, "j", ranks[i].rank, &ranks[i].steps[k], 1), 0);
    T_EQ(rs_store_write_commit(w), 0);
}

/* Field by field (the struct has padding). */
static bool
same_summary(const struct rs_step_summary *a, const struct rs_step_summary *b)
{
    return a->step == b->step && a->start_ns == b->start_ns && a->end_ns == b->end_ns &&
           a->step_ns == b->step_ns && a->compute_ns == b->compute_ns && a->comm_ns == b->comm_ns &&
           a->exposed_comm_ns == b->exposed_comm_ns && a->idle_ns == b->idle_ns &&
           a->host_gap_ns == b->host_gap_ns && a->kernels == b->kernels &&
           a->instances == b->instances && a->last_arrivals == b->last_arrivals &&
           a->peer_wait_ns == b->peer_wait_ns;
}

/* A load on top of the final steps of an earlier one (rs_query_job_steps_kept) gives what a full
 * load gives: the same steps, metrics and flags, for ranks it kept steps of and for a rank that
 * joined since. */
static void
kept_steps_load_as_a_full_load(void)
{
    char dir[] = "/tmp/rs-steps-XXXXXX";
    struct rs_rank_steps *kept, *full, *inc;
    size_t n_kept = 0, n_full = 0, n_inc = 0;
    rs_store_read *r;
    rs_store *st = t_store_open(dir, NULL);

    put_steps(st, 3, 0, 60); /* records up to 6 s: steps ending by 4 s are settled */
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_query_job_steps_until(r, "j", 40, UINT64_MAX, &kept, &n_kept), 0);
    rs_store_read_end(r);
    store_flagged(st, kept, n_kept);
    rs_job_steps_keep_final(kept, n_kept, true);
    for (size_t i = 0; i < n_kept; i++) {
        T_EQ(kept[i].n, 19); /* steps 20 .. 38 of the 40 loaded */
        T_CHECK(!kept[i].summarized && !kept[i].to_store && kept[i].n_to_store == 0);
    }
    put_steps(st, 4, 60, 70); /* ten more steps, and rank 3 */
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_query_job_steps_until(r, "j", 40, UINT64_MAX, &full, &n_full), 0);
    T_EQ(rs_query_job_steps_kept(r, "j", 40, UINT64_MAX, kept, n_kept, &inc, &n_inc), 0);
    rs_store_read_end(r);
    T_EQ(n_full, 4);
    T_EQ(n_inc, n_full);
    for (size_t i = 0; i < n_full && i < n_inc; i++) {
        const struct rs_rank_steps *a = &full[i], *b = &inc[i];
        T_EQ(a->rank, b->rank);
        T_EQ(a->n, b->n);
        T_EQ(a->n_to_store, b->n_to_store);
        for (size_t k = 0; k < a->n && k < b->n; k++) {
            T_CHECK(same_summary(&a->steps[k], &b->steps[k]));
            T_EQ(a->summarized[k], b->summarized[k]);
            T_EQ(a->to_store[k], b->to_store[k]);
        }
    }
    /* the two loads saw stored summaries and new steps: steps 30 .. 38 summarized, 39 .. 48
     * settled since (rank 3 joined at step 60: its steps are settled from step 60 to 48, none) */
    T_CHECK(n_full == 4 && full[0].n == 40 && full[0].summarized[8] && !full[0].summarized[9] &&
            full[0].to_store[9] && full[0].to_store[18] && !full[0].to_store[19]);
    rs_job_steps_free(full, n_full);
    rs_job_steps_free(inc, n_inc);
    /* taken from memory: a kept step's metrics come back as kept, except the newest kept one's
     * (step 38, read again) */
    kept[0].steps[10].compute_ns = 12345; /* step 30 */
    kept[0].steps[18].compute_ns = 12345; /* step 38 */
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_query_job_steps_kept(r, "j", 40, UINT64_MAX, kept, n_kept, &inc, &n_inc), 0);
    rs_store_read_end(r);
    T_CHECK(n_inc == 4 && inc[0].n == 40 && inc[0].steps[0].step == 30 &&
            inc[0].steps[0].compute_ns == 12345 && inc[0].steps[8].compute_ns != 12345);
    rs_job_steps_free(inc, n_inc);
    rs_job_steps_free(kept, n_kept);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(known_step);
    T_RUN(steps_last_until_the_next);
    T_RUN(last_arrivals);
    T_RUN(kept_steps_load_as_a_full_load);
    return T_DONE("query/steps");
}
