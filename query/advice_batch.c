/* The advisor's batch-size finding (advice_int.h): GPU memory telemetry (NVML readings, gpus.h)
 * says how much larger a batch fits; the steps say how much of each step the GPU idles for
 * per-step reasons (launch pace, host synchronizations: a larger batch makes the kernels longer,
 * not more numerous; advice_rank.c measures that idle on the rank's timeline). Never on a job whose
 * fullest GPU has no room for twice its batch, nor without readings: advice_json.c lists those
 * under `skipped`. */
#include "query/advice_int.h"

#include "common/error.h"
#include "query/gpus.h"

#include <stdlib.h>

int
rs__advice_memory(rs_store_read *r, const char *job, const struct rs_rank_steps *ranks,
                  size_t n_ranks, struct rs_advice *a)
{
    struct rs_gpu_summary *g = NULL;
    uint64_t t0 = UINT64_MAX, t1 = 0;
    size_t n = 0;
    double fullest = -1;

    a->ranks_with_memory = 0;
    a->batch_factor = 0;
    for (size_t i = 0; i < n_ranks; i++) {
        if (ranks[i].n == 0)
            continue;
        if (ranks[i].steps[0].start_ns < t0)
            t0 = ranks[i].steps[0].start_ns;
        if (ranks[i].steps[ranks[i].n - 1].end_ns > t1)
            t1 = ranks[i].steps[ranks[i].n - 1].end_ns;
    }
    if (t1 == 0)
        return 0;
    if (t1 - t0 < RS__ADVICE_BATCH_WINDOW_NS)
        t0 = t1 > RS__ADVICE_BATCH_WINDOW_NS ? t1 - RS__ADVICE_BATCH_WINDOW_NS : 0;
    int rc = rs_gpu_summaries(r, job, t0, t1, &g, &n);
    if (rc == RS_E_NOT_FOUND)
        return 0;
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        const struct rs_gpu_summary *s = &g[i];
        /* a total of 0 is no reading: NVML answers the total of every GPU there is */
        if (!(s->present & RS_GPU_MEMORY) || s->mem_total_mib <= 0)
            continue;
        a->ranks_with_memory++;
        double share = s->mem_used_mib / s->mem_total_mib;
        if (share > fullest) {
            fullest = share;
            a->fullest_rank = s->rank;
            a->fullest_used_mib = s->mem_used_mib;
            a->fullest_total_mib = s->mem_total_mib;
        }
    }
    free(g);
    if (a->ranks_with_memory == 0)
        return 0;
    double fits = a->fullest_used_mib > 0
                      ? RS__ADVICE_BATCH_FILL * a->fullest_total_mib / a->fullest_used_mib
                      : (double)RS__ADVICE_BATCH_MAX;
    uint32_t k = fits >= (double)RS__ADVICE_BATCH_MAX ? RS__ADVICE_BATCH_MAX : (uint32_t)fits;
    a->batch_factor = k >= 2 ? k : 0;
    return 0;
}

void
rs__advice_batch_rank(const struct rs_advice *a, struct rs_advice_finding *f)
{
    double idle = (double)f->cost_ns, step = (double)f->step_ns, k = (double)a->batch_factor;

    if (a->batch_factor == 0) {
        f->cost_ns = 0;
        return;
    }
    f->cost_ns = (uint64_t)(idle * (1.0 - 1.0 / k));
    f->seen[0] = a->fullest_used_mib;
    f->seen[1] = a->fullest_total_mib;
    f->seen[2] = step > 0 ? 100.0 * idle / step : 0;
    f->seen[3] = k;
}
