/* "Busy is not efficient" (issue 26): beside NVML's utilisation — the share of time some kernel
 * ran, however little of the GPU it used — what the rank's GPU did over the same window, from its
 * stored kernel records (profile.h): the share of the window its kernels covered (the union of
 * their intervals) and the share of kernel time in kernels that use tensor cores, told by name
 * (rs_gpu_kernel_uses_tensor_cores), and — when PC sampling was on — the share of its stall
 * samples whose reason is waiting on memory (rs_gpu_stall_reason_is_memory). A GPU at 98%
 * "utilisation" running FMA-pipe GEMMs, or mostly waiting for loads, shows as such. */
#ifndef RS_QUERY_GPU_BUSY_H
#define RS_QUERY_GPU_BUSY_H

#include "storage/store.h"

#include <stdbool.h>
#include <stdint.h>

/* How busy_share was found. */
enum rs_gpu_busy_basis {
    RS_GPU_BUSY_UNION,  /* the union of kernel and NCCL kernel intervals: exact */
    RS_GPU_BUSY_SUMMED, /* kernel windows (summarized or rolled-up kernels have no intervals):
                           their kernel time and the NCCL kernels' summed — kernels that overlap
                           on several streams count twice — capped at 1 */
};

struct rs_gpu_busy {
    bool known;          /* kernels (records or windows) in the window; false: why_unknown says */
    double busy_share;   /* busy time / the span of the records, 0..1 (basis) */
    double tensor_share; /* kernel time in tensor-core kernels / all kernel time, 0..1 */
    enum rs_gpu_busy_basis basis;
    const char *why_unknown; /* static text when !known, else NULL */
    /* memory-bound share: stall samples whose reason is waiting on memory / all stall samples of
     * the rank's kernels in the window (PC sampling); memory_known false without samples */
    bool memory_known;
    double memory_share;
    uint64_t stall_samples, memory_samples;
    const char *why_no_memory; /* static text when !memory_known, else NULL */
};

/* True when a PC-sampling stall reason (CUPTI's name, with or without its
 * "smsp__pcsamp_warps_issue_stalled_" prefix) is a wait on memory: a load's result (long
 * scoreboard: L1TEX, global, local, texture), the load/store, MIO or texture queues full
 * (lg/mio/tex throttle), stores draining at exit, an immediate-constant cache miss. */
bool rs_gpu_stall_reason_is_memory(const char *reason);

/* True when a kernel's name says it runs on tensor cores: HMMA/IMMA/GMMA (wgmma) instructions,
 * CUTLASS "tensorop" kernels, cuBLAS/cuDNN tile names of MMA shapes (16816, 1688, 884gemm, 8816),
 * or "xmma" kernels that do not say "ffma" (those run on the FMA pipes). A heuristic: names are all
 * the store keeps of a kernel. */
bool rs_gpu_kernel_uses_tensor_cores(const char *name);

/* The figures above for `rank` of `job` over kernels (records and windows) and stall samples of
 * [t0, t1). Returns 0 (out filled; known / memory_known false, with their why, without kernels or
 * samples), -ENOMEM or a storage error. */
int rs_gpu_busy_of(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                   struct rs_gpu_busy *out);

#endif
