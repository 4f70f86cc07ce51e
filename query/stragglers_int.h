/* Inside the straggler rule (stragglers.h): one rank's kernels by name over a window, and the
 * kernel speed measure built on them (query/straggler_kernels.c; docs/analysis.md "The rule",
 * kernel speed). */
#ifndef RS_QUERY_STRAGGLERS_INT_H
#define RS_QUERY_STRAGGLERS_INT_H

#include "query/stats.h"
#include "storage/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One kernel name's totals on one rank in [t0, t1): count and time (fractional where a kernel
 * window only partly overlaps the range), the kernel records among them, and — when the scan keeps
 * them — the durations (ns) of the records (windows hold totals only): of every `stride`-th record,
 * at most RS__KNAME_DURATIONS, spread evenly over them. */
struct rs__kname {
    uint64_t hash;
    char *name;
    double count, ns;
    double records;
    uint32_t stride;
    struct rs_samples durs;
};

#define RS__KNAME_DURATIONS 4096

/* A rank's kernels by name. The caller sets t0, t1, first_ns, last_ns (the rank's records: where a
 * kernel window's launches can be; 0 and UINT64_MAX when unknown) and durations before the scan. */
struct rs__knames {
    struct rs__kname *v; /* sorted by hash after rs__knames_scan */
    size_t n, cap;
    uint64_t t0, t1;
    uint64_t first_ns, last_ns;
    uint64_t windows_end; /* the latest end of a kernel window read */
    bool durations;       /* keep each record's duration (rs__kernel_speed wants them) */
};

/* Adds rank `rank`'s kernel records and kernel windows overlapping [ns->t0, ns->t1) to ns (a window
 * counts by the share of it inside the range: its launches taken as spread evenly over the part of
 * it the rank was active in), then sorts ns->v by hash. Returns 0, -ENOMEM or a storage error. */
int rs__knames_scan(rs_store_read *r, const char *job, uint32_t rank, struct rs__knames *ns);

/* The name of `hash` in ns (sorted), or NULL. */
const struct rs__kname *rs__knames_find(const struct rs__knames *ns, uint64_t hash);

/* Frees what ns holds; idempotent. */
void rs__knames_fini(struct rs__knames *ns);

/* How fast one rank runs the same kernels as its peers (docs/analysis.md "The rule", kernel speed).
 */
struct rs__kernel_speed {
    bool known;   /* at least RS__KERNEL_SPEED_MIN_NAMES names compared */
    double ratio; /* median over names of the rank's typical duration / its peers' median */
    double se;    /* its standard error: 1.2533 x 1.4826 x the names' median absolute deviation
                     from it / sqrt(names) */
    size_t names;
};

#define RS__KERNEL_SPEED_MIN_NAMES 3

/* The kernel speed of all[idx] against the other entries of all[0 .. n) whose `use` is true (the
 * peers compared). A name counts when the rank ran it at least min_count times and at least half
 * the peers ran it at least min_count / 2 times; a name's typical duration on a rank is the median
 * of its record durations when every one of its kernels came as a record, else its mean (kernel
 * windows hold totals only; the durations are sorted in place). Returns 0 or -ENOMEM; *out
 * written on success. */
int rs__kernel_speed(struct rs__knames *all, const bool *use, size_t n, size_t idx,
                     double min_count, struct rs__kernel_speed *out);

#endif
