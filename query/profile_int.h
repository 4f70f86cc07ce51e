/* Internals of query/ profiles (profile.c), shared with the answers that fill a profile from
 * other sources than records (top_totals.c). */
#ifndef RS_QUERY_PROFILE_INT_H
#define RS_QUERY_PROFILE_INT_H

#include "query/profile.h"

/* The item (kind, name) of p, added with zero totals when absent; NULL without memory. */
struct rs_profile_item *rs__profile_item_get(struct rs_profile *p, enum rs_profile_kind kind,
                                             const char *name);

/* The whole-job profile of `scope` from the job's running totals (storage rs_store_job_totals)
 * instead of its records: equal to rs_profile_build's when it can be. Returns 0 (out built),
 * RS_E_NOT_FOUND (no such job), 1 when the totals cannot give the same profile — the scope is not
 * the whole job, the job has no totals (stored before they were kept) or lost them, a rank traces
 * kernels in windows, a rank's launch waits overlap, a rank without step records would have steps
 * inferred, or GPU busy time would be known (it needs the records' intervals) — then the caller
 * builds from records; or -ENOMEM or a storage error. */
int rs__profile_from_totals(rs_store_read *r, const struct rs_profile_scope *scope,
                            struct rs_profile *out);

#endif
