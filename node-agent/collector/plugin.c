/* The NCCL profiler plugin (see plugin.h): NCCL's entry points, the slot pool they fill, and the
 * drain the collector's flush thread runs over it. */
#include "node-agent/collector/plugin.h"

#include "common/clock.h"
#include "node-agent/collector/cuda_driver.h"

#include "proto/nccl_kernel.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* NCCL's values (nccl_profiler.h, profiler_v5.h of NCCL 2.28.9; unchanged in 2.29). */
#define NCCL_SUCCESS 0
#define NCCL_INTERNAL_ERROR 3
#define EV_COLL (1u << 1)
#define EV_P2P (1u << 2)
#define EV_KERNEL_CH (1u << 6)
#define STATE_KERNEL_CH_STOP 22

/* NCCL's event descriptor, the members we read (ncclProfilerEventDescr_v5_t; v6 only adds union
 * members). */
struct descr {
    uint64_t type;
    void *parent;
    int rank;
    union {
        struct {
            uint64_t seq;
            const char *func;
            const void *send_buff;
            void *recv_buff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t n_channels, n_warps;
            const char *algo, *proto;
            void *parent_group;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t n_channels;
            void *parent_group;
        } p2p;
        struct {
            uint8_t channel;
            uint64_t ptimer;
        } kernel_ch;
    };
};

/* A communicator NCCL initialised with us. Never freed (NCCL may still stop events of a finalised
 * one); at most RS_PLUGIN_MAX_COMMS per process. */
struct comm {
    uint64_t hash;
    uint32_t rank, size;
    int32_t device; /* rs_plugin_op.device */
    atomic_bool kernel_ch_seen;
    _Atomic uint32_t *p2p_counts; /* [2 * size]: sends to, receives from each peer; NULL: none */
    /* flush thread only */
    uint64_t usual_ns;     /* moving average of enqueue -> GPU stop */
    uint64_t done_mark_ns; /* latest enqueue of an operation finished on the GPU */
};

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_LIVE };

struct slot {
    _Atomic uint32_t state;
    _Atomic uint32_t ch_started, ch_stopped;
    _Atomic uint64_t gpu_start, gpu_end; /* globaltimer: earliest start, latest stop */
    /* when NCCL's stop said the operation was enqueued (release); 0: not yet */
    _Atomic uint64_t enqueued_ns;
    _Atomic uint64_t last_ch_ns;
    /* written by the starting thread before SLOT_LIVE (release), read-only after */
    struct comm *comm;
    struct rs_plugin_op op;
    uint8_t n_channels;
    bool no_channels; /* NCCL gives this operation no kernel-channel events */
    /* NCCL's element count and static type name: op->bytes and op->op are worked out on the
     * flush thread (fill_times), not on NCCL's thread */
    size_t count;
    const char *datatype;
};

static struct slot pool[RS_PLUGIN_SLOTS];
/* Communicators, each index handed out once (n_comms): no allocation, and never freed — NCCL may
 * stop events of a finalised one (a heap copy of each was unreachable once its slots were
 * reused, a leak to LeakSanitizer) */
static struct comm comms[RS_PLUGIN_MAX_COMMS];
static atomic_uint cursor;
static atomic_uint n_comms;
static atomic_bool armed, active;
static struct rs_plugin_options options;
/* CLOCK_REALTIME - globaltimer, least seen: the proxy thread sees a GPU timestamp a little after
 * it was taken, so the least difference is the offset plus the shortest polling delay. */
static _Atomic int64_t gpu_offset = INT64_MAX;
/* NCCL's threads count only what is rare (refusals, a full pool, strays); operations and their
 * channel events are counted on the flush thread, as it hands them over (no shared counter
 * written for every operation). */
static struct {
    _Atomic uint64_t comms, comms_refused, dropped, stray, other_events;
    uint64_t drained, host_only, abandoned, channel_events; /* flush thread only */
} stats;

/* Limits of the completion rules (see finished()). */
#define QUIET_NS 1000000000ull     /* channels all stopped and none new for this long */
#define HOST_ONLY_NS 1000000000ull /* no channel event ever on this communicator */
#define CLAIM_TRIES 64

/* b - a, or 0 when a is later (a stamp taken after the drain read its clock) */
static uint64_t
since(uint64_t a, uint64_t b)
{
    return b > a ? b - a : 0;
}

static void
note_gpu_time(uint64_t ptimer)
{
    int64_t diff = (int64_t)(rs_clock_realtime_ns() - ptimer);
    int64_t cur = atomic_load_explicit(&gpu_offset, memory_order_relaxed);

    while (diff < cur && !atomic_compare_exchange_weak(&gpu_offset, &cur, diff))
        ;
}

static void
atomic_min_u64(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);
    while ((cur == 0 || v < cur) && !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

static void
atomic_max_u64(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

/* Bytes of one element of NCCL's type name ("ncclFloat32"); 0 when unknown. */
static uint64_t
type_size(const char *datatype)
{
    static const struct {
        const char *name;
        uint64_t size;
    } types[] = {{"ncclInt8", 1},       {"ncclUint8", 1},   {"ncclFloat8e4m3", 1},
                 {"ncclFloat8e5m2", 1}, {"ncclFloat16", 2}, {"ncclBfloat16", 2},
                 {"ncclInt32", 4},      {"ncclUint32", 4},  {"ncclFloat32", 4},
                 {"ncclInt64", 8},      {"ncclUint64", 8},  {"ncclFloat64", 8}};

    for (size_t i = 0; datatype && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(datatype, types[i].name) == 0)
            return types[i].size;
    return 0;
}

/* A free slot, marked SLOT_FILLING; NULL when the pool is full (a bounded search). One shared
 * increment per operation: the cursor hands each caller its own starting point and the search
 * goes on from there locally (threads that collide settle it by the compare-and-swap). */
static struct slot *
claim(void)
{
    unsigned from = atomic_fetch_add_explicit(&cursor, 1, memory_order_relaxed);

    for (unsigned i = 0; i < CLAIM_TRIES; i++) {
        struct slot *s = &pool[(from + i) % RS_PLUGIN_SLOTS];
        uint32_t expected = SLOT_FREE;
        if (atomic_load_explicit(&s->state, memory_order_relaxed) == SLOT_FREE &&
            atomic_compare_exchange_strong(&s->state, &expected, SLOT_FILLING))
            return s;
    }
    atomic_fetch_add_explicit(&stats.dropped, 1, memory_order_relaxed);
    return NULL;
}

/* The slot a handle or parent pointer names, when it is one of ours (also tagged: +1 for a
 * kernel-channel handle); NULL otherwise. */
static struct slot *
slot_of(void *p, bool *channel)
{
    uintptr_t u = (uintptr_t)p, base = (uintptr_t)pool;

    *channel = u & 1;
    u &= ~(uintptr_t)1;
    if (u < base || u >= base + sizeof pool || (u - base) % sizeof pool[0] != 0)
        return NULL;
    return (struct slot *)u;
}

/* The n-th point-to-point operation between two comm ranks in one direction (plugin.h). */
static uint64_t
p2p_seq(struct comm *c, bool send, int peer, bool *exact)
{
    uint32_t src = send ? c->rank : (uint32_t)peer, dst = send ? (uint32_t)peer : c->rank;

    *exact = false;
    if (!c->p2p_counts || peer < 0 || (uint32_t)peer >= c->size)
        return 0;
    uint32_t n = atomic_fetch_add_explicit(&c->p2p_counts[(send ? 0 : c->size) + (uint32_t)peer], 1,
                                           memory_order_relaxed);
    *exact = true;
    return (uint64_t)src << 48 | (uint64_t)dst << 32 | n;
}

/* The CUDA device current on this thread (NCCL's init call runs with the communicator's device
 * current), by the driver's cuCtxGetDevice (cuda_driver.h); -1 without a driver or a current
 * context. */
static int32_t
current_device(void)
{
    typedef int (*ctx_get_device_fn)(int *device);
    ctx_get_device_fn get = (ctx_get_device_fn)rs_cuda_driver_symbol("cuCtxGetDevice");
    int device = -1;

    if (!get || get(&device) != 0 || device < 0)
        device = -1;
    return device;
}

static int
plugin_init(void **context, uint64_t comm_id, int *activation_mask, const char *comm_name,
            int n_nodes, int n_ranks, int rank, void *logfn)
{
    struct comm *c;
    unsigned idx;

    (void)comm_name;
    (void)n_nodes;
    (void)logfn;
    if (!atomic_load(&armed) || n_ranks <= 0 || rank < 0 || rank >= n_ranks)
        return NCCL_INTERNAL_ERROR; /* NCCL goes on without a profiler for this communicator */
    if ((idx = atomic_fetch_add(&n_comms, 1)) >= RS_PLUGIN_MAX_COMMS) {
        atomic_fetch_add(&stats.comms_refused, 1);
        return NCCL_INTERNAL_ERROR;
    }
    c = &comms[idx];
    c->hash = comm_id;
    c->device = current_device();
    c->rank = (uint32_t)rank;
    c->size = (uint32_t)n_ranks;
    if (n_ranks <= 65536)
        c->p2p_counts = calloc(2 * (size_t)n_ranks, sizeof c->p2p_counts[0]);
    /* The mask is one for the whole process: every communicator gets the same. Kernel-channel
     * events give GPU times and keep graph-captured collectives' sequence numbers in step
     * across ranks (NCCL's profiler.cc). */
    *activation_mask = (int)(EV_COLL | EV_P2P | EV_KERNEL_CH);
    *context = c;
    atomic_fetch_add(&stats.comms, 1);
    atomic_store(&active, true);
    return NCCL_SUCCESS;
}

static void
start_op(struct comm *c, void **handle, const struct descr *d)
{
    struct slot *s = claim();
    struct rs_plugin_op *op;

    if (!s)
        return;
    op = &s->op;
    memset(op, 0, sizeof *op);
    op->comm_hash = c->hash;
    op->comm_rank = c->rank;
    op->comm_size = c->size;
    op->device = c->device;
    op->enqueue_ns = rs_clock_realtime_ns();
    op->algo = op->proto = "";
    if (d->type == EV_COLL) {
        op->func = d->coll.func ? d->coll.func : "";
        op->seq = d->coll.seq;
        op->seq_exact = true;
        s->count = d->coll.count;
        s->datatype = d->coll.datatype;
        op->algo = d->coll.algo ? d->coll.algo : "";
        op->proto = d->coll.proto ? d->coll.proto : "";
        s->n_channels = d->coll.n_channels;
    } else {
        op->func = d->p2p.func ? d->p2p.func : "";
        op->seq = p2p_seq(c, strcmp(op->func, "Send") == 0, d->p2p.peer, &op->seq_exact);
        s->count = d->p2p.count;
        s->datatype = d->p2p.datatype;
        s->n_channels = d->p2p.n_channels;
    }
    /* A send or receive to oneself has no proxy operation, hence no kernel-channel events (NCCL
     * 2.28.9 enqueue.cc: selfSend -> nProxyOps = 0; seen on an H100): on a communicator that has
     * them otherwise (an all-to-all's own part) it would look in flight until the next operation.
     */
    s->no_channels = d->type == EV_P2P && d->p2p.peer == (int)c->rank;
    s->comm = c;
    atomic_store_explicit(&s->ch_started, 0, memory_order_relaxed);
    atomic_store_explicit(&s->ch_stopped, 0, memory_order_relaxed);
    atomic_store_explicit(&s->gpu_start, 0, memory_order_relaxed);
    atomic_store_explicit(&s->gpu_end, 0, memory_order_relaxed);
    atomic_store_explicit(&s->enqueued_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&s->last_ch_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&s->state, SLOT_LIVE, memory_order_release);
    *handle = s;
}

static void
start_channel(void **handle, const struct descr *d)
{
    bool tagged;
    struct slot *s = slot_of(d->parent, &tagged);

    if (!s || tagged || atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_LIVE) {
        atomic_fetch_add_explicit(&stats.stray, 1, memory_order_relaxed);
        return;
    }
    if (!atomic_load_explicit(&s->comm->kernel_ch_seen, memory_order_relaxed))
        atomic_store_explicit(&s->comm->kernel_ch_seen, true, memory_order_relaxed);
    if (d->kernel_ch.ptimer) {
        atomic_min_u64(&s->gpu_start, d->kernel_ch.ptimer);
        note_gpu_time(d->kernel_ch.ptimer);
    }
    atomic_fetch_add_explicit(&s->ch_started, 1, memory_order_acq_rel);
    *handle = (char *)s + 1;
}

static int
plugin_start_event(void *context, void **handle, void *descr)
{
    const struct descr *d = descr;

    *handle = NULL;
    if (!context || !d)
        return NCCL_SUCCESS;
    if (d->type == EV_COLL || d->type == EV_P2P)
        start_op(context, handle, d);
    else if (d->type == EV_KERNEL_CH)
        start_channel(handle, d);
    else
        atomic_fetch_add_explicit(&stats.other_events, 1, memory_order_relaxed);
    return NCCL_SUCCESS; /* NCCL wants success from every call but init */
}

static int
plugin_stop_event(void *handle)
{
    bool channel;
    struct slot *s = slot_of(handle, &channel);

    if (!s)
        return NCCL_SUCCESS;
    if (channel) {
        atomic_store_explicit(&s->last_ch_ns, rs_clock_realtime_ns(), memory_order_relaxed);
        atomic_fetch_add_explicit(&s->ch_stopped, 1, memory_order_acq_rel);
    } else {
        atomic_store_explicit(&s->enqueued_ns, rs_clock_realtime_ns(), memory_order_release);
    }
    return NCCL_SUCCESS;
}

static int
plugin_record_event_state(void *handle, int state, void *args)
{
    bool channel;
    struct slot *s = slot_of(handle, &channel);
    uint64_t ptimer;

    if (!s || !channel || state != STATE_KERNEL_CH_STOP || !args)
        return NCCL_SUCCESS;
    memcpy(&ptimer, args, sizeof ptimer); /* the union's kernelCh.pTimer, at its start */
    if (ptimer) {
        atomic_max_u64(&s->gpu_end, ptimer);
        note_gpu_time(ptimer);
    }
    return NCCL_SUCCESS;
}

static int
plugin_finalize(void *context)
{
    (void)context; /* the communicator stays: events of its operations may still come */
    return NCCL_SUCCESS;
}

__attribute__((visibility("default"))) const struct rs_nccl_profiler ncclProfiler_v5 = {
    "rankscope",    plugin_init, plugin_start_event, plugin_stop_event, plugin_record_event_state,
    plugin_finalize};
__attribute__((visibility("default"))) const struct rs_nccl_profiler ncclProfiler_v6 = {
    "rankscope",    plugin_init, plugin_start_event, plugin_stop_event, plugin_record_event_state,
    plugin_finalize};

void
rs_plugin_arm(const struct rs_plugin_options *opts)
{
    options = *opts;
    if (!options.hang_factor)
        options.hang_factor = 1;
    atomic_store(&armed, true);
}

void
rs_plugin_disarm(void)
{
    atomic_store(&armed, false);
}

bool
rs_plugin_active(void)
{
    return atomic_load_explicit(&active, memory_order_relaxed);
}

/* How a live operation stands at `now` (flush thread). */
enum progress { RUNNING, DONE_GPU, DONE_HOST };

static enum progress
progress_of(struct slot *s, uint64_t now, bool last)
{
    uint64_t enq_ns = atomic_load_explicit(&s->enqueued_ns, memory_order_acquire);
    uint32_t stopped = atomic_load_explicit(&s->ch_stopped, memory_order_acquire);
    uint32_t started = atomic_load_explicit(&s->ch_started, memory_order_acquire);

    /* more stops than starts: a late channel of the slot's previous operation (one that finished
     * by the quiet rule) — never a reason to keep this one in flight */
    if (!enq_ns || started > stopped)
        return RUNNING;
    bool channels_here = atomic_load_explicit(&s->comm->kernel_ch_seen, memory_order_relaxed);
    if (last && started > 0) /* the process ends: no channel left running */
        return DONE_GPU;
    if (last && !channels_here)
        return DONE_HOST;
    if (started > 0) {
        /* every channel NCCL announced, or all that came and none new for a while (NCCL's
         * channel count and its kernel-channel events need not agree for every operation) */
        if (started >= s->n_channels ||
            since(atomic_load_explicit(&s->last_ch_ns, memory_order_relaxed), now) > QUIET_NS)
            return DONE_GPU;
        return RUNNING;
    }
    /* No channel event: NCCL gives none for this operation or on this communicator at all, or a
     * later operation of the same communicator (one stream: in order) finished on the GPU. */
    if (s->no_channels)
        return DONE_HOST;
    if (!channels_here && since(enq_ns, now) > HOST_ONLY_NS)
        return DONE_HOST;
    if (s->comm->done_mark_ns > s->op.enqueue_ns)
        return DONE_HOST;
    return RUNNING;
}

static uint64_t
to_realtime(uint64_t gpu)
{
    int64_t off = atomic_load_explicit(&gpu_offset, memory_order_relaxed);
    return gpu && off != INT64_MAX ? (uint64_t)((int64_t)gpu + off) : 0;
}

static void
fill_times(struct slot *s, struct rs_plugin_op *op)
{
    *op = s->op;
    op->op = rs_coll_op_from_name(op->func);
    op->bytes = s->count * type_size(s->datatype);
    op->enqueued_ns = atomic_load_explicit(&s->enqueued_ns, memory_order_relaxed);
    op->channels = atomic_load_explicit(&s->ch_started, memory_order_relaxed);
    op->gpu_start_ns = to_realtime(atomic_load_explicit(&s->gpu_start, memory_order_relaxed));
    op->gpu_end_ns = to_realtime(atomic_load_explicit(&s->gpu_end, memory_order_relaxed));
    if (!op->gpu_start_ns || !op->gpu_end_ns || op->gpu_end_ns < op->gpu_start_ns)
        op->gpu_start_ns = op->gpu_end_ns = 0;
}

static void
release(struct slot *s)
{
    atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
}

/* Hands a finished operation over and frees its slot. */
static void
finish(struct slot *s, enum progress p, rs_plugin_op_fn done, void *arg)
{
    struct rs_plugin_op op;

    fill_times(s, &op);
    if (p == DONE_GPU) {
        if (op.enqueue_ns > s->comm->done_mark_ns)
            s->comm->done_mark_ns = op.enqueue_ns;
        if (op.gpu_end_ns > op.enqueue_ns) {
            uint64_t took = op.gpu_end_ns - op.enqueue_ns, *u = &s->comm->usual_ns;
            *u = *u ? *u - *u / 8 + took / 8 : took; /* moving average over ~8 operations */
        }
    } else {
        op.gpu_start_ns = op.gpu_end_ns = 0; /* any partial channel times are not it */
        stats.host_only++;
    }
    release(s);
    done(arg, &op);
    stats.drained++;
    stats.channel_events += op.channels;
}

/* The live slots the drain's first pass left (flush thread only: the drain runs on it alone). */
static uint32_t left[RS_PLUGIN_SLOTS];

size_t
rs_plugin_drain(uint64_t now, bool last, rs_plugin_op_fn done, rs_plugin_op_fn in_flight, void *arg)
{
    size_t n = 0, n_left = 0;

    /* One pass over the pool hands over the operations that finished on the GPU; they also
     * finish the ones enqueued before them on their communicator, so the live ones left are
     * looked at again, and only they. */
    for (uint32_t i = 0; i < RS_PLUGIN_SLOTS; i++) {
        struct slot *s = &pool[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_LIVE)
            continue;
        if (progress_of(s, now, last) == DONE_GPU) {
            finish(s, DONE_GPU, done, arg);
            n++;
        } else {
            left[n_left++] = i;
        }
    }
    for (size_t j = 0; j < n_left; j++) {
        struct slot *s = &pool[left[j]];
        enum progress p = progress_of(s, now, last);
        if (p != RUNNING) {
            finish(s, p, done, arg);
            n++;
            continue;
        }
        uint64_t age = since(s->op.enqueue_ns, now);
        uint64_t limit = s->comm->usual_ns * options.hang_factor;
        if (limit < options.hang_min_ns)
            limit = options.hang_min_ns;
        if (age > RS_PLUGIN_ABANDON_NS) {
            stats.abandoned++;
            stats.channel_events += atomic_load_explicit(&s->ch_started, memory_order_relaxed);
            release(s);
        } else if (in_flight && options.hang_min_ns && age > limit) {
            struct rs_plugin_op op;
            fill_times(s, &op);
            in_flight(arg, &op);
        }
    }
    return n;
}

void
rs_plugin_get_stats(struct rs_plugin_stats *out)
{
    out->comms = atomic_load(&stats.comms);
    out->comms_refused = atomic_load(&stats.comms_refused);
    size_t live = 0;
    for (size_t i = 0; i < RS_PLUGIN_SLOTS; i++)
        live += atomic_load_explicit(&pool[i].state, memory_order_relaxed) == SLOT_LIVE;
    out->ops = stats.drained + stats.abandoned + live;
    out->channel_events = stats.channel_events;
    out->other_events = atomic_load(&stats.other_events);
    out->dropped = atomic_load(&stats.dropped);
    out->stray = atomic_load(&stats.stray);
    out->drained = stats.drained;
    out->host_only = stats.host_only;
    out->abandoned = stats.abandoned;
    int64_t off = atomic_load(&gpu_offset);
    out->gpu_offset_ns = off == INT64_MAX ? 0 : off;
}

bool
rs_plugin_other_named(const char *value, const char *self_path)
{
    const char *base, *self_base;

    if (!value || !*value || strcmp(value, "none") == 0)
        return false;
    if (self_path && strcmp(value, self_path) == 0)
        return false;
    base = strrchr(value, '/') ? strrchr(value, '/') + 1 : value;
    self_base = self_path && strrchr(self_path, '/') ? strrchr(self_path, '/') + 1 : self_path;
    return !(self_base && strcmp(base, self_base) == 0);
}
