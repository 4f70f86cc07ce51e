/* A bounded wait for the GPU to drain, on a helper thread (see gpu_drain.h). */
#include "node-agent/collector/gpu_drain.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake, done; /* done: on CLOCK_MONOTONIC */
    struct rs_gpu_drain_driver driver;
    pid_t owner; /* the process whose helper runs; 0: none yet */
    bool quit;
    /* requests asked and served (the last served one's answer in `drained`), and its context */
    uint64_t asked, served;
    bool drained;
    CUcontext ctx;
} d = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

void
rs_gpu_drain_init(const struct rs_gpu_drain_driver *driver)
{
    pthread_mutex_lock(&d.lock);
    d.driver = *driver;
    pthread_mutex_unlock(&d.lock);
}

static void *
helper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&d.lock);
    for (;;) {
        while (!d.quit && d.served == d.asked)
            pthread_cond_wait(&d.wake, &d.lock);
        if (d.quit)
            break;
        uint64_t serving = d.asked;
        CUcontext ctx = d.ctx, popped;
        pthread_mutex_unlock(&d.lock);
        bool ok = d.driver.push(ctx) == CUDA_SUCCESS;
        if (ok) {
            ok = d.driver.synchronize() == CUDA_SUCCESS;
            d.driver.pop(&popped);
        }
        pthread_mutex_lock(&d.lock);
        d.served = serving;
        d.drained = ok;
        pthread_cond_broadcast(&d.done);
    }
    d.owner = 0;
    pthread_mutex_unlock(&d.lock);
    return NULL;
}

/* The helper of this process, started once; false when it cannot be. d.lock held. */
static bool
helper_running(void)
{
    pthread_condattr_t attr;
    pthread_t thread;

    if (d.owner == getpid())
        return true;
    if (d.owner || d.quit || !d.driver.synchronize)
        return false; /* a forked child (its parent's helper is not here), or stopped */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&d.done, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&thread, NULL, helper_main, NULL) != 0)
        return false;
    pthread_detach(thread);
    d.owner = getpid();
    return true;
}

bool
rs_gpu_drain_wait(CUcontext ctx, unsigned wait_ms)
{
    struct timespec until;
    bool drained = false;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += wait_ms / 1000;
    until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&d.lock);
    if (helper_running() && d.served == d.asked) { /* not still busy with an earlier wait */
        uint64_t mine = ++d.asked;
        d.ctx = ctx;
        pthread_cond_signal(&d.wake);
        while (d.served != mine && pthread_cond_timedwait(&d.done, &d.lock, &until) == 0)
            ;
        drained = d.served == mine && d.drained;
    }
    pthread_mutex_unlock(&d.lock);
    return drained;
}

void
rs_gpu_drain_stop(void)
{
    pthread_mutex_lock(&d.lock);
    d.quit = true;
    pthread_cond_signal(&d.wake);
    pthread_mutex_unlock(&d.lock);
}
