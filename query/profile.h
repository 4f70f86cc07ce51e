/* A profile: where one scope — a job, or one rank of it, over a time range — spent its GPU time,
 * per kernel name and per NCCL collective op, its PC-sampling stall counts per (kernel, reason),
 * how long its host threads waited for the GPU in synchronizations, per kind, and how long its
 * GPUs waited for the host to queue work (launch waits). The common ground
 * of `top`, `compare` and `stalls` (docs/analysis.md "Comparison", "Stall reasons"): one pass
 * over the scope's kernel, collective, step and stall records. Pure function over a storage read
 * handle. */
#ifndef RS_QUERY_PROFILE_H
#define RS_QUERY_PROFILE_H

#include "storage/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RS_PROFILE_ALL_RANKS UINT64_MAX
/* Collective records of a range held in memory for busy time and step inference (64 B each);
 * beyond them busy time is not known and no step is inferred. */
#define RS_PROFILE_MAX_COLLECTIVES (1u << 20)

struct rs_profile_scope {
    const char *job;
    uint64_t rank;               /* one rank, or RS_PROFILE_ALL_RANKS */
    bool peers;                  /* instead: every rank but `rank` (its peers) */
    uint64_t since_ns, until_ns; /* records that start in [since, until); 0 = open */
};

enum rs_profile_kind { RS_PROFILE_KERNEL, RS_PROFILE_COLLECTIVE };

struct rs_profile_item {
    char *name; /* kernel name, or the op name ("AllReduce") of NCCL collectives */
    enum rs_profile_kind kind;
    uint64_t count, ns;     /* totals over the scope */
    uint64_t stall_samples; /* PC samples taken in this kernel */
};

struct rs_profile_stall {
    char *kernel;
    char *reason; /* CUPTI's name without "smsp__pcsamp_warps_issue_stalled_" */
    uint64_t samples;
};

/* Host-side time of one kind (proto/wire.h: RS_SYNC_* synchronizations, RS_LAUNCH_WAIT): not GPU
 * work, so apart from the items' totals. Launch waits' time is per rank the union of their
 * intervals (several processes may send as one rank: see profile.c scan_host_side), so it never
 * exceeds the rank's wall time. */
struct rs_profile_sync {
    uint64_t count, ns;
};

struct rs_profile {
    uint32_t ranks;      /* ranks in the scope that have records in the range */
    uint64_t rank_steps; /* step records of those ranks that started in the range */
    /* ranks that trace kernels in windows (RS_COLLECTOR_KERNELS_SAMPLED): of their steps only
     * those with kernels (within RS_PROFILE_TRACED_GAP_NS of one) count in rank_steps, the
     * others here — per-step figures then cover the traced steps, not a diluted average */
    uint32_t sampled_ranks;
    uint64_t untraced_rank_steps;
    /* for ranks without step records: their steps inferred from their NCCL collectives in the
     * range (step_infer.h) that started in it — counted, so that answers can say so, but not a
     * divisor: inferred steps leave out the records before the first and after the last */
    uint64_t inferred_rank_steps;
    /* earliest start and latest end of the records seen — kernels, NCCL kernels, copies, host
     * syncs and launch waits: every record counted lies in [t0, t1), so per-second figures never
     * divide by a shorter span than their records cover */
    uint64_t t0, t1;
    /* the same of the kernel and NCCL kernel records alone (windows, copies and host-side
     * records left out): where GPU work with intervals ran — a window's extent says only which
     * seconds its totals fell in. t0 == t1 == 0 when there are none. */
    uint64_t timed_t0, timed_t1;
    /* GPU busy time: per rank, the union of its kernel and NCCL kernel intervals (kernels on
     * several streams overlap: the items' sum can exceed it, and wall time), summed over ranks;
     * busy_known is false when kernel windows (summarized or rolled-up kernels, which have no
     * intervals) were counted, or the range had more than RS_PROFILE_MAX_COLLECTIVES collectives */
    uint64_t busy_ns;
    bool busy_known;
    struct rs_profile_item *items;
    size_t n_items;
    struct rs_profile_stall *stalls;
    size_t n_stalls;
    uint64_t stall_samples;
    struct rs_profile_sync syncs[RS_COPY_KIND_COUNT]; /* by kind; only host-side kinds are set */
    /* private: hash indexes into items[] and stalls[] (position + 1; 0 = empty slot) */
    uint32_t *item_index, *stall_index;
    size_t item_slots, stall_slots;
    size_t cap_items, cap_stalls; /* private: room in items[] and stalls[] */
};

#define RS_PROFILE_TRACED_GAP_NS 1000000000ull

/* Builds the profile of `scope` into *out (caller frees with rs_profile_fini). Returns 0,
 * RS_E_NOT_FOUND (no such job, or the rank has no data), -ENOMEM or a storage error. */
int rs_profile_build(rs_store_read *r, const struct rs_profile_scope *scope,
                     struct rs_profile *out);
void rs_profile_fini(struct rs_profile *p);

/* Only the host-side part of the profile of `scope` — syncs[] by kind, as rs_profile_build fills
 * it — read from the scope's copy records alone (no kernels, steps or stalls): for answers that
 * need nothing else. Writes `out` on success. Returns 0, -ENOMEM or a storage error. */
int rs_profile_host_side(rs_store_read *r, const struct rs_profile_scope *scope,
                         struct rs_profile_sync out[RS_COPY_KIND_COUNT]);

/* What divides scope totals into the unit the answers use: rank-steps ("per_step"), or — for
 * data without step records — the range's seconds times its ranks ("per_second"). Never 0. */
double rs_profile_divisor(const struct rs_profile *p, const char **unit);

/* The item of (kind, name), or NULL. */
const struct rs_profile_item *rs_profile_find(const struct rs_profile *p, enum rs_profile_kind kind,
                                              const char *name);

/* [{"name" ("Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"), "ms", "calls"}] per
 * synchronization kind with records — the host waiting for the GPU — in the units of `per`
 * (rs_profile_divisor); NULL without memory. Launch waits (the GPU waiting for the host) are not
 * in it: rs_profile_launch_wait_json. */
json_t *rs_profile_syncs_json(const struct rs_profile *p, double per);

/* {"ms", "calls"} of the launch waits — the GPU idle until the host queued its next work — in the
 * units of `per`; JSON null when there are none. */
json_t *rs_profile_launch_wait_json(const struct rs_profile *p, double per);

/* GPU busy time (busy_ns) in ms in the units of `per`; JSON null when not known. */
json_t *rs_profile_busy_json(const struct rs_profile *p, double per);

/* Samples of `reason` over all kernels (0 when none). */
uint64_t rs_profile_reason_samples(const struct rs_profile *p, const char *reason);

/* A stall reason as people read it: CUPTI's name without "smsp__pcsamp_warps_issue_stalled_"
 * (a pointer into `reason`). */
const char *rs_profile_reason_short(const char *reason);

/* Whether `rank` is in the scope. */
bool rs_profile_scope_has(const struct rs_profile_scope *scope, uint32_t rank);

/* {"job", "rank" (null = all), "peers_of" (only for peers), "since_ns", "until_ns", "ranks",
 * "rank_steps", "inferred_rank_steps", "unit"}: how a scope is described in answers — the window
 * every figure of the answer covers. */
json_t *rs_profile_scope_json(const struct rs_profile_scope *scope, const struct rs_profile *p);

#endif
