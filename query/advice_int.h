/* Inside the advisor (advice.h): the per-rank analysis and the kernel-name classes it uses. */
#ifndef RS_QUERY_ADVICE_INT_H
#define RS_QUERY_ADVICE_INT_H

#include "query/advice.h"
#include "query/steps.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Host<->device bandwidth of pinned copies the estimates assume (GB/s): 49.6 GB/s measured for a
 * 16 MB pinned host-to-device copy on the GPU machine's H100 (PCIe 5; docs/BENCHMARKS.md). A copy
 * of at least RS__ADVICE_COPY_MIN_BYTES below RS__ADVICE_PAGEABLE_GBPS is taken for pageable
 * (6.6 GB/s measured there for a 128 MB pageable copy; pinned copies on PCIe 4 reach ~25 GB/s). */
#define RS__ADVICE_PINNED_GBPS 50.0
#define RS__ADVICE_PAGEABLE_GBPS 15.0
#define RS__ADVICE_COPY_MIN_BYTES (1u << 20)
/* Peak dense FP32 (CUDA cores) vs TF32 (tensor cores) of an H100 SXM, TFLOP/s (NVIDIA's data
 * sheet): an fp32 GEMM moved to tensor cores takes at least this share of its time. */
#define RS__ADVICE_FP32_TFLOPS 67.0
#define RS__ADVICE_TF32_TFLOPS 494.0
/* A GPU idle that starts within this of a host synchronization's end follows it. */
#define RS__ADVICE_SYNC_TOL_NS 50000ull
/* PC samples carry the time of the batch that sent them, drained every second or so after the
 * kernels ran, and are taken in windows (1 s every 60 s by default): the memory-stall share is
 * read from the samples sent in the RS__ADVICE_STALL_SPAN_NS before the steps' end and up to
 * RS__ADVICE_STALL_LAG_NS after it. */
#define RS__ADVICE_STALL_SPAN_NS 120000000000ull
#define RS__ADVICE_STALL_LAG_NS 10000000000ull
/* A chain: at least this many elementwise kernels back to back on one stream, in at least
 * RS__ADVICE_CHAIN_EVERY of the steps. */
#define RS__ADVICE_CHAIN_MIN 3
#define RS__ADVICE_CHAIN_EVERY 0.5

enum rs__advice_kclass {
    RS__ADVICE_K_OTHER,
    RS__ADVICE_K_ELEMENTWISE, /* PyTorch's elementwise kernels (not fused Triton/compiled ones) */
    RS__ADVICE_K_GEMM_FP32,   /* a GEMM on CUDA cores in fp32 (sgemm, ffma, simt) */
};

/* The class of a kernel by its (demangled) name. */
enum rs__advice_kclass rs__advice_kernel_class(const char *name);

/* A short form of a kernel name for people: PyTorch's functor or op ("GeluCUDAKernelImpl",
 * "tanh_kernel_cuda", "AUnaryFunctor") where the name has one, else the name cut before its
 * template or argument list; written to out[len]. */
void rs__advice_short_name(const char *name, char *out, size_t len);

/* The findings one rank shows over its steps rk->steps[0..n): out[kind] for every kind the rank
 * can tell (cost_ns 0 where it sees nothing); exposed communication from the step metrics; load
 * imbalance is the job's (advice.c). The timeline's findings come from the steps that have kernel
 * records; *no_kernels is set when none has (an agent that summarizes, records rolled up).
 * *stalls_seen is set when PC-sampling samples exist. Returns 0, -ENOMEM or a storage error. */
int rs__advice_rank(rs_store_read *r, const char *job, const struct rs_rank_steps *rk,
                    struct rs_advice_finding out[RS_ADVICE_KIND_COUNT], bool *stalls_seen,
                    bool *no_kernels);

/* Batch-size headroom (advice_batch.c). A batch RS__ADVICE_BATCH_FILL of the fullest GPU's memory
 * fits (room for the allocator's peaks and fragmentation), taking all memory used to grow with
 * the batch (weights and optimizer state do not: the true multiple is larger), at most
 * RS__ADVICE_BATCH_MAX times. Readings are taken every second or so: the window read is the
 * steps' span, widened to RS__ADVICE_BATCH_WINDOW_NS before the last step's end when shorter. */
#define RS__ADVICE_BATCH_FILL 0.8
#define RS__ADVICE_BATCH_MAX 8u
#define RS__ADVICE_BATCH_WINDOW_NS 10000000000ull

/* Reads the GPU memory readings of the ranks' GPUs over the steps in `ranks` and fills
 * a->ranks_with_memory, fullest_*, batch_factor. Returns 0 (no readings: ranks_with_memory 0),
 * -ENOMEM or a storage error. */
int rs__advice_memory(rs_store_read *r, const char *job, const struct rs_rank_steps *ranks,
                      size_t n_ranks, struct rs_advice *a);

/* The batch-size finding of one rank from f as rs__advice_rank left it (cost_ns: the median per
 * step of the GPU idle between kernels and after host synchronizations — per-step costs a larger
 * batch spreads over more samples; not the idle at the step's start nor copies, which grow with
 * the batch): cost_ns becomes that times 1 - 1/batch_factor, 0 when a->batch_factor is 0. */
void rs__advice_batch_rank(const struct rs_advice *a, struct rs_advice_finding *f);

#endif
