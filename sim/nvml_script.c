/* Simulated GPUs for the stand-in NVML (see nvml_script.h). */
#include "sim/nvml_script.h"

#include <errno.h>
#include <stdio.h>

#define SM_MAX_MHZ 1980.0 /* an H100 SXM's */

void
rs_sim_gpu_uuid(char *out, size_t len, uint64_t seed, uint32_t rank)
{
    snprintf(out, len, "GPU-5a11%04x-0000-4000-8000-%012x", (unsigned)(seed & 0xffff), rank);
}

int
rs_sim_nvml_script_write(const char *path, uint32_t ranks, uint64_t seed, int64_t slow_rank,
                         double slowdown)
{
    FILE *f = fopen(path, "w");
    char uuid[64];

    if (!f)
        return -errno;
    fprintf(f, "# written by rankscope-sim for tests/tools/fake_nvml.c (FAKE_NVML_SCRIPT)\n");
    for (uint32_t r = 0; r < ranks; r++) {
        rs_sim_gpu_uuid(uuid, sizeof uuid, seed, r);
        if ((int64_t)r == slow_rank)
            fprintf(f, "gpu %s sm=%.0f reasons=0x4 power_frac=0.8 power=699 temp=81\n", uuid,
                    SM_MAX_MHZ / (1 + slowdown));
        else
            fprintf(f, "gpu %s\n", uuid);
    }
    return fclose(f) == 0 ? 0 : -errno;
}
