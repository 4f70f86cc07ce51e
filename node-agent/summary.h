/* An agent's summary of one rank (agent --summarize): instead of each kernel and copy, the server
 * gets per-window totals per kernel name and copy kind, and each step with its metrics measured
 * here (docs/analysis.md "Step metrics", common/step_metrics.h) — the per (rank, window, step)
 * aggregation the agent does (docs/architecture.md). NCCL kernels (collective records) and stall
 * counts still go as they are: collectives are matched across ranks one by one.
 *
 * Records are absorbed as they come; what is ready is emitted at each flush:
 *  - a window [start, start + window_ns) once the rank's records reach RS_SUMMARY_SETTLE_NS past
 *    its end (records that come later still count: they go out as another total of the same
 *    window, which the server adds to it);
 *  - a step once the next step's marker is known (a step lasts until the next one starts, as the
 *    server takes it: query/steps.h) and the records reach RS_SUMMARY_SETTLE_NS past its end;
 *  - everything when the rank has gone quiet or the agent stops.
 * A rank is summarized from its first step marker on: until then its records stay as they are (a
 * job that marks no steps sends records, so the server can infer its steps from its collectives
 * and measure them from its kernels). While no marker has come, the aggregate holds a rank's
 * records back for up to RS_SUMMARY_SETTLE_NS (aggregate.c waits_for_marker): the collector may
 * hand a marker over after the kernels of its step. The first steps' metrics lack only what went
 * as records before that.
 * Not thread-safe: one owner. */
#ifndef RS_NODE_AGENT_SUMMARY_H
#define RS_NODE_AGENT_SUMMARY_H

#include "common/step_metrics.h"
#include "common/strtab.h"
#include "node-agent/records.h"

#include <stdbool.h>
#include <stdint.h>

/* How far past a window or step the records of a rank must reach before it is summarized: the
 * collector hands records over every 250 ms, CUPTI within its buffer period. */
#define RS_SUMMARY_SETTLE_NS 2000000000ull
/* Kernels kept for steps whose marker may still come, when no step is pending. */
#define RS_SUMMARY_KEEP_NS 10000000000ull

struct rs_summary_total;

struct rs_rank_summary {
    uint64_t window_ns;
    struct rs_strtab names;          /* kernel names of the open totals */
    struct rs_summary_total *totals; /* open windows' totals */
    size_t n_totals, cap_totals;
    uint32_t *slots;               /* index of totals by key (common/pos_index.h) */
    size_t n_slots;                /* 0 before the first total */
    struct rs_intervals intervals; /* kernels and NCCL kernels pending steps may need */
    struct rs_step_record *steps;  /* pending steps, in step order */
    size_t n_steps, cap_steps;
    uint64_t newest_ns; /* latest end of any record absorbed (or left as it was, before marked) */
    bool marked;        /* a step marker has come: summarizing */
};

void rs_rank_summary_init(struct rs_rank_summary *s, uint64_t window_ns);
void rs_rank_summary_fini(struct rs_rank_summary *s);

/* Where the records not seen by the summary start in r: its counts before the newest frame was
 * merged into it. */
struct rs_summary_unseen {
    uint32_t kernels, memcpys, collectives;
};

/* Takes the kernels, copies and steps out of `r` into the summary; r keeps its collectives and
 * stalls, and the NCCL kernels of the collectives not seen before are noted as intervals. Before
 * the rank's first step marker, r is left as it is (its unseen records are only noted). Returns 0
 * or -ENOMEM (then part of r may have been absorbed; r's kernels, copies and steps are gone either
 * way). */
int rs_rank_summary_absorb(struct rs_rank_summary *s, struct rs_records *r,
                           const struct rs_summary_unseen *from);

/* Appends to `r` what is ready (see above) — every pending total and step when `everything` —
 * and forgets it here. Returns 0 or -ENOMEM. */
int rs_rank_summary_emit(struct rs_rank_summary *s, struct rs_records *r, bool everything);

/* True when totals or steps are waiting to be emitted. */
bool rs_rank_summary_pending(const struct rs_rank_summary *s);

#endif
