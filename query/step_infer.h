/* Steps inferred from NCCL collectives (docs/analysis.md "Steps": "inferred from the periodic
 * pattern of NCCL collectives"), for ranks whose job marks no steps. A training step issues the
 * same collectives in the same order every time, and one gap between collectives per step is
 * consistently the longest (optimizer, forward pass, early backward):
 *   period P  the smallest number of collectives after which (communicator, op, bytes) repeat
 *             (>= 90% of positions) AND one phase of the period holds gaps that are all longer
 *             than twice every gap of the other phases (P = 1: one collective per step, gaps
 *             regular);
 *   a step    ends when the last collective before that long gap ends, and starts where the
 *             previous one ended;
 *   numbers   floor(seq / c) of the step's first collective, c = collectives of its (comm, op) per
 *             period: the same instance has the same seq on every rank, so ranks agree on step
 *             numbers, as windows need.
 * No period, no steps: the answer then says that steps are unknown. */
#ifndef RS_QUERY_STEP_INFER_H
#define RS_QUERY_STEP_INFER_H

#include "proto/wire.h"

#include <stddef.h>
#include <stdint.h>

/* Most collectives in a period that are considered. */
#define RS_INFER_MAX_PERIOD 256

/* Steps of one rank from its collective records in start order (rs_collective_record: start,
 * end, bytes, comm_hash, seq, op are used). On success *steps (caller frees) holds *n_steps steps
 * in step order and *period the period found; a rank without a periodic pattern gets 0 steps and
 * period 0. Returns 0 or -ENOMEM. */
int rs_infer_steps(const struct rs_collective_record *c, size_t n, struct rs_step_record **steps,
                   size_t *n_steps, uint32_t *period);

#endif
