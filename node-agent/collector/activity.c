/* CUPTI buffers, activity kinds and the flush thread (see activity.h). */
#include "node-agent/collector/activity.h"

#include "common/clock.h"
#include "node-agent/collector/log.h"

#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct {
    rs_convert *conv;
    struct rs_activity_options opts;
    pthread_mutex_t lock; /* conv: flush thread vs. CUPTI's worker thread */
    pthread_mutex_t wake_lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool running, stopping;
    /* Buffers we handed to CUPTI, and those it handed back to us: after the final forced flush
     * the rest went to another client's callback (see taken_over). */
    atomic_size_t buffers_out, buffers_back;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .wake_lock = PTHREAD_MUTEX_INITIALIZER,
       .wake = PTHREAD_COND_INITIALIZER};

/* Application thread (whichever filled the last buffer): must be quick. */
static void CUPTIAPI
buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* calloc of a large block is an mmap of zero pages: zeroed without touching them, which is
     * what CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER=1 asks of us. NULL drops records; CUPTI
     * counts them and we report the count. */
    *buffer = calloc(1, g.opts.buffer_bytes);
    *size = *buffer ? g.opts.buffer_bytes : 0;
    *max_records = 0;
    if (*buffer)
        atomic_fetch_add_explicit(&g.buffers_out, 1, memory_order_relaxed);
}

/* CUPTI's worker thread or our flush thread (inside cuptiActivityFlushAll). */
static void CUPTIAPI
buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    CUpti_Activity *record = NULL;
    size_t dropped = 0;

    atomic_fetch_add_explicit(&g.buffers_back, 1, memory_order_relaxed);
    pthread_mutex_lock(&g.lock);
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        rs_convert_record(g.conv, record);
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        rs_convert_count_dropped(g.conv, dropped);
    pthread_mutex_unlock(&g.lock);
    free(buffer);
}

static void
send_converted(void)
{
    struct rs_clock_pair clock = {0, 0};

    cuptiGetTimestamp(&clock.source_ns); /* CUPTI's clock, paired with CLOCK_REALTIME */
    clock.realtime_ns = rs_clock_realtime_ns();
    pthread_mutex_lock(&g.lock);
    if (rs_convert_check_clock(g.conv, &clock))
        rs_collector_log("CUPTI timestamps are not CLOCK_REALTIME (off by %.3f s): another tool "
                         "replaced CUPTI's clock",
                         ((double)clock.realtime_ns - (double)clock.source_ns) / 1e9);
    rs_convert_flush(g.conv, &clock);
    pthread_mutex_unlock(&g.lock);
}

static void *
flush_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g.wake_lock);
    while (!g.stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (long)(g.opts.flush_ms % 1000) * 1000000L;
        until.tv_sec += g.opts.flush_ms / 1000 + until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&g.wake, &g.wake_lock, &until);
        if (g.stopping)
            break;
        pthread_mutex_unlock(&g.wake_lock);
        /* Completed buffers only (0): no GPU synchronisation, no incomplete records. */
        cuptiActivityFlushAll(0);
        rs_pcsampling_tick(rs_clock_mono_ns());
        send_converted();
        pthread_mutex_lock(&g.wake_lock);
    }
    pthread_mutex_unlock(&g.wake_lock);
    return NULL;
}

static int
check(CUptiResult rc, const char *what)
{
    const char *text = NULL;

    if (rc == CUPTI_SUCCESS)
        return 0;
    cuptiGetResultString(rc, &text);
    rs_collector_log("%s failed: %s; collection is off in this process", what,
                     text ? text : "unknown CUPTI error");
    return (int)rc;
}

/* Turns on the host synchronization records `how` asks for; false when CUPTI refused. */
static bool
sync_start(enum rs_activity_sync how)
{
    CUpti_CallbackId cbid;

    switch (how) {
    case RS_ACTIVITY_SYNC_OFF:
        return true;
    case RS_ACTIVITY_SYNC_RECORDS:
        /* only completed ones: a query that found work still running is not a wait */
        return cuptiActivityEnableAllSyncRecords(0) == CUPTI_SUCCESS &&
               cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) == CUPTI_SUCCESS;
    case RS_ACTIVITY_SYNC_API:
        for (size_t i = 0; rs_convert_sync_call(i, &cbid); i++)
            if (cuptiActivityEnableDriverApi(cbid, 1) != CUPTI_SUCCESS)
                return false;
        return true;
    }
    return false;
}

int
rs_activity_start(rs_convert *conv, const struct rs_activity_options *opts)
{
    static const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
    uint8_t zeroed = 1;
    size_t len = sizeof zeroed;
    int rc;

    g.conv = conv;
    g.opts = *opts;
    if ((rc = check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len,
                                              &zeroed),
                    "cuptiActivitySetAttribute(ZEROED_OUT)")) ||
        (rc = check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                    "cuptiActivityRegisterCallbacks")))
        return rc;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if ((rc = check(cuptiActivityEnable(kinds[i]), "cuptiActivityEnable"))) {
            for (size_t j = 0; j < i; j++)
                cuptiActivityDisable(kinds[j]);
            return rc;
        }
    }
    /* Host synchronizations (cudaStreamSynchronize, .item(), ...); optional. */
    if (!sync_start(opts->sync))
        rs_collector_log("host synchronization records unavailable");
    /* NVTX markers (step ranges) when NVTX is routed to CUPTI; optional. */
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER) != CUPTI_SUCCESS)
        rs_collector_log("NVTX markers unavailable: steps will be inferred, not read");
    /* PC sampling after the activity kinds: CUPTI refuses CONCURRENT_KERNEL after it (measured) */
    if (opts->pc_sampling)
        rs_pcsampling_start(conv, &g.lock, opts->pc_sampling);
    if (pthread_create(&g.thread, NULL, flush_main, NULL) != 0) {
        rs_collector_log("cannot start the flush thread; records are sent only at exit");
        return 0;
    }
    g.running = true;
    return 0;
}

/* After the final forced flush CUPTI has returned every buffer; ones that did not come back to
 * us went to a client that registered its own buffer callbacks after us (torch.profiler's Kineto,
 * a tool attached later), with the records in them, and ours stopped at that point. Said once on
 * stderr and to the server (docs/collector.md "torch.profiler in the same process"). */
static void
taken_over(void)
{
    size_t out = atomic_load(&g.buffers_out), back = atomic_load(&g.buffers_back);
    char text[200];

    if (back >= out)
        return;
    snprintf(text, sizeof text,
             "another CUPTI client (torch.profiler?) took the activity buffers: %zu of ours went "
             "to it, and collection stopped there",
             out - back);
    rs_collector_log("%s", text);
    pthread_mutex_lock(&g.lock);
    rs_convert_report(g.conv, RS_COLLECTOR_STEPPED_ASIDE, text);
    pthread_mutex_unlock(&g.lock);
}

void
rs_activity_finish(void)
{
    if (g.running) {
        pthread_mutex_lock(&g.wake_lock);
        g.stopping = true;
        pthread_cond_signal(&g.wake);
        pthread_mutex_unlock(&g.wake_lock);
        pthread_join(g.thread, NULL);
        g.running = false;
    }
    if (!g.conv)
        return;
    rs_pcsampling_finish();
    /* Forced: returns every buffer, also ones with records still in flight. */
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    taken_over();
    send_converted();
}

void
rs_activity_abandon(void)
{
    g.running = false;
    g.conv = NULL;
}
