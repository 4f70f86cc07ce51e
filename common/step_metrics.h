/* Step metrics from kernel intervals (docs/analysis.md "Step metrics"): the one definition of
 * compute_time, comm_time, exposed_comm, idle_time and host_gap, shared by the server's queries
 * (which measure steps from stored kernels) and the agent (which measures them before it summarizes
 * kernels away). Not thread-safe: one owner per interval set. */
#ifndef RS_COMMON_STEP_METRICS_H
#define RS_COMMON_STEP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Metrics of one step [start, end) of one rank. compute + exposed_comm + idle = end - start. */
struct rs_step_metrics {
    uint64_t compute_ns;      /* union of non-NCCL kernel intervals */
    uint64_t comm_ns;         /* union of NCCL kernel intervals */
    uint64_t exposed_comm_ns; /* NCCL time not overlapped by compute */
    uint64_t idle_ns;         /* no kernel running */
    uint64_t host_gap_ns;     /* from the step's start to its first kernel */
    uint32_t kernels;         /* kernels and NCCL kernels that started in the step */
};

/* True when m could be the metrics of a step of `step_ns` (the sums add up). Inline: the wire
 * decoder uses it, and the collector links the wire code but none of the interval code. */
static inline bool
rs_step_metrics_valid(const struct rs_step_metrics *m, uint64_t step_ns)
{
    return m->compute_ns <= step_ns && m->exposed_comm_ns <= m->comm_ns && m->comm_ns <= step_ns &&
           m->idle_ns <= step_ns && m->host_gap_ns <= step_ns &&
           m->compute_ns + m->exposed_comm_ns + m->idle_ns == step_ns;
}

struct rs_interval {
    uint64_t start_ns, end_ns;
    bool nccl;
};

/* A growable set of kernel intervals; measure after sorting. Zero-initialized is empty. */
struct rs_intervals {
    struct rs_interval *v;
    size_t n, cap;
    uint64_t longest; /* the longest interval added */
    bool unsorted;
};

void rs_intervals_fini(struct rs_intervals *iv);

/* Empties the set, keeping its memory. */
void rs_intervals_clear(struct rs_intervals *iv);

/* Adds [start, end) (end >= start). Returns 0 or -ENOMEM. */
int rs_intervals_add(struct rs_intervals *iv, uint64_t start_ns, uint64_t end_ns, bool nccl);

/* Sorts by start (cheap when already sorted). */
void rs_intervals_sort(struct rs_intervals *iv);

/* Merges the sorted intervals of b into the sorted a. Returns 0 or -ENOMEM. */
int rs_intervals_merge(struct rs_intervals *a, const struct rs_intervals *b);

/* Drops every interval that ends at or before t: none of them reaches a step that starts at or
 * after t. Order is kept. */
void rs_intervals_drop_before(struct rs_intervals *iv, uint64_t t);

/* Measures the step [start, end) over the sorted intervals. */
void rs_intervals_measure(const struct rs_intervals *iv, uint64_t start_ns, uint64_t end_ns,
                          struct rs_step_metrics *out);

#endif
