/* What the NCCL profiler plugin (node-agent/collector/plugin.c) costs per NCCL operation, on the
 * threads NCCL calls it from (issue 25: "its cost per collective"). A GPU run could not resolve
 * it: NCCL's own 10 - 17 us per grouped send/recv on one GPU swung +-5 us between processes
 * (docs/BENCHMARKS.md "The default's budget"). This drives the plugin's entry points as NCCL 2.28
 * does for one collective on 2 channels — start the Coll event, per channel start a kernel-channel
 * event, record its stop stamp (state 22) and stop it, stop the Coll event — and the same calls on
 * an empty plugin (every entry point returns at once: what NCCL's calls through the table cost
 * anyway), in alternating blocks of the same process, and prints per operation the calling
 * thread's CPU time and wall time for both and their difference (median over blocks, with the
 * range), and what draining the finished operations costs the collector's flush thread (off
 * NCCL's threads). Every 1,000 operations are drained, as the flush thread's 250 ms would at
 * 4,000 operations per second, so the pool never fills (a full pool takes the drop path).
 *
 * usage: rs-plugin-bench [BLOCKS (21)] [OPS_PER_BLOCK (200000)] */
#include "node-agent/collector/plugin.h"
#include "tests/unit/collector/fake_nccl.h" /* NCCL 2.28's descriptor, from its header */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHANNELS 2
#define DRAIN_EVERY 1000

static int
noop_init(void **ctx, uint64_t id, int *mask, const char *name, int nodes, int n, int rank,
          void *log)
{
    static int c;
    (void)id, (void)name, (void)nodes, (void)n, (void)rank, (void)log;
    *ctx = &c;
    *mask = COLL | KERNEL_CH;
    return 0;
}
static int
noop_start(void *ctx, void **h, void *d)
{
    (void)ctx, (void)d;
    *h = NULL;
    return 0;
}
static int
noop_stop(void *h)
{
    (void)h;
    return 0;
}
static int
noop_state(void *h, int s, void *a)
{
    (void)h, (void)s, (void)a;
    return 0;
}
static int
noop_fini(void *ctx)
{
    (void)ctx;
    return 0;
}
static const struct rs_nccl_profiler noop = {"noop",    noop_init,  noop_start,
                                             noop_stop, noop_state, noop_fini};

static uint64_t
ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void
counted(void *arg, const struct rs_plugin_op *op)
{
    (void)op;
    ++*(size_t *)arg;
}

/* One operation as NCCL makes it: the Coll event on the calling thread, its channels' events
 * (the proxy thread's, here the same thread: what matters is the work per call). */
static void
one_op(const struct rs_nccl_profiler *p, void *ctx, uint64_t seq)
{
    struct nccl_descr d;
    void *h = NULL, *ch = NULL;
    uint64_t stamp = ns(CLOCK_REALTIME);

    memset(&d, 0, sizeof d);
    d.type = COLL;
    d.coll.seqNumber = seq;
    d.coll.func = "AllReduce";
    d.coll.count = 1 << 20;
    d.coll.datatype = "ncclFloat32";
    d.coll.nChannels = CHANNELS;
    d.coll.algo = "RING";
    d.coll.proto = "SIMPLE";
    p->start_event(ctx, &h, &d);
    for (int c = 0; c < CHANNELS; c++) {
        struct nccl_descr k;
        union nccl_state_args stop = {.kernelCh = {stamp + 5000}};
        memset(&k, 0, sizeof k);
        k.type = KERNEL_CH;
        k.parentObj = h;
        k.kernelCh.channelId = (uint8_t)c;
        k.kernelCh.pTimer = stamp;
        p->start_event(ctx, &ch, &k);
        p->record_event_state(ch, 22, &stop);
        p->stop_event(ch);
    }
    p->stop_event(h);
}

struct block {
    double cpu_ns, wall_ns, drain_ns;
};

static struct block
run_block(const struct rs_nccl_profiler *p, void *ctx, size_t ops, uint64_t *seq, size_t *handed)
{
    uint64_t cpu = 0, wall = 0, drain = 0;

    for (size_t done = 0; done < ops; done += DRAIN_EVERY) {
        uint64_t c0 = ns(CLOCK_THREAD_CPUTIME_ID), w0 = ns(CLOCK_MONOTONIC);
        for (size_t i = 0; i < DRAIN_EVERY; i++)
            one_op(p, ctx, (*seq)++);
        cpu += ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        wall += ns(CLOCK_MONOTONIC) - w0;
        if (p != &noop) {
            uint64_t d0 = ns(CLOCK_THREAD_CPUTIME_ID);
            rs_plugin_drain(ns(CLOCK_REALTIME) + 2000000000ull, false, counted, counted, handed);
            drain += ns(CLOCK_THREAD_CPUTIME_ID) - d0;
        }
    }
    return (struct block){(double)cpu / (double)ops, (double)wall / (double)ops,
                          (double)drain / (double)ops};
}

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void
show(const char *what, double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp);
    printf("  %-44s median %8.1f ns  (range %.1f - %.1f, %zu blocks)\n", what, v[n / 2], v[0],
           v[n - 1], n);
}

int
main(int argc, char **argv)
{
    size_t blocks = argc > 1 ? strtoul(argv[1], NULL, 10) : 21;
    size_t ops = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
    struct rs_plugin_options o = {0, 20};
    void *ctx = NULL, *noop_ctx = NULL;
    int mask = 0;
    uint64_t seq = 0, noop_seq = 0;
    size_t handed = 0;

    if (blocks < 1 || blocks > 1000 || ops < DRAIN_EVERY) {
        fprintf(stderr, "usage: rs-plugin-bench [BLOCKS 1-1000] [OPS_PER_BLOCK >= %d]\n",
                DRAIN_EVERY);
        return 2;
    }
    rs_plugin_arm(&o);
    if (ncclProfiler_v5.init(&ctx, 0xbe9cull, &mask, "bench", 1, 2, 0, NULL) != 0) {
        fprintf(stderr, "rs-plugin-bench: the plugin refused the communicator\n");
        return 1;
    }
    noop.init(&noop_ctx, 0, &mask, "noop", 1, 2, 0, NULL);
    double *cpu = calloc(blocks, sizeof *cpu), *wall = calloc(blocks, sizeof *wall),
           *cpu0 = calloc(blocks, sizeof *cpu0), *wall0 = calloc(blocks, sizeof *wall0),
           *dcpu = calloc(blocks, sizeof *dcpu), *drain = calloc(blocks, sizeof *drain);
    if (!cpu || !wall || !cpu0 || !wall0 || !dcpu || !drain)
        return 1;
    run_block(&ncclProfiler_v5, ctx, ops, &seq, &handed); /* warm-up */
    for (size_t b = 0; b < blocks; b++) {
        struct block r, z;
        if (b % 2) {
            z = run_block(&noop, noop_ctx, ops, &noop_seq, &handed);
            r = run_block(&ncclProfiler_v5, ctx, ops, &seq, &handed);
        } else {
            r = run_block(&ncclProfiler_v5, ctx, ops, &seq, &handed);
            z = run_block(&noop, noop_ctx, ops, &noop_seq, &handed);
        }
        cpu[b] = r.cpu_ns, wall[b] = r.wall_ns, cpu0[b] = z.cpu_ns, wall0[b] = z.wall_ns;
        dcpu[b] = r.cpu_ns - z.cpu_ns, drain[b] = r.drain_ns;
    }
    struct rs_plugin_stats st;
    rs_plugin_get_stats(&st);
    printf("rs-plugin-bench: %zu blocks of %zu operations (AllReduce, %d channels), per "
           "operation:\n",
           blocks, ops, CHANNELS);
    show("plugin, calling thread's CPU", cpu, blocks);
    show("empty plugin, calling thread's CPU", cpu0, blocks);
    show("difference (plugin - empty), CPU", dcpu, blocks);
    show("plugin, wall", wall, blocks);
    show("empty plugin, wall", wall0, blocks);
    show("drain on the flush thread, CPU", drain, blocks);
    printf("  operations handed over %zu of %llu, dropped %llu, strays %llu\n", handed,
           (unsigned long long)seq, (unsigned long long)st.dropped, (unsigned long long)st.stray);
    return handed == seq && st.dropped == 0 ? 0 : 1;
}
