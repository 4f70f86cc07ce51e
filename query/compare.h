/* Comparison (docs/analysis.md "Comparison"): two scopes — two jobs, two windows, or two ranks
 * — aligned by kernel name and NCCL collective op. Per item: time and calls per step on each side
 * and the change, largest change first; the items beyond `limit` are summed in "other", so the
 * changes add up to the change of the total. When both sides have PC samples, the stall-reason mix
 * (share of samples per reason) is compared too. */
#ifndef RS_QUERY_COMPARE_H
#define RS_QUERY_COMPARE_H

#include "query/profile.h"

#include <jansson.h>
#include <stddef.h>

/* B relative to A as JSON (docs/openapi.yaml, /v1/jobs/{job}/compare). Returns 0,
 * RS_E_NOT_FOUND (either side: which one is in *side, 'a' or 'b'), or an error. */
int rs_query_compare(rs_store_read *r, const struct rs_profile_scope *a,
                     const struct rs_profile_scope *b, size_t limit, char *side, json_t **out);

#endif
