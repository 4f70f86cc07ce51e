/* Waiting for a context's GPU work to finish, but not for ever. cuCtxSynchronize blocks until
 * every stream of the context is idle; in someone else's training process that can be never (two
 * pipeline-parallel ranks whose queued sends each wait for a receive the other has not launched,
 * while both wait here). So a helper thread of ours makes the call and the caller waits for it
 * at most `wait_ms`: on time it learns the GPU drained; if not, it goes on (and so can the
 * training) while the helper keeps waiting alone; until the helper is back, later waits answer
 * "not drained" at once. Process-global, like the collector's CUPTI state; the helper thread is
 * started on the first wait. A forked child gets "not drained" at once (no helper there). */
#ifndef RS_COLLECTOR_GPU_DRAIN_H
#define RS_COLLECTOR_GPU_DRAIN_H

#include <cuda.h>
#include <stdbool.h>

struct rs_gpu_drain_driver {
    CUresult (*push)(CUcontext);   /* cuCtxPushCurrent */
    CUresult (*pop)(CUcontext *);  /* cuCtxPopCurrent */
    CUresult (*synchronize)(void); /* cuCtxSynchronize */
};

/* Says which driver calls to use (before the first wait). */
void rs_gpu_drain_init(const struct rs_gpu_drain_driver *driver);

/* True when ctx's GPU work finished within wait_ms of the call (the driver said so); false when
 * it did not, the driver failed, or the helper is still busy with an earlier wait. */
bool rs_gpu_drain_wait(CUcontext ctx, unsigned wait_ms);

/* Lets the helper thread end once it is free; never blocks. */
void rs_gpu_drain_stop(void);

#endif
