/* The GPU sampling thread and its bounded hand-over to the agent's loop (see gpu_sampler.h).
 * NVML is opened on the thread too: a driver that hangs in nvmlInit stalls telemetry, not the
 * agent. */
#include "node-agent/gpu_sampler.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "node-agent/nvml.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_SLICE_MS 100u /* stop is noticed within this */
#define JOIN_WAIT_S 2      /* how long stop waits for a thread inside an NVML call */

struct rs_gpu_sampler {
    struct rs_gpu_sampler_options opts;
    char library[4096];
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop; /* under lock */
    /* under lock: a ring of held samples (their UUIDs point into nvml, which lives as long as the
     * sampler) and the counters */
    struct rs_gpu_sample *ring;
    size_t head, count;
    struct rs_gpu_sampler_stats stats;
    rs_nvml *nvml; /* the thread's */
};

static void
push(rs_gpu_sampler *s, const struct rs_gpu_sample *g)
{
    size_t cap = s->opts.max_samples;

    if (s->count == cap) { /* drop the oldest */
        s->head = (s->head + 1) % cap;
        s->count--;
        s->stats.dropped++;
    }
    s->ring[(s->head + s->count) % cap] = *g;
    s->count++;
    s->stats.samples++;
}

static uint64_t
thread_cpu_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleeps up to `ms` or until stopped; true when stopped. */
static bool
sleep_ms(rs_gpu_sampler *s, unsigned ms)
{
    struct timespec until;
    bool stop;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->lock);
    while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &until) == 0)
        ;
    stop = s->stop;
    pthread_mutex_unlock(&s->lock);
    return stop;
}

static bool
stopping(rs_gpu_sampler *s)
{
    pthread_mutex_lock(&s->lock);
    bool stop = s->stop;
    pthread_mutex_unlock(&s->lock);
    return stop;
}

/* Waits until `deadline_ns` (monotonic), taking XID events meanwhile; true when stopped. */
static bool
wait_until(rs_gpu_sampler *s, uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = rs_clock_mono_ns();
        if (now >= deadline_ns)
            return stopping(s);
        uint64_t left_ms = (deadline_ns - now + 999999) / 1000000;
        unsigned slice = left_ms < WAIT_SLICE_MS ? (unsigned)left_ms : WAIT_SLICE_MS;
        if (rs_nvml_wait_events(s->nvml, slice)) {
            if (stopping(s))
                return true;
        } else if (sleep_ms(s, slice)) {
            return true;
        }
    }
}

static void
log_open_failure(const char *library, int rc, const char *why)
{
    rs_log(RS_LOG_WARN, "RS-AGENT-NVML",
           "no GPU telemetry: %s %s (%s); the agent goes on without it", library,
           rc == RS_E_NOT_FOUND ? "cannot be loaded" : "does not initialize", why);
}

static void *
run(void *arg)
{
    rs_gpu_sampler *s = arg;
    char why[512] = "";
    int rc;

    if ((rc = rs_nvml_open(s->library, &s->nvml, why, sizeof why)) != 0) {
        log_open_failure(s->library, rc, why);
        return NULL;
    }
    unsigned n = rs_nvml_gpu_count(s->nvml);
    struct rs_nvml_stats ns;
    rs_nvml_get_stats(s->nvml, &ns);
    rs_log(RS_LOG_INFO, "RS-AGENT-NVML",
           "GPU telemetry from %s: %u GPUs every %llu ms (%u NVML functions missing)", s->library,
           n, (unsigned long long)s->opts.interval_ms, ns.missing_functions);
    pthread_mutex_lock(&s->lock);
    s->stats.gpus = n;
    s->stats.missing_functions = ns.missing_functions;
    pthread_mutex_unlock(&s->lock);
    uint64_t next = rs_clock_mono_ns();
    while (n > 0) {
        struct rs_gpu_sample g;
        for (unsigned i = 0; i < n; i++) {
            if (i > 0 && stopping(s)) /* a slow NVML: stop between GPUs, not after all */
                return NULL;
            rs_nvml_read(s->nvml, i, rs_clock_realtime_ns(), &g);
            pthread_mutex_lock(&s->lock);
            push(s, &g);
            pthread_mutex_unlock(&s->lock);
        }
        rs_nvml_get_stats(s->nvml, &ns);
        uint64_t cpu = thread_cpu_ns();
        pthread_mutex_lock(&s->lock);
        s->stats.field_errors = ns.field_errors;
        s->stats.unsupported = ns.unsupported;
        s->stats.xids = ns.xids;
        s->stats.cpu_ns = cpu;
        pthread_mutex_unlock(&s->lock);
        next += s->opts.interval_ms * 1000000ull;
        uint64_t now = rs_clock_mono_ns();
        if (next < now) /* a slow NVML: skip the readings missed rather than catch up at once */
            next = now;
        if (wait_until(s, next))
            break;
    }
    return NULL;
}

int
rs_gpu_sampler_start(const struct rs_gpu_sampler_options *o, rs_gpu_sampler **out)
{
    rs_gpu_sampler *s = calloc(1, sizeof *s);
    int rc;

    if (!s)
        return -ENOMEM;
    s->opts = *o;
    if (s->opts.interval_ms == 0)
        s->opts.interval_ms = 1;
    if (s->opts.max_samples == 0)
        s->opts.max_samples = 1;
    snprintf(s->library, sizeof s->library, "%s",
             o->library && o->library[0] ? o->library : RS_NVML_DEFAULT_LIBRARY);
    if (!(s->ring = calloc(s->opts.max_samples, sizeof *s->ring))) {
        free(s);
        return -ENOMEM;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    if ((rc = pthread_create(&s->thread, NULL, run, s)) != 0) {
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->lock);
        free(s->ring);
        free(s);
        return -rc;
    }
    *out = s;
    return 0;
}

size_t
rs_gpu_sampler_take(rs_gpu_sampler *s, struct rs_gpu_sample **out)
{
    size_t n, text = 0;
    struct rs_gpu_sample *v;

    *out = NULL;
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    n = s->count;
    for (size_t i = 0; i < n; i++)
        text += strlen(s->ring[(s->head + i) % s->opts.max_samples].uuid) + 1;
    if (n == 0 || !(v = malloc(n * sizeof *v + text))) {
        pthread_mutex_unlock(&s->lock);
        return 0; /* without memory the samples wait for the next take */
    }
    char *p = (char *)(v + n);
    for (size_t i = 0; i < n; i++) {
        v[i] = s->ring[(s->head + i) % s->opts.max_samples];
        size_t len = strlen(v[i].uuid) + 1;
        memcpy(p, v[i].uuid, len);
        v[i].uuid = p;
        p += len;
    }
    s->head = s->count = 0;
    pthread_mutex_unlock(&s->lock);
    *out = v;
    return n;
}

void
rs_gpu_samples_free(struct rs_gpu_sample *v)
{
    free(v);
}

void
rs_gpu_sampler_get_stats(rs_gpu_sampler *s, struct rs_gpu_sampler_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    *out = s->stats;
    pthread_mutex_unlock(&s->lock);
}

void
rs_gpu_sampler_stop(rs_gpu_sampler *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += JOIN_WAIT_S;
    if (pthread_timedjoin_np(s->thread, NULL, &until) != 0) {
        /* stuck in the driver (a hung GPU): leave the thread and what it uses to the process's
         * exit rather than hang the agent's shutdown */
        rs_log(RS_LOG_WARN, "RS-AGENT-NVML",
               "the GPU sampling thread is stuck in an NVML call: left behind at exit");
        pthread_detach(s->thread);
        return;
    }
    rs_nvml_close(s->nvml);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s->ring);
    free(s);
}
