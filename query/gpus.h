/* GPU telemetry per rank of a job (docs/telemetry.md): what each rank's GPU did over a time
 * window, from the NVML readings its node's agent sent (storage/store.h "GPU telemetry") —
 * clocks against their maxima, the share of the window each clock-event (throttle) reason held
 * the clocks down, power against its limit, temperature, utilisation, memory errors, XIDs and the
 * state of its PCIe and NVLink links. Answers `rankscope gpus`, GET /v1/jobs/{job}/gpus, the GPU
 * gauges of /metrics and the hardware evidence of straggler verdicts (gpu_evidence.h). */
#ifndef RS_QUERY_GPUS_H
#define RS_QUERY_GPUS_H

#include "query/gpu_busy.h"
#include "storage/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The clock-event reasons a summary reports, in this order (rs_gpu_reason_name). */
enum rs_gpu_throttle {
    RS_GPU_THROTTLE_POWER_CAP,   /* SW power cap */
    RS_GPU_THROTTLE_HW_SLOWDOWN, /* HW slowdown (power brake or thermal, by the board) */
    RS_GPU_THROTTLE_SW_THERMAL,
    RS_GPU_THROTTLE_HW_THERMAL,
    RS_GPU_THROTTLE_POWER_BRAKE,
    RS_GPU_THROTTLE_SYNC_BOOST,
    RS_GPU_THROTTLE_COUNT
};

/* "power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "power_brake", "sync_boost". */
const char *rs_gpu_throttle_name(enum rs_gpu_throttle t);

/* One rank's GPU over a window. Means are over the readings that had the field (present bits);
 * counter figures are growth over the window (last reading minus first). */
struct rs_gpu_summary {
    uint32_t rank;
    char host[RS_STORE_HOST_MAX], gpu_uuid[RS_STORE_UUID_MAX];
    size_t samples;
    uint64_t first_ns, last_ns; /* of the readings */
    uint32_t present;           /* union of the readings' enum rs_gpu_field bits */
    double sm_mhz, sm_max_mhz, mem_mhz, mem_max_mhz;
    /* share of the readings (0..1) that had each reason set (RS_GPU_CLOCK_REASONS) */
    double throttle_share[RS_GPU_THROTTLE_COUNT];
    /* share of the window NVML counted the clocks held down by power / thermal (violation
     * counters, RS_GPU_VIOLATIONS: more exact than the readings' reasons) */
    bool has_violation_share;
    double power_violation_share, thermal_violation_share;
    double power_w, power_limit_w, temperature_c, temperature_max_c, util_gpu_pct, util_mem_pct;
    double mem_used_mib, mem_total_mib;                    /* largest used */
    uint64_t ecc_corrected, ecc_uncorrected;               /* growth */
    uint64_t ecc_corrected_total, ecc_uncorrected_total;   /* newest (since the driver loaded) */
    uint32_t remapped_correctable, remapped_uncorrectable; /* newest */
    bool remap_pending, remap_failed;                      /* in any reading */
    uint64_t xids;                                         /* events in the window */
    uint32_t last_xid;
    uint32_t pcie_gen, pcie_gen_max, pcie_width, pcie_width_max; /* lowest current, newest max */
    uint64_t pcie_replays, nvlink_errors;                        /* growth */
    uint32_t nvlink_up;                                          /* fewest active */
    struct rs_gpu_busy busy; /* what its kernels did over the window (gpu_busy.h) */
};

/* The summaries of every rank of `job` over readings taken in [t0, t1), rank order, in a new
 * array (*out, caller frees; NULL when *n is 0). Ranks without readings are included (samples
 * 0). `busy` is left unknown here (reading kernels costs more: rs_query_gpus fills it). Returns 0,
 * RS_E_NOT_FOUND (no such job), -ENOMEM or a storage error. */
int rs_gpu_summaries(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1,
                     struct rs_gpu_summary **out, size_t *n);

/* One summary as JSON (docs/openapi.yaml GpuSummary), or NULL without memory. */
json_t *rs_gpu_summary_json(const struct rs_gpu_summary *s);

/* The window the answers use by default: `window_s` seconds up to the job's newest data (its
 * newest record or the server's last receipt, whichever is later), plus a minute for readings
 * that trail it. */
int rs_gpu_default_window(rs_store_read *r, const char *job, double window_s, uint64_t *t0,
                          uint64_t *t1);

/* GET /v1/jobs/{job}/gpus: {"job", "window": {since_ns, until_ns}, "gpus": [summary...]}, each
 * summary with its kernels' busy and tensor-core shares over the window (gpu_busy.h).
 * t1 == 0: the default window of `window_s`. Returns 0, RS_E_NOT_FOUND, or an error above. */
int rs_query_gpus(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1, double window_s,
                  json_t **out);

#endif
