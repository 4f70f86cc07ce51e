/* Unit tests of node-agent/collector/plugin: a fake NCCL drives the profiler entry points the way
 * NCCL 2.28 does (profiler.cc, transport/profiler.cc): per-communicator init, Coll/P2p events from
 * the calling thread whose stop means "enqueued", kernel-channel events from a proxy thread with
 * GPU globaltimer stamps (the stop's time through recordEventState(22) before stopEvent), stops in
 * any order, several threads, a full pool. Also the real librankscope.so: its exported symbols. */
#include "node-agent/collector/plugin.h"
#include "proto/wire.h"
#include "tests/t.h"
#include "tests/unit/collector/fake_nccl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEC 1000000000ull

static const struct rs_nccl_profiler *nccl = &ncclProfiler_v5;

/* The driver's cuCtxGetDevice, which plugin.c finds among the process's global symbols (this
 * test links with -rdynamic): the device current on the thread that initialises a communicator;
 * a negative `current_device` stands for no current context. */
static _Atomic int current_device = 3;
int cuCtxGetDevice(int *device);
int
cuCtxGetDevice(int *device)
{
    if (atomic_load(&current_device) < 0)
        return 201; /* CUDA_ERROR_INVALID_CONTEXT */
    *device = atomic_load(&current_device);
    return 0;
}

static uint64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* What the drain handed over. */
#define MAX_SEEN 70000
static struct rs_plugin_op seen[MAX_SEEN];
static size_t n_seen;
static struct rs_plugin_op hung[16];
static size_t n_hung;

static void
on_done(void *arg, const struct rs_plugin_op *op)
{
    (void)arg;
    if (n_seen < MAX_SEEN)
        seen[n_seen] = *op;
    n_seen++;
}

static void
on_in_flight(void *arg, const struct rs_plugin_op *op)
{
    (void)arg;
    if (n_hung < 16)
        hung[n_hung] = *op;
    n_hung++;
}

static size_t
drain_at(uint64_t t)
{
    n_seen = n_hung = 0;
    return rs_plugin_drain(t, false, on_done, on_in_flight, NULL);
}

static void *
comm_init(uint64_t hash, int rank, int n)
{
    void *ctx = NULL;
    int mask = 0;
    if (nccl->init(&ctx, hash, &mask, "test", 1, n, rank, NULL) != 0)
        return NULL;
    T_EQ(mask & (COLL | P2P | KERNEL_CH), COLL | P2P | KERNEL_CH);
    return ctx;
}

static void *
coll_start(void *ctx, const char *func, uint64_t seq, size_t count, int channels)
{
    struct nccl_descr d;
    void *h = NULL;

    memset(&d, 0, sizeof d);
    d.type = COLL;
    d.coll.seqNumber = seq;
    d.coll.func = func;
    d.coll.count = count;
    d.coll.datatype = "ncclFloat32";
    d.coll.nChannels = (uint8_t)channels;
    d.coll.algo = "RING";
    d.coll.proto = "LL";
    T_EQ(nccl->start_event(ctx, &h, &d), 0);
    return h;
}

static void *
p2p_start(void *ctx, const char *func, int peer, size_t count)
{
    struct nccl_descr d;
    void *h = NULL;

    memset(&d, 0, sizeof d);
    d.type = P2P;
    d.p2p.func = func;
    d.p2p.peer = peer;
    d.p2p.count = count;
    d.p2p.datatype = "ncclBfloat16";
    d.p2p.nChannels = 1;
    T_EQ(nccl->start_event(ctx, &h, &d), 0);
    return h;
}

static void *
ch_start(void *ctx, void *parent, int channel, uint64_t ptimer)
{
    struct nccl_descr d;
    void *h = NULL;

    memset(&d, 0, sizeof d);
    d.type = KERNEL_CH;
    d.parentObj = parent;
    d.kernelCh.channelId = (uint8_t)channel;
    d.kernelCh.pTimer = ptimer;
    nccl->start_event(ctx, &h, &d);
    return h;
}

static void
ch_stop(void *h, uint64_t ptimer)
{
    union nccl_state_args a = {.kernelCh = {ptimer}};
    nccl->record_event_state(h, 22, &a);
    nccl->stop_event(h);
}

static void
not_armed(void)
{
    void *ctx = NULL;
    int mask = 0;
    T_CHECK(nccl->init(&ctx, 1, &mask, "x", 1, 2, 0, NULL) != 0);
    T_CHECK(ctx == NULL);
    T_CHECK(!rs_plugin_active());
}

/* GPU stamps: globaltimer as an arbitrary clock (here: 1,000 s behind CLOCK_REALTIME). */
static uint64_t
gpu_now(void)
{
    return now_ns() - 1000 * SEC;
}

static void
collective_two_channels(void)
{
    void *ctx = comm_init(0xfeedbeef12345678ull, 1, 4);
    T_CHECK(ctx && rs_plugin_active());
    void *h = coll_start(ctx, "AllReduce", 41, 1024, 2);
    T_CHECK(h != NULL);
    uint64_t g0 = gpu_now() - 1000000; /* stamps a GPU took before the proxy saw them */
    void *c0 = ch_start(ctx, h, 0, g0);
    ch_stop(c0, g0 + 3000);
    nccl->stop_event(h);         /* enqueued, after a channel finished already */
    T_EQ(drain_at(now_ns()), 0); /* channel 1 of 2 still to come */
    void *c1 = ch_start(ctx, h, 1, g0 + 100);
    T_EQ(drain_at(now_ns()), 0); /* started, not stopped */
    ch_stop(c1, g0 + 5000);
    T_EQ(drain_at(now_ns()), 1);
    T_EQ(seen[0].comm_hash, 0xfeedbeef12345678ull);
    T_EQ(seen[0].comm_rank, 1);
    T_EQ(seen[0].comm_size, 4);
    T_EQ(seen[0].op, RS_COLL_ALLREDUCE);
    T_EQ(seen[0].seq, 41);
    T_CHECK(seen[0].seq_exact);
    T_EQ(seen[0].bytes, 4096);
    T_CHECK(strcmp(seen[0].algo, "RING") == 0 && strcmp(seen[0].proto, "LL") == 0);
    T_EQ(seen[0].channels, 2);
    T_EQ(seen[0].device, 3); /* current when the communicator was initialised */
    T_EQ(seen[0].gpu_end_ns - seen[0].gpu_start_ns, 5000); /* earliest start to latest stop */
    /* mapped to CLOCK_REALTIME: within the time this test took of the real stamps */
    T_CHECK(seen[0].gpu_start_ns >= g0 + 1000 * SEC && seen[0].gpu_start_ns < now_ns());
    T_CHECK(seen[0].enqueued_ns >= seen[0].enqueue_ns);
    T_EQ(drain_at(now_ns()), 0); /* handed over once */
}

/* NCCL announced more channels than kernel-channel events came: finished once those that came
 * stopped and none came for a second. */
static void
fewer_channels_than_announced(void)
{
    void *ctx = comm_init(0xfe7, 0, 2);
    uint64_t g = gpu_now() - 1000000;
    void *h = coll_start(ctx, "AllGather", 3, 64, 4);
    ch_stop(ch_start(ctx, h, 0, g), g + 700);
    nccl->stop_event(h);
    T_EQ(drain_at(now_ns()), 0);
    T_EQ(drain_at(now_ns() + 2 * SEC), 1);
    T_EQ(seen[0].channels, 1);
    T_EQ(seen[0].gpu_end_ns - seen[0].gpu_start_ns, 700);
    T_EQ(n_hung, 0);
}

static void
point_to_point(void)
{
    atomic_store(&current_device, -1); /* no current context at init: the device is not known */
    void *ctx = comm_init(0x77, 1, 3);
    atomic_store(&current_device, 3);
    uint64_t g = gpu_now();
    void *h[3] = {p2p_start(ctx, "Send", 2, 10), p2p_start(ctx, "Send", 2, 10),
                  p2p_start(ctx, "Recv", 0, 10)};
    for (int i = 0; i < 3; i++) {
        ch_stop(ch_start(ctx, h[i], 0, g + (uint64_t)i * 10), g + (uint64_t)i * 10 + 5);
        nccl->stop_event(h[i]);
    }
    T_EQ(drain_at(now_ns()), 3);
    uint64_t want[3] = {1ull << 48 | 2ull << 32 | 0, 1ull << 48 | 2ull << 32 | 1,
                        0ull << 48 | 1ull << 32 | 0};
    for (size_t i = 0; i < 3; i++) {
        bool found = false;
        for (size_t j = 0; j < 3; j++)
            found |= seen[j].seq == want[i] && seen[j].op == RS_COLL_SENDRECV && seen[j].seq_exact;
        T_CHECK(found);
    }
    T_EQ(seen[0].bytes, 20);
    T_CHECK(seen[0].algo[0] == '\0');
    T_EQ(seen[0].device, -1);
}

/* Queued behind a long kernel: NCCL enqueued it, no channel started. Reported in flight past the
 * limit, every drain, until it completes. */
static void
hang_then_completion(void)
{
    void *ctx = comm_init(0x4a4e47, 0, 2);
    uint64_t g = gpu_now();
    void *warm = coll_start(ctx, "AllGather", 0, 8, 1); /* the comm has channel events */
    ch_stop(ch_start(ctx, warm, 0, g), g + 1000);
    nccl->stop_event(warm);
    T_EQ(drain_at(now_ns()), 1);

    void *h = coll_start(ctx, "AllGather", 1, 8, 1);
    nccl->stop_event(h);
    uint64_t t0 = now_ns();
    T_EQ(drain_at(t0 + 5 * SEC), 0); /* below the 10 s limit */
    T_EQ(n_hung, 0);
    T_EQ(drain_at(t0 + 11 * SEC), 0);
    T_EQ(n_hung, 1);
    T_EQ(hung[0].seq, 1);
    T_EQ(hung[0].op, RS_COLL_ALLGATHER);
    T_EQ(hung[0].channels, 0);
    T_EQ(drain_at(t0 + 12 * SEC), 0);
    T_EQ(n_hung, 1); /* again while it lasts */
    ch_stop(ch_start(ctx, h, 0, gpu_now()), gpu_now());
    T_EQ(drain_at(t0 + 13 * SEC), 1);
    T_EQ(n_hung, 0);
}

/* A communicator whose operations never get channel events: finished at enqueue, host times
 * only, after a second; one whose later operation finished on the GPU: the earlier one too. */
static void
host_only_and_stream_order(void)
{
    void *quiet = comm_init(0x99, 0, 2);
    void *h = coll_start(quiet, "Broadcast", 3, 1, 1);
    nccl->stop_event(h);
    T_EQ(drain_at(now_ns()), 0);
    T_EQ(drain_at(now_ns() + 2 * SEC), 1);
    T_EQ(seen[0].gpu_start_ns, 0);
    T_EQ(seen[0].op, RS_COLL_BROADCAST);
    /* at the process's end: at once, but not one NCCL has not enqueued yet */
    void *late = coll_start(quiet, "Broadcast", 4, 1, 1);
    void *unqueued = coll_start(quiet, "Broadcast", 5, 1, 1);
    nccl->stop_event(late);
    n_seen = 0;
    T_EQ(rs_plugin_drain(now_ns(), true, on_done, NULL, NULL), 1);
    T_EQ(seen[0].seq, 4);
    nccl->stop_event(unqueued);
    T_EQ(rs_plugin_drain(now_ns(), true, on_done, NULL, NULL), 1);

    void *ctx = comm_init(0x98, 0, 2);
    uint64_t g = gpu_now();
    void *a = coll_start(ctx, "Reduce", 0, 1, 1);
    nccl->stop_event(a);
    void *b = coll_start(ctx, "Reduce", 1, 1, 1);
    ch_stop(ch_start(ctx, b, 0, g), g + 10);
    nccl->stop_event(b);
    T_EQ(drain_at(now_ns()), 2);
}

/* A send/recv to oneself inside a communicator that has channel events (an all-to-all's own
 * part): finished at its enqueue, host times only — not in flight until the next operation. */
static void
self_send_in_a_busy_communicator(void)
{
    void *ctx = comm_init(0x5e1f, 1, 4);
    uint64_t g = gpu_now();
    void *peer = p2p_start(ctx, "Send", 2, 8);
    ch_stop(ch_start(ctx, peer, 0, g), g + 100);
    nccl->stop_event(peer);
    T_EQ(drain_at(now_ns()), 1);
    void *self[2] = {p2p_start(ctx, "Send", 1, 8), p2p_start(ctx, "Recv", 1, 8)};
    nccl->stop_event(self[0]);
    nccl->stop_event(self[1]);
    T_EQ(drain_at(now_ns() + 30 * SEC), 2);
    T_EQ(n_hung, 0);
    T_EQ(seen[0].gpu_start_ns, 0);
    T_EQ(seen[0].seq, seen[1].seq); /* 1 -> 1, the first: one key */
}

static void
strays_and_nulls(void)
{
    int not_ours;
    void *ctx = comm_init(0x55, 0, 1);
    T_CHECK(ch_start(ctx, &not_ours, 0, 5) == NULL);
    T_CHECK(ch_start(ctx, NULL, 0, 5) == NULL);
    T_EQ(nccl->stop_event(NULL), 0);
    T_EQ(nccl->stop_event(&not_ours), 0);
    T_EQ(nccl->record_event_state(NULL, 22, NULL), 0);
    void *h = NULL;
    struct nccl_descr d = {.type = 1 << 8}; /* a GroupApi event: not asked for, not tracked */
    T_EQ(nccl->start_event(ctx, &h, &d), 0);
    T_CHECK(h == NULL);
    T_EQ(nccl->finalize(ctx), 0);
    struct rs_plugin_stats st;
    rs_plugin_get_stats(&st);
    T_CHECK(st.stray >= 2);
}

/* More operations in flight than slots: the rest are dropped and counted; NCCL's stop of a NULL
 * handle is harmless; the slots come back once drained. */
static void
pool_full(void)
{
    static void *h[RS_PLUGIN_SLOTS + 10];
    void *ctx = comm_init(0x66, 0, 1);
    struct rs_plugin_stats before, after;

    rs_plugin_get_stats(&before);
    for (size_t i = 0; i < RS_PLUGIN_SLOTS + 10; i++)
        h[i] = coll_start(ctx, "AllReduce", i, 1, 1);
    rs_plugin_get_stats(&after);
    T_EQ(after.dropped - before.dropped, 10);
    uint64_t g = gpu_now();
    for (size_t i = 0; i < RS_PLUGIN_SLOTS + 10; i++) {
        nccl->stop_event(h[i]);
        if (h[i])
            ch_stop(ch_start(ctx, h[i], 0, g), g + 1);
    }
    T_EQ(drain_at(now_ns()), RS_PLUGIN_SLOTS);
    void *again = coll_start(ctx, "AllReduce", 0, 1, 1);
    T_CHECK(again != NULL);
    nccl->stop_event(again);
    ch_stop(ch_start(ctx, again, 0, g), g + 1);
    T_EQ(drain_at(now_ns()), 1);
}

/* Several communicators, each with a "user" thread starting and stopping operations and a
 * "proxy" thread reporting their channels (in reverse order of start), while the flush thread
 * drains: every operation comes out once, with its own sequence. */
#define THREADS 3
#define OPS 6000
struct comm_run {
    void *ctx;
    void *_Atomic handles[OPS];
    atomic_int started, proxied;
};

static void *
user_thread(void *arg)
{
    struct comm_run *r = arg;
    for (int i = 0; i < OPS; i++) {
        while (i - atomic_load(&r->proxied) > 1000) /* NCCL's queues are bounded too */
            sched_yield();
        void *h = coll_start(r->ctx, "ReduceScatter", (uint64_t)i, 16, 2);
        atomic_store(&r->handles[i], h);
        atomic_store(&r->started, i + 1);
        nccl->stop_event(h);
    }
    return NULL;
}

static void *
proxy_thread(void *arg)
{
    struct comm_run *r = arg;
    for (int i = 0; i < OPS; i++) {
        while (atomic_load(&r->started) <= i)
            sched_yield();
        void *h = atomic_load(&r->handles[i]);
        uint64_t g = gpu_now();
        void *c0 = ch_start(r->ctx, h, 0, g), *c1 = ch_start(r->ctx, h, 1, g + 1);
        ch_stop(c1, g + 20);
        ch_stop(c0, g + 10);
        atomic_store(&r->proxied, i + 1);
    }
    return NULL;
}

static atomic_bool drain_stop;

static void *
drain_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&drain_stop))
        rs_plugin_drain(now_ns(), false, on_done, NULL, NULL);
    return NULL;
}

static void
threads(void)
{
    static struct comm_run runs[THREADS];
    pthread_t users[THREADS], proxies[THREADS], drainer;
    struct rs_plugin_stats before, after;

    rs_plugin_get_stats(&before);
    n_seen = 0;
    atomic_store(&drain_stop, false);
    for (int t = 0; t < THREADS; t++) {
        runs[t].ctx = comm_init(0x1000 + (uint64_t)t, t, THREADS);
        atomic_store(&runs[t].started, 0);
        atomic_store(&runs[t].proxied, 0);
    }
    pthread_create(&drainer, NULL, drain_thread, NULL);
    for (int t = 0; t < THREADS; t++) {
        pthread_create(&users[t], NULL, user_thread, &runs[t]);
        pthread_create(&proxies[t], NULL, proxy_thread, &runs[t]);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(users[t], NULL);
        pthread_join(proxies[t], NULL);
    }
    atomic_store(&drain_stop, true);
    pthread_join(drainer, NULL);
    rs_plugin_drain(now_ns(), false, on_done, NULL, NULL);
    rs_plugin_get_stats(&after);
    /* A starved flush thread (a loaded machine) lets the pool fill: then operations are dropped
     * and counted, never lost silently or handed over twice. */
    T_EQ(n_seen + (after.dropped - before.dropped), THREADS * OPS);
    static unsigned char count[THREADS][OPS];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n_seen && i < MAX_SEEN; i++) {
        uint64_t t = seen[i].comm_hash - 0x1000;
        if (t < THREADS && seen[i].seq < OPS && seen[i].gpu_end_ns - seen[i].gpu_start_ns == 20)
            count[t][seen[i].seq]++;
    }
    size_t once = 0, twice = 0;
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < OPS; i++) {
            once += count[t][i] == 1;
            twice += count[t][i] > 1;
        }
    T_EQ(once, n_seen); /* each with its own sequence and its GPU times */
    T_EQ(twice, 0);
}

static void
other_plugin_named(void)
{
    const char *self = "/opt/rankscope/lib/librankscope.so";
    T_CHECK(!rs_plugin_other_named(NULL, self));
    T_CHECK(!rs_plugin_other_named("", self));
    T_CHECK(!rs_plugin_other_named("none", self));
    T_CHECK(!rs_plugin_other_named(self, self));
    T_CHECK(!rs_plugin_other_named("librankscope.so", self));
    T_CHECK(!rs_plugin_other_named("/elsewhere/librankscope.so", self));
    T_CHECK(rs_plugin_other_named("inspector", self));
    T_CHECK(rs_plugin_other_named("/x/libnccl-profiler-inspector.so", self));
}

/* The shipped library: NCCL finds both symbols, named, with every entry point; init refuses while
 * the collector has not started (no CUDA here), so NCCL would go on without a profiler. */
static void
shipped_library(void)
{
#ifdef __SANITIZE_ADDRESS__
    /* dlopen of the sanitized library leaves UBSan's runtime an allocation LeakSanitizer reports
     * (libubsan's, not ours); tests/integration/015 checks the exports under make asan */
    fprintf(stderr, "  (shipped library: not loaded under the sanitizers)\n");
    return;
#endif
    /* this binary is <build>/tests/unit/collector/plugin_test; the library <build>/lib/ */
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
    char *cut = path;
    if (n <= 0)
        return;
    path[n] = '\0';
    for (int i = 0; i < 4 && cut; i++)
        if ((cut = strrchr(path, '/')))
            *cut = '\0';
    if (!cut)
        return;
    strcat(path, "/lib/librankscope.so");
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "  (librankscope.so not loadable here: %s)\n", dlerror());
        return;
    }
    const char *names[] = {"ncclProfiler_v5", "ncclProfiler_v6"};
    for (int i = 0; i < 2; i++) {
        const struct rs_nccl_profiler *p = dlsym(lib, names[i]);
        T_CHECK(p != NULL);
        if (!p)
            continue;
        T_CHECK(strcmp(p->name, "rankscope") == 0);
        T_CHECK(p->init && p->start_event && p->stop_event && p->record_event_state && p->finalize);
        void *ctx = NULL;
        int mask = 0;
        T_CHECK(p->init(&ctx, 1, &mask, "c", 1, 1, 0, NULL) != 0);
    }
    T_CHECK(dlsym(lib, "rs_plugin_drain") == NULL); /* nothing else is exported */
    dlclose(lib);
}

int
main(void)
{
    struct rs_plugin_options opts = {10 * SEC, 20};

    T_RUN(not_armed);
    rs_plugin_arm(&opts);
    T_RUN(collective_two_channels);
    T_RUN(fewer_channels_than_announced);
    T_RUN(point_to_point);
    T_RUN(hang_then_completion);
    T_RUN(host_only_and_stream_order);
    T_RUN(self_send_in_a_busy_communicator);
    T_RUN(strays_and_nulls);
    T_RUN(pool_full);
    T_RUN(threads);
    T_RUN(other_plugin_named);
    T_RUN(shipped_library);
    return T_DONE("collector/plugin");
}
