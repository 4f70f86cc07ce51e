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
 * work, so apart from the items' totals. */
struct rs_profile_sync {
    uint64_t count, ns;
};

struct rs_profile {
    uint32_t ranks;      /* ranks in the scope that have records in the range */
    uint64_t rank_steps; /* steps of those ranks that started in the range */
    uint64_t t0, t1;     /* earliest start and latest end of the records seen */
    struct rs_profile_item *items;
    size_t n_items;
    struct rs_profile_stall *stalls;
    size_t n_stalls;
    uint64_t stall_samples;
    struct rs_profile_sync syncs[RS_COPY_KIND_COUNT]; /* by kind; only host-side kinds are set */
    /* private: hash indexes into items[] and stalls[] (position + 1; 0 = empty slot) */
    uint32_t *item_index, *stall_index;
    size_t item_slots, stall_slots;
};

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

/* [{"name" ("Stream Sync", ..., "Launch Wait"), "ms", "calls"}] per host-side kind with records,
 * in the units of `per` (rs_profile_divisor); NULL without memory. */
json_t *rs_profile_syncs_json(const struct rs_profile *p, double per);

/* Samples of `reason` over all kernels (0 when none). */
uint64_t rs_profile_reason_samples(const struct rs_profile *p, const char *reason);

/* A stall reason as people read it: CUPTI's name without "smsp__pcsamp_warps_issue_stalled_"
 * (a pointer into `reason`). */
const char *rs_profile_reason_short(const char *reason);

/* Whether `rank` is in the scope. */
bool rs_profile_scope_has(const struct rs_profile_scope *scope, uint32_t rank);

/* {"job", "rank" (null = all), "peers_of" (only for peers), "since_ns", "until_ns", "ranks",
 * "rank_steps", "unit"}: how a scope is described in answers. */
json_t *rs_profile_scope_json(const struct rs_profile_scope *scope, const struct rs_profile *p);

#endif
