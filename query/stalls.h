/* Stall reasons (docs/analysis.md "Stall reasons"): PC-sampling breakdown of a job or one rank —
 * samples per reason, and per kernel with its reason mix — and the difference between one rank and
 * its peers: the rank asked for, or else the job's straggler when there is one. That difference is
 * a comparison (compare.h) of the peers (A) with the rank (B): kernel time per step and stall mix.
 */
#ifndef RS_QUERY_STALLS_H
#define RS_QUERY_STALLS_H

#include "query/profile.h"

#include <jansson.h>
#include <stddef.h>

/* The breakdown of `scope` as JSON (docs/openapi.yaml, /v1/jobs/{job}/stalls), `limit` kernels.
 * Returns 0, RS_E_NOT_FOUND, or an error. A scope without samples gets an empty breakdown and a
 * note saying how to turn PC sampling on. */
int rs_query_stalls(rs_store_read *r, const struct rs_profile_scope *scope, size_t limit,
                    json_t **out);

#endif
