/* Synthetic PC-sampling stall counts for the simulator: each simulated kernel yields samples in
 * proportion to its duration (one per SAMPLE_US), spread over stall reasons by a mix typical of
 * its class (GEMM: math pipe, scoreboard; element-wise and reductions: memory). Time a GPU fault
 * adds to a kernel is sampled as long_scoreboard (waiting on memory): the simulated straggler
 * behaves like a GPU with degraded memory, so its stall mix differs from its peers'. Counts are
 * aggregated per (rank, kernel, reason) until emitted, as the collector does. Names are CUPTI's
 * (smsp__pcsamp_warps_issue_stalled_<reason>). */
#ifndef RS_SIM_STALLS_H
#define RS_SIM_STALLS_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_stalls sim_stalls;

/* Receives one aggregated count. */
typedef void (*sim_stall_emit)(void *arg, uint32_t rank, const char *kernel, const char *reason,
                               uint64_t pc_offset, uint64_t count);

/* Counters for `ranks` ranks over the kernels of the step template. */
int sim_stalls_new(uint32_t ranks, sim_stalls **out);
void sim_stalls_free(sim_stalls *s);

/* Samples one kernel run: template op `op` (a SIM_KERNEL) of `rank` ran `us` microseconds, of which
 * `fault_us` were added by a fault. */
void sim_stalls_add(sim_stalls *s, uint32_t rank, size_t op, double us, double fault_us);

/* Emits and resets the counts of `rank` (nothing when none). */
void sim_stalls_emit(sim_stalls *s, uint32_t rank, sim_stall_emit emit, void *arg);

#endif
