/* Steps inferred from the period of the kernel-name sequence (docs/analysis.md "Steps"), for ranks
 * that mark no steps and issue no periodic NCCL pattern: single-GPU jobs and markerless traces.
 * A training step launches the same kernels in the same order every time, so the sequence of
 * kernel names repeats:
 *   period P   candidates are the median index distance between the j-th and (j+k)-th occurrence
 *              of each name (k = 1..4: a name seen k times per step); P is the smallest candidate
 *              whose names repeat P kernels later at >= RS_KPERIOD_MATCH of the positions and at
 *              most RS_KPERIOD_TIE below the best candidate (multiples of P match as well; the
 *              period of one layer of a model matches only inside the forward pass);
 *   anchor     a name seen once per period, P kernels apart (median);
 *   first      the step's first kernel is the one at the offset from the anchor (0..P-1) after
 *              the longest median GPU idle: where the GPU waits between steps (input, optimizer
 *              end); per occurrence a clearly longer idle (over 2x + 5 us) within 2 kernels of
 *              that offset moves it (a kernel inserted or dropped before it);
 *   a step     starts when the GPU finished everything launched before its first kernel and
 *              lasts until the next step's start (the idle before a step's first kernel is that
 *              step's host gap, as with markers);
 *   numbers    1, 2, ... in window order: ranks agree on numbers only if their windows begin at
 *              the same step.
 * Robust to a few kernels that vary (inserted, missing, renamed: they cost matching positions,
 * not the period) and to the window starting mid-step. No period, no steps. */
#ifndef RS_QUERY_KERNEL_PERIOD_H
#define RS_QUERY_KERNEL_PERIOD_H

#include "proto/wire.h"
#include "query/steps.h"
#include "storage/store.h"

#include <stddef.h>
#include <stdint.h>

#define RS_KPERIOD_MIN_PERIODS 3   /* the period must repeat this often */
#define RS_KPERIOD_MAX_PERIOD 8192 /* kernels per step considered at most */
#define RS_KPERIOD_MATCH 0.5       /* share of positions whose name repeats one period later */
#define RS_KPERIOD_TIE 0.03        /* a smaller period within this of the best match wins */

struct rs_kernel_period {
    uint32_t kernels_per_step; /* P; 0: no period found */
    double match;              /* share of positions matching one period later */
    uint64_t step_ns;          /* median duration of the inferred steps */
    uint32_t anchor_name_id;   /* the name_id whose occurrences place the steps */
};

/* Steps of one rank from its kernel records k[0..n) in start order; name_id is the kernel's name
 * (equal ids, equal names; any dense or sparse numbering). On success *steps (caller frees;
 * NULL when none) holds *n_steps steps in time order with numbers 1.., and *out the period found
 * (kernels_per_step 0 and no steps when none). Returns 0 or -ENOMEM (nothing written then). */
int rs_kernel_period_steps(const struct rs_kernel_record *k, size_t n,
                           struct rs_step_record **steps, size_t *n_steps,
                           struct rs_kernel_period *out);

/* Kernels read for one rank's inference: those of the job's last RS_KPERIOD_WINDOW_NS, the newest
 * RS_KPERIOD_MAX_KERNELS of them. */
#define RS_KPERIOD_WINDOW_NS 10000000000ull
#define RS_KPERIOD_MAX_KERNELS 262144u

/* Fills rk (its rank set, no steps yet) with the steps inferred from the kernels (and GPU copies
 * and memsets, named by their kind) of rank rk->rank
 * of `job` in the window ending at last_ns (the job's newest record): the newest last_steps of
 * them (all when 0) numbered up to until_step at most; rk->inferred_period is the kernels per
 * step and rk->kernel_period is set. A rank without a period keeps n = 0. Returns 0, -ENOMEM or
 * a storage error (rk unchanged then). */
int rs_kernel_period_rank_steps(rs_store_read *r, const char *job, uint64_t last_ns,
                                size_t last_steps, uint64_t until_step, struct rs_rank_steps *rk);

#endif
