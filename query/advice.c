/* The advisor's driver (advice.h): each rank's findings over its last steps (and its GPU's memory
 * telemetry), kept above the noise threshold, merged per kind across ranks, the job's load
 * imbalance, ranked by estimated cost. */
#include "query/advice.h"

#include "common/error.h"
#include "query/advice_int.h"
#include "query/stats.h"
#include "query/steps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool
above_noise(const struct rs_advice_finding *f)
{
    return f->cost_ns >= RS_ADVICE_MIN_COST_NS &&
           (double)f->cost_ns >= RS_ADVICE_MIN_SHARE * (double)f->step_ns;
}

static int
by_cost(const void *a, const void *b)
{
    uint64_t x = ((const struct rs_advice_finding *)a)->cost_ns;
    uint64_t y = ((const struct rs_advice_finding *)b)->cost_ns;
    return x > y ? -1 : x < y;
}

static double
median_field(const struct rs_rank_steps *rk, size_t offset, double *scratch)
{
    for (size_t i = 0; i < rk->n; i++)
        scratch[i] = (double)*(const uint64_t *)((const char *)&rk->steps[i] + offset);
    return rs_median(scratch, rk->n);
}

/* Load imbalance: the rank that computes longest per step against the median of the others; the
 * others wait for it at every collective, so the difference is the step time it costs them. */
static void
imbalance(const struct rs_rank_steps *ranks, size_t n_ranks, struct rs_advice_finding *f,
          double *compute, double *step, double *scratch)
{
    size_t m = 0, worst = 0;
    for (size_t i = 0; i < n_ranks; i++) {
        if (ranks[i].n == 0)
            continue;
        compute[m] = median_field(&ranks[i], offsetof(struct rs_step_summary, compute_ns), scratch);
        step[m] = median_field(&ranks[i], offsetof(struct rs_step_summary, step_ns), scratch);
        if (compute[m] > compute[worst])
            worst = m;
        m++;
    }
    *f = (struct rs_advice_finding){.kind = RS_ADVICE_LOAD_IMBALANCE};
    if (m < 2)
        return;
    uint32_t worst_rank = 0;
    for (size_t i = 0, j = 0; i < n_ranks; i++)
        if (ranks[i].n > 0 && j++ == worst)
            worst_rank = ranks[i].rank;
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (i != worst)
            scratch[k++] = compute[i];
    double med = rs_median(scratch, k);
    f->rank = worst_rank;
    f->ranks = 1;
    f->step_ns = (uint64_t)step[worst];
    f->cost_ns = compute[worst] > med ? (uint64_t)(compute[worst] - med) : 0;
    f->seen[0] = compute[worst] / 1e6;
    f->seen[1] = med / 1e6;
    f->seen[2] = med > 0 ? 100.0 * (compute[worst] - med) / med : 0;
}

/* Exposed NCCL time includes the rank's wait for the slowest rank (load imbalance counts that):
 * the rank's compute deficit is taken off, as far as it goes. */
static void
exposed_not_waiting(struct rs_advice_finding *f, double deficit_ns)
{
    double wait = deficit_ns < (double)f->cost_ns ? deficit_ns : (double)f->cost_ns;
    f->cost_ns -= (uint64_t)wait;
    f->seen[2] = wait / 1e6;
}

int
rs_query_advice(rs_store_read *r, const char *job, size_t last_steps, struct rs_advice **out)
{
    return rs_query_advice_rank(r, job, last_steps, RS_ADVICE_ALL_RANKS, out);
}

int
rs_query_advice_rank(rs_store_read *r, const char *job, size_t last_steps, uint64_t rank,
                     struct rs_advice **out)
{
    struct rs_rank_steps *ranks = NULL;
    struct rs_advice *a = NULL;
    struct rs_advice_finding best[RS_ADVICE_KIND_COUNT] = {0}, per[RS_ADVICE_KIND_COUNT];
    double *scratch = NULL, *compute = NULL, *step = NULL;
    size_t n_ranks = 0, most = 1;
    int rc;

    if ((rc = rs_query_job_steps(r, job, last_steps ? last_steps : RS_ADVICE_STEPS, &ranks,
                                 &n_ranks)) != 0)
        return rc;
    rc = -ENOMEM;
    for (size_t i = 0; i < n_ranks; i++)
        most = ranks[i].n > most ? ranks[i].n : most;
    if (!(a = calloc(1, sizeof *a)) || !(scratch = malloc((most + n_ranks) * sizeof *scratch)) ||
        !(compute = malloc((n_ranks + 1) * sizeof *compute)) ||
        !(step = malloc((n_ranks + 1) * sizeof *step)) ||
        !(a->findings = calloc(RS_ADVICE_KIND_COUNT, sizeof *a->findings)))
        goto fail;
    a->rank = rank;
    rc = RS_E_NOT_FOUND;
    bool has_rank = rank == RS_ADVICE_ALL_RANKS;
    for (size_t i = 0; i < n_ranks; i++)
        has_rank |= ranks[i].rank == rank;
    if (!has_rank)
        goto fail;
    a->steps_source = rs_steps_source(ranks, n_ranks);
    a->ranks = n_ranks;
    if ((rc = rs__advice_memory(r, job, ranks, n_ranks, a)) != 0)
        goto fail;
    rc = -ENOMEM;
    /* the slowest rank's compute: the others wait for it inside their collectives */
    double max_compute = 0;
    for (size_t i = 0; i < n_ranks; i++) {
        compute[i] =
            ranks[i].n
                ? median_field(&ranks[i], offsetof(struct rs_step_summary, compute_ns), scratch)
                : 0;
        max_compute = compute[i] > max_compute ? compute[i] : max_compute;
    }
    size_t m = 0;
    for (size_t i = 0; i < n_ranks; i++) {
        const struct rs_rank_steps *rk = &ranks[i];
        if (rk->n == 0 || (rank != RS_ADVICE_ALL_RANKS && rk->rank != rank))
            continue;
        a->ranks_with_steps++;
        a->steps_analysed += rk->n;
        step[m++] = median_field(rk, offsetof(struct rs_step_summary, step_ns), scratch);
        bool no_kernels = false;
        if ((rc = rs__advice_rank(r, job, rk, per, &a->stalls_seen, &no_kernels)) != 0)
            goto fail;
        a->ranks_without_kernels += no_kernels;
        rs__advice_batch_rank(a, &per[RS_ADVICE_BATCH_SIZE]);
        exposed_not_waiting(&per[RS_ADVICE_EXPOSED_COMM], max_compute - compute[i]);
        for (int k = 0; k < RS_ADVICE_KIND_COUNT; k++) {
            if (!above_noise(&per[k])) {
                a->below_threshold += per[k].cost_ns > 0;
                continue;
            }
            uint32_t seen_on = best[k].ranks + 1;
            if (best[k].ranks == 0 || per[k].cost_ns > best[k].cost_ns)
                best[k] = per[k];
            best[k].ranks = seen_on;
        }
    }
    a->median_step_ns = m ? (uint64_t)rs_median(step, m) : 0;
    struct rs_advice_finding imb;
    imbalance(ranks, n_ranks, &imb, compute, step, scratch);
    if (rank != RS_ADVICE_ALL_RANKS && imb.rank != rank)
        imb.cost_ns = 0; /* another rank's: not this one's to fix */
    if (above_noise(&imb))
        best[RS_ADVICE_LOAD_IMBALANCE] = imb;
    else
        a->below_threshold += imb.cost_ns > 0;
    for (int k = 0; k < RS_ADVICE_KIND_COUNT; k++)
        if (best[k].ranks > 0)
            a->findings[a->n++] = best[k];
    qsort(a->findings, a->n, sizeof *a->findings, by_cost);
    free(scratch);
    free(compute);
    free(step);
    rs_job_steps_free(ranks, n_ranks);
    *out = a;
    return 0;
fail:
    free(scratch);
    free(compute);
    free(step);
    rs_advice_free(a);
    rs_job_steps_free(ranks, n_ranks);
    return rc;
}

void
rs_advice_free(struct rs_advice *a)
{
    if (!a)
        return;
    free(a->findings);
    free(a);
}

int
rs_query_advice_json(rs_store_read *r, const char *job, size_t last_steps, uint64_t rank,
                     json_t **out)
{
    struct rs_advice *a;
    int rc = rs_query_advice_rank(r, job, last_steps, rank, &a);

    if (rc != 0)
        return rc;
    *out = rs_advice_json(job, a);
    rs_advice_free(a);
    return *out ? 0 : -ENOMEM;
}
