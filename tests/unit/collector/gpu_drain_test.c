/* Unit tests of the bounded wait for the GPU to drain (node-agent/collector/gpu_drain.h) with a
 * stand-in driver whose synchronize can be held: on time it says drained; held, the wait ends
 * after wait_ms and later waits answer at once while the helper is still out; released, it works
 * again; a failing driver call, a forked child and a stopped helper all answer "not drained". */
#include "common/clock.h"
#include "node-agent/collector/gpu_drain.h"
#include "tests/t.h"

#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

static _Atomic bool held, push_fails;
static atomic_int syncs;
static int ctx_storage;
#define CTX ((CUcontext)&ctx_storage)

static CUresult
push(CUcontext ctx)
{
    return ctx == CTX && !push_fails ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult
pop(CUcontext *ctx)
{
    *ctx = CTX;
    return CUDA_SUCCESS;
}

static CUresult
synchronize(void)
{
    syncs++;
    while (held)
        rs_clock_sleep_ns(1000000);
    return CUDA_SUCCESS;
}

static double
ms_since(uint64_t t0)
{
    return (double)(rs_clock_mono_ns() - t0) / 1e6;
}

static void
bounded_wait(void)
{
    uint64_t t0;

    rs_gpu_drain_init(&(struct rs_gpu_drain_driver){push, pop, synchronize});
    T_CHECK(rs_gpu_drain_wait(CTX, 1000));
    T_EQ(syncs, 1);

    held = true;
    t0 = rs_clock_mono_ns();
    T_CHECK(!rs_gpu_drain_wait(CTX, 50));
    T_CHECK(ms_since(t0) >= 49 && ms_since(t0) < 1000);
    T_EQ(syncs, 2);
    t0 = rs_clock_mono_ns();
    T_CHECK(!rs_gpu_drain_wait(CTX, 1000)); /* the helper is still out: at once, no new call */
    T_CHECK(ms_since(t0) < 100);
    T_EQ(syncs, 2);

    held = false;
    rs_clock_sleep_ns(20000000); /* the helper comes back */
    T_CHECK(rs_gpu_drain_wait(CTX, 1000));
    T_EQ(syncs, 3);

    push_fails = true; /* the context cannot be made current there */
    T_CHECK(!rs_gpu_drain_wait(CTX, 1000));
    push_fails = false;

    pid_t child = fork();
    if (child == 0)
        _exit(rs_gpu_drain_wait(CTX, 1000) ? 1 : 0); /* no helper in a forked child */
    int status = -1;
    T_CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0);

    rs_gpu_drain_stop();
    T_CHECK(!rs_gpu_drain_wait(CTX, 1000));
    T_EQ(syncs, 3);
}

int
main(void)
{
    T_RUN(bounded_wait);
    return T_DONE("collector/gpu_drain");
}
