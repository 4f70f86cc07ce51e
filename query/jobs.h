/* Job and rank listings: the first answers of query/, as JSON documents shared by the REST API
 * (GET /v1/jobs, GET /v1/jobs/{job}/ranks), the CLI (through the API) and offline analysis.
 * Pure functions over a storage read handle; no logging, no I/O of their own.
 * The JSON shapes are part of the public API: docs/openapi.yaml describes them. */
#ifndef RS_QUERY_JOBS_H
#define RS_QUERY_JOBS_H

#include "storage/store.h"

#include <jansson.h>
#include <stddef.h>

/* {"jobs": [ {job summary}, ... ]} in name order, at most `limit` (0 = all). The caller owns *out.
 * Returns 0 or a storage error. */
int rs_query_jobs(rs_store_read *r, size_t limit, json_t **out);

/* {"job": {job summary}, "ranks": [ {rank summary}, ... ]} in rank order.
 * RS_E_NOT_FOUND when the job is unknown. The caller owns *out. */
int rs_query_ranks(rs_store_read *r, const char *job, json_t **out);

#endif
