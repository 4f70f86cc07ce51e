/* The simulator's GPUs as NVML would show them: the UUID each simulated rank reports, and a script
 * for the stand-in NVML (tests/tools/fake_nvml.c) that an agent can load (--nvml-library), so that
 * `make demo` shows GPU telemetry: the slow rank's GPU held by its power cap at a clock lower by
 * the slowdown, the others at their maximum. */
#ifndef RS_SIM_NVML_SCRIPT_H
#define RS_SIM_NVML_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

/* The GPU UUID of simulated rank `rank` of a run with `seed` into out[len]. */
void rs_sim_gpu_uuid(char *out, size_t len, uint64_t seed, uint32_t rank);

/* Writes the stand-in NVML script of `ranks` GPUs to `path` (replaced): rank `slow_rank` (none
 * when negative) at 1,980 / (1 + slowdown) MHz, its SW power cap reason set and its power
 * violation counter growing 80% of the time. Returns 0 or -errno. */
int rs_sim_nvml_script_write(const char *path, uint32_t ranks, uint64_t seed, int64_t slow_rank,
                             double slowdown);

#endif
