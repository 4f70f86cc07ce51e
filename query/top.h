/* Top kernels: where a job (or one rank) spends GPU time per step, largest first — kernels and
 * NCCL collectives by op, with calls per step, mean duration, share of GPU time and PC samples —
 * and, apart from the GPU time, how long the host waited for the GPU in synchronizations
 * ("host_sync"). Per step means per rank-step: a job's numbers are the mean rank's. */
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
