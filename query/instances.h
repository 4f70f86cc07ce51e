/* Collective instances across ranks: the collectives database returns the ranks of one instance
 * (communicator, op, sequence) consecutively; this groups them and hands each instance, with its
 * members, to a callback. Shared by the skew and straggler analyses. */
#ifndef RS_QUERY_INSTANCES_H
#define RS_QUERY_INSTANCES_H

#include "storage/store.h"

#include <stddef.h>
#include <stdint.h>

struct rs_instance_member {
    uint32_t rank;
    uint64_t start_ns, dur_ns;
};

struct rs_instance {
    uint64_t comm, seq;
    uint32_t op;
    const struct rs_instance_member *members; /* rank order */
    size_t n;
    uint64_t min_start_ns; /* earliest start among members */
    size_t last;           /* index of the last arriver (shortest kernel) */
    size_t at_min;         /* members sharing the shortest duration: > 1 is a tie */
    uint64_t min_dur_ns, max_dur_ns, max_start_ns;
};

/* Calls cb for every instance of `job` (also those seen by a single rank). cb returns 0 to go on,
 * or an error to stop with. Returns 0, the callback's error, or a storage error. */
int rs_instances_scan(rs_store_read *r, const char *job,
                      int (*cb)(void *arg, const struct rs_instance *in), void *arg);

/* The same for instances that may start in [t0, t1) (rs_store_collectives_scan_range: the cost
 * follows the range; instances a little outside it may be passed too, cb filters). */
int rs_instances_scan_range(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1,
                            int (*cb)(void *arg, const struct rs_instance *in), void *arg);

/* The waiting instance `in` cost the others, charged to its last arriver (docs/analysis.md "The
 * rule", wait share): the median over the members but the last of their wait (d − min d), in ns.
 * 0 when nobody arrived last (fewer than 2 members, or a tie for the shortest kernel). scratch
 * holds at least in->n doubles (overwritten). Thread-safe; allocates nothing. */
double rs_instance_peer_wait_ns(const struct rs_instance *in, double *scratch);

#endif
