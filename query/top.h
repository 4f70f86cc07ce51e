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
#include <stdbool.h>
#include <stddef.h>

/* The `limit` largest items of `scope` as JSON (docs/openapi.yaml, /v1/jobs/{job}/top), ties in
 * (kind, name) order; the rest are summed in "other" so the rows add up to "total_ms". The whole
 * job (no rank, no range) is read from the job's running totals where they give the answer the
 * records would (query/profile_int.h: O(kernel names + ranks) entries, whatever the job's age),
 * else from the records. Returns 0, RS_E_NOT_FOUND, or an error of rs_profile_build. */
int rs_query_top(rs_store_read *r, const struct rs_profile_scope *scope, size_t limit,
                 json_t **out);

/* rs_query_top, saying where the answer came from: *from_totals (when not NULL) true for the
 * job's running totals, false for its records. */
int rs_query_top_sourced(rs_store_read *r, const struct rs_profile_scope *scope, size_t limit,
                         json_t **out, bool *from_totals);

#endif
