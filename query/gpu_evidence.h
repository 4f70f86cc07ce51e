/* Hardware evidence for straggler verdicts (docs/analysis.md "Hardware evidence"): what the
 * straggler's GPU did differently from its peers' over the verdict's windows, from NVML telemetry
 * (gpus.h) — lower SM clock, clocks held down (power cap, thermal, HW slowdown) a larger share of
 * the time, ECC errors or XIDs the peers did not have, a PCIe link trained below its maximum or
 * fewer NVLinks up than the peers. Only what differs from the peers counts: a fleet that is all
 * power-capped explains no one rank's slowness. Each item says it with numbers ("SM clock 1,410
 * MHz vs peers' 1,980"), and the verdict's recommendation names the hardware check to make. */
#ifndef RS_QUERY_GPU_EVIDENCE_H
#define RS_QUERY_GPU_EVIDENCE_H

#include "storage/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RS_GPU_EVIDENCE_MAX 6

/* What kind of difference an item is (its JSON "kind"). */
enum rs_gpu_evidence_kind {
    RS_GPU_EV_SM_CLOCK, /* "sm_clock": mean SM clock below the peers' */
    RS_GPU_EV_THROTTLE, /* "throttle": a clock-event reason held a larger share of the time */
    RS_GPU_EV_ECC,      /* "ecc": uncorrected ECC errors (or row remapping pending/failed) */
    RS_GPU_EV_XID,      /* "xid": XID events */
    RS_GPU_EV_PCIE,     /* "pcie": link width or generation below its maximum */
    RS_GPU_EV_NVLINK,   /* "nvlink": fewer NVLinks up, or more link errors */
};

struct rs_gpu_evidence_item {
    enum rs_gpu_evidence_kind kind;
    char what[32];  /* a reason name ("power_cap") or the figure ("sm_mhz", "pcie_width") */
    double value;   /* the straggler's figure */
    double peers;   /* the peers' median */
    char text[160]; /* for people */
};

/* A verdict's hardware evidence. telemetry: the rank's GPU had readings in the window (false:
 * nothing to compare — no agent telemetry, or NVML absent on its node). */
struct rs_gpu_evidence {
    bool telemetry;
    size_t peers_with_telemetry;
    struct rs_gpu_evidence_item items[RS_GPU_EVIDENCE_MAX];
    size_t n;
    char recommendation[200]; /* "" when no item */
};

/* The evidence of `rank` of `job` against its peers (every other rank of the job with readings),
 * over readings taken in [t0, t1). Fills *out; an unknown job or a rank without readings gives
 * telemetry false and no items. Returns 0, -ENOMEM or a storage error. */
int rs_gpu_evidence_for(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                        struct rs_gpu_evidence *out);

/* The same for several ranks of one job at once, reading every rank's telemetry once: ranks[i]'s
 * evidence into out[i]. */
int rs_gpu_evidence_for_ranks(rs_store_read *r, const char *job, const uint32_t *ranks, size_t n,
                              uint64_t t0, uint64_t t1, struct rs_gpu_evidence *out);

/* The evidence as JSON (docs/openapi.yaml HardwareEvidence), or NULL without memory. */
json_t *rs_gpu_evidence_json(const struct rs_gpu_evidence *e);

#endif
