/* The simulator's step template: one training step of a real data-parallel job, kernel by kernel,
 * measured from the PyTorch profiler traces in tests/fixtures/kineto-h200x2 (DDP, 4 x
 * Linear(8192, 8192) + GELU, batch 1024, SGD, 2 x H200, NCCL 2.28.9; baseline rank 0, one step).
 * Durations are the traced medians; names are the traced kernel names. */
#ifndef RS_SIM_PROFILE_H
#define RS_SIM_PROFILE_H

#include <stddef.h>
#include <stdint.h>

enum sim_op_kind {
    SIM_KERNEL, /* compute kernel on the compute stream */
    SIM_MEMCPY, /* device-to-device copy on the compute stream */
    SIM_MEMSET,
    SIM_ALLREDUCE, /* gradient bucket ready: an NCCL AllReduce starts on the NCCL stream */
    SIM_WAIT_COMM, /* the optimizer waits for every AllReduce of the step */
};

struct sim_op {
    enum sim_op_kind kind;
    const char *name; /* kernel name (SIM_KERNEL, SIM_ALLREDUCE) */
    double us;        /* traced duration (for SIM_ALLREDUCE: without waiting) */
    uint64_t bytes;   /* SIM_MEMCPY, SIM_MEMSET, SIM_ALLREDUCE */
};

extern const struct sim_op rs_sim_step_ops[];
extern const size_t rs_sim_step_n_ops;

#define RS_SIM_COMPUTE_STREAM 7
#define RS_SIM_NCCL_STREAM 17
#define RS_SIM_LAUNCH_GAP_US 1.7 /* median gap between back-to-back kernels in the trace */
#define RS_SIM_HOST_GAP_US 60.0  /* gap between the end of one step and the next first kernel */

/* Sum of the template's durations on the critical path (no waiting), in microseconds. */
double rs_sim_profile_step_us(void);

#endif
