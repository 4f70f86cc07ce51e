/* Top kernels: where a job (or one rank) spends GPU time per step, largest first — kernels and
 * NCCL collectives by op, with calls per step, mean duration, share of GPU time and PC samples;
 * their sum ("total_ms", which counts kernels overlapping on several streams twice) and the GPU's
 * busy time ("gpu_busy_ms": per rank the union of the intervals); and, apart from the GPU time,
 * how long the host waited for the GPU in synchronizations ("host_sync") and how long the GPU
 * waited for the host to queue work ("launch_wait"). Per step means per rank-step (of step
 * records): a job's numbers are the mean rank's; without step records, per second of the span of
 * every record counted, times the ranks (steps inferred from NCCL are counted in the scope,
 * inferred_rank_steps, but divide nothing). */
#ifndef RS_QUERY_TOP_H
#define RS_QUERY_TOP_H

#include "query/profile.h"

#include <jansson.h>
#include <stddef.h>

/* The `limit` largest items of `scope` as JSON (docs/openapi.yaml, /v1/jobs/{job}/top); the rest
 * are summed in "other" so the rows add up to "total_ms". Returns 0, RS_E_NOT_FOUND, or an error
 * of rs_profile_build. */
int rs_query_top(rs_store_read *r, const struct rs_profile_scope *scope, size_t limit,
                 json_t **out);

#endif
