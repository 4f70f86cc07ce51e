/* The CUPTI floor: the least a CUPTI activity client can do, as an injection library for the
 * launch-bound benchmark (tests/bench/collector_overhead.sh, LAUNCH_VARIANTS). It turns on
 * CONCURRENT_KERNEL only, hands CUPTI zeroed buffers, counts the records it gets back and frees
 * them; no conversion, no agent, no other kinds. The collector's extra cost per launch over this
 * is ours; the rest is CUPTI's instrumentation of every launch.
 *
 * Settings (environment), to price CUPTI's own attributes:
 *   FLOOR_BUFFER_KB         activity buffer size (4096, as the collector's default)
 *   FLOOR_PINNED=1          CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED (CUPTI keeps its
 *                           timestamps in pinned host memory instead of device memory)
 *   FLOOR_DEVICE_BUFFER_MB  CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE (CUPTI's default ~3 MB)
 *   FLOOR_LATENCY=1         cuptiActivityEnableLatencyTimestamps(1): kernel records also carry
 *                           when the launch was queued and submitted; also with a FLOOR_STAGE
 *                           short of kernel (the attribute set, no kernel records: what it costs
 *                           between kernel-tracing windows); =2: turned on 300 ms after start
 *                           from another thread (whether a window could set it late: the exit
 *                           line counts kernel records with a queue time)
 *   FLOOR_LAUNCH_API=1      driver-API records of the kernel-launch calls (cuLaunchKernel, -Ex,
 *                           their _ptsz forms), as a collector recording launches would need;
 *                           =2: the same, turned on 300 ms after start from another thread (as
 *                           a kernel-tracing window opens); =3: all driver-API records
 *                           (CUPTI_ACTIVITY_KIND_DRIVER) turned on 300 ms after start; =4: as
 *                           2, the launch calls' records turned on and off once at start first
 *   FLOOR_STAGE             how far to go, to price each step a client takes (issue 25: what
 *                           costs between kernel-tracing windows); cumulative, in this order:
 *                           noop (return at once), version (cuptiGetVersion, CUPTI loaded and
 *                           initialised), subscribe (cuptiSubscribe + cuptiUnsubscribe, as the
 *                           collector's check for another client), register (buffer callbacks),
 *                           device (DEVICE records), marker (MARKER records), flush (a thread
 *                           calling cuptiActivityFlushAll(0) every 250 ms), toggled (kernel
 *                           records turned on and off again, as a closed window leaves them),
 *                           kernel (kernel records on: the default, the floor itself)
 *   FLOOR_WINDOW_MS=A:B     with a stage short of kernel: kernel records on from A to B ms after
 *                           start, from another thread (a kernel-tracing window once CUDA runs:
 *                           what stays after it closes)
 * At exit it writes one line to stderr: "cupti-floor: N records (A of launch calls, Q kernels with
 * a queue time), M dropped". */
#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int InitializeInjection(void); /* called by CUDA, as for the collector */

static size_t buffer_bytes = 4096u << 10;
static atomic_ulong n_records, n_dropped, n_launch_api, n_queued;
static const CUpti_CallbackId launches[] = {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz};
#define N_LAUNCHES (sizeof launches / sizeof launches[0])

static void CUPTIAPI
requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = calloc(1, buffer_bytes);
    *size = *buffer ? buffer_bytes : 0;
    *max_records = 0;
}

static void CUPTIAPI
completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    CUpti_Activity *record = NULL;
    size_t dropped = 0;
    unsigned long n = 0, api = 0, queued = 0;

    (void)size;
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        n++;
        if (record->kind == CUPTI_ACTIVITY_KIND_DRIVER)
            for (size_t i = 0; i < N_LAUNCHES; i++)
                api += ((CUpti_ActivityAPI *)record)->cbid == launches[i];
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            queued += ((CUpti_ActivityKernel10 *)record)->queued != 0 &&
                      ((CUpti_ActivityKernel10 *)record)->queued != CUPTI_TIMESTAMP_UNKNOWN;
    }
    atomic_fetch_add(&n_records, n);
    atomic_fetch_add(&n_launch_api, api);
    atomic_fetch_add(&n_queued, queued);
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        atomic_fetch_add(&n_dropped, dropped);
    free(buffer);
}

static void
at_exit(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr,
            "cupti-floor: %lu records (%lu of launch calls, %lu kernels with a queue time), %lu "
            "dropped\n",
            atomic_load(&n_records), atomic_load(&n_launch_api), atomic_load(&n_queued),
            atomic_load(&n_dropped));
}

static long
env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : fallback;
}

static int
set_attribute(CUpti_ActivityAttribute attr, void *value, size_t len, const char *what)
{
    if (cuptiActivitySetAttribute(attr, &len, value) == CUPTI_SUCCESS)
        return 0;
    fprintf(stderr, "cupti-floor: %s refused\n", what);
    return -1;
}

enum stage { NOOP, VERSION, SUBSCRIBE, REGISTER, DEVICE, MARKER, FLUSH, TOGGLED, KERNEL };

static enum stage
stage_of(const char *v)
{
    static const char *names[] = {"noop",   "version", "subscribe", "register", "device",
                                  "marker", "flush",   "toggled",   "kernel"};

    for (size_t i = 0; v && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(v, names[i]) == 0)
            return (enum stage)i;
    return KERNEL;
}

static void CUPTIAPI
ignore(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

static void *
flusher(void *arg)
{
    struct timespec period = {0, 250 * 1000000L};

    (void)arg;
    for (;;) {
        nanosleep(&period, NULL);
        cuptiActivityFlushAll(0);
    }
    return NULL;
}

/* FLOOR_WINDOW_MS=A:B: kernel records on from A to B ms after start, from this thread */
static void *
late_window(void *arg)
{
    const char *v = arg;
    char *end = NULL;
    long a = strtol(v, &end, 10), b = end && *end == ':' ? strtol(end + 1, NULL, 10) : a;
    struct timespec on = {a / 1000, (a % 1000) * 1000000L}, off = {(b - a) / 1000, ((b - a) % 1000) * 1000000L};

    nanosleep(&on, NULL);
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
        fprintf(stderr, "cupti-floor: window: kernel records refused\n");
    nanosleep(&off, NULL);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityFlushAll(0);
    return NULL;
}

/* FLOOR_LATENCY=2: latency timestamps turned on later, from this thread */
static void *
late_latency(void *arg)
{
    struct timespec wait = {0, 300 * 1000000L};

    (void)arg;
    nanosleep(&wait, NULL);
    if (cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS)
        fprintf(stderr, "cupti-floor: late latency timestamps refused\n");
    return NULL;
}

/* FLOOR_LAUNCH_API=2/3: launch-call records turned on later, from this thread */
static void *
late_launch_api(void *arg)
{
    struct timespec wait = {0, 300 * 1000000L};

    nanosleep(&wait, NULL);
    if ((long)(intptr_t)arg == 3) {
        if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS)
            fprintf(stderr, "cupti-floor: late DRIVER kind refused\n");
        return NULL;
    }
    for (size_t i = 0; i < N_LAUNCHES; i++)
        if (cuptiActivityEnableDriverApi(launches[i], 1) != CUPTI_SUCCESS)
            fprintf(stderr, "cupti-floor: late launch API records refused\n");
    return NULL;
}

int
InitializeInjection(void)
{
    uint8_t one = 1;
    long kb = env_long("FLOOR_BUFFER_KB", 4096), mb = env_long("FLOOR_DEVICE_BUFFER_MB", 0);
    enum stage stage = stage_of(getenv("FLOOR_STAGE"));
    uint32_t version = 0;
    CUpti_SubscriberHandle sub;
    pthread_t thread;

    if (stage == NOOP)
        return 1;
    cuptiGetVersion(&version);
    if (stage == VERSION)
        return 1;
    if (cuptiSubscribe(&sub, ignore, NULL) == CUPTI_SUCCESS)
        cuptiUnsubscribe(sub);
    if (stage == SUBSCRIBE)
        return 1;
    if (stage < KERNEL) {
        if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS)
            fprintf(stderr, "cupti-floor: CUPTI refused the callbacks\n");
        if (env_long("FLOOR_LATENCY", 0) == 1 && cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS)
            fprintf(stderr, "cupti-floor: latency timestamps refused\n");
        if (stage >= DEVICE)
            cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
        if (stage >= MARKER)
            cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
        if (stage >= FLUSH && pthread_create(&thread, NULL, flusher, NULL) == 0)
            pthread_detach(thread);
        if (stage >= TOGGLED && (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) !=
                                     CUPTI_SUCCESS ||
                                 cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) !=
                                     CUPTI_SUCCESS))
            fprintf(stderr, "cupti-floor: CUPTI refused to toggle kernel records\n");
        if (getenv("FLOOR_WINDOW_MS") &&
            pthread_create(&thread, NULL, late_window, getenv("FLOOR_WINDOW_MS")) == 0)
            pthread_detach(thread);
        atexit(at_exit);
        return 1;
    }

    if (kb > 0)
        buffer_bytes = (size_t)kb << 10;
    set_attribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &one, sizeof one, "ZEROED_OUT");
    if (env_long("FLOOR_PINNED", 0))
        set_attribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &one, sizeof one,
                      "HOST_PINNED");
    if (mb > 0) {
        size_t bytes = (size_t)mb << 20;
        set_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &bytes, sizeof bytes,
                      "DEVICE_BUFFER_SIZE");
    }
    if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        fprintf(stderr, "cupti-floor: CUPTI refused; nothing recorded\n");
        return 1;
    }
    if (env_long("FLOOR_LATENCY", 0) == 1 && cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS)
        fprintf(stderr, "cupti-floor: latency timestamps refused\n");
    if (env_long("FLOOR_LATENCY", 0) == 2 && pthread_create(&thread, NULL, late_latency, NULL) == 0)
        pthread_detach(thread);
    long late = env_long("FLOOR_LAUNCH_API", 0);
    for (size_t i = 0; late == 4 && i < N_LAUNCHES; i++)
        if (cuptiActivityEnableDriverApi(launches[i], 1) != CUPTI_SUCCESS ||
            cuptiActivityEnableDriverApi(launches[i], 0) != CUPTI_SUCCESS)
            fprintf(stderr, "cupti-floor: launch API records refused at start\n");
    if (late >= 2 && pthread_create(&thread, NULL, late_launch_api, (void *)(intptr_t)late) == 0)
        pthread_detach(thread);
    if (late == 1) {
        for (size_t i = 0; i < N_LAUNCHES; i++)
            if (cuptiActivityEnableDriverApi(launches[i], 1) != CUPTI_SUCCESS)
                fprintf(stderr, "cupti-floor: launch API records refused\n");
    }
    atexit(at_exit);
    return 1;
}
