/* NCCL wait skew (docs/analysis.md "NCCL wait skew"): collective instances matched across ranks by
 * (communicator, op, sequence); per instance, with NCCL kernel durations d_r,
 *   wait_r = d_r - min d,  skew = max d - min d,  last arriver = argmin d
 * (clock-free: the last rank to arrive waits least); and, from start times, the arrival spread
 * max start - min start, which agrees with the skew only as far as the ranks' clocks agree — both
 * are reported. Per job: p50/p95/max of both, total wait and last-arrival count per rank, and the
 * same per (communicator, op). Instances seen by a single rank carry no cross-rank information and
 * are counted as unmatched; an exact tie for the shortest kernel has no last arriver. Every figure
 * covers the same window, named in the answer ("window": the time span of the instances counted,
 * and whether that is the whole job): unlike the straggler rule's newest window of steps. */
#ifndef RS_QUERY_SKEW_H
#define RS_QUERY_SKEW_H

#include "storage/store.h"

#include <jansson.h>
#include <stdint.h>

struct rs_skew_options {
    uint64_t since_ns, until_ns; /* instances whose earliest start is in [since, until); 0 = open */
};

/* The skew report of `job` as JSON (shape in docs/openapi.yaml, /v1/jobs/{job}/skew). Returns 0,
 * RS_E_NOT_FOUND when the job is unknown, or a storage error. The caller owns *out. */
int rs_query_skew(rs_store_read *r, const char *job, const struct rs_skew_options *opts,
                  json_t **out);

#endif
