/* "Busy is not efficient" (issue 26): beside NVML's utilisation — the share of time some kernel
 * ran, however little of the GPU it used — what the rank's GPU did over the same window, from its
 * stored kernel records (profile.h): the share of the window its kernels covered (the union of
 * their intervals) and the share of kernel time in kernels that use tensor cores, told by name
 * (rs_gpu_kernel_uses_tensor_cores). A GPU at 98% "utilisation" running FMA-pipe GEMMs shows as
 * such. */
#ifndef RS_QUERY_GPU_BUSY_H
#define RS_QUERY_GPU_BUSY_H

#include "storage/store.h"

#include <stdbool.h>
#include <stdint.h>

struct rs_gpu_busy {
    bool known;          /* kernel records with intervals in the window (false: none, or windows
                            only: summarized or rolled-up kernels have no intervals) */
    double busy_share;   /* union of kernel intervals / the span of the records, 0..1 */
    double tensor_share; /* kernel time in tensor-core kernels / all kernel time, 0..1 */
};

/* True when a kernel's name says it runs on tensor cores: HMMA/IMMA/GMMA (wgmma) instructions,
 * CUTLASS "tensorop" kernels, cuBLAS/cuDNN tile names of MMA shapes (16816, 1688, 884gemm, 8816),
 * or "xmma" kernels that do not say "ffma" (those run on the FMA pipes). A heuristic: names are all
 * the store keeps of a kernel. */
bool rs_gpu_kernel_uses_tensor_cores(const char *name);

/* The figures above for `rank` of `job` over kernels that started in [t0, t1). Returns 0 (out
 * filled; known false without kernel records), -ENOMEM or a storage error. */
int rs_gpu_busy_of(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                   struct rs_gpu_busy *out);

#endif
