/* The NCCL profiler plugin inside librankscope.so: NCCL_PROFILER_PLUGIN=<path of librankscope.so>
 * makes NCCL (2.28: symbol ncclProfiler_v5; 2.29: ncclProfiler_v6, same functions) call us for
 * every collective and point-to-point operation of every communicator. Per operation we keep the
 * communicator hash, rank and size, the op, NCCL's exact sequence number, the bytes, algorithm and
 * protocol, the enqueue times (CLOCK_REALTIME) and the GPU start/stop NCCL's kernel-channel
 * events give (GPU globaltimer, mapped to CLOCK_REALTIME here). The collector's flush thread
 * drains finished operations (rs_plugin_drain) into collective records with seq_exact, and hears
 * of operations in flight longer than the hang limit.
 *
 * NCCL's threads (the one calling NCCL, the proxy progress thread) only touch a fixed pool of
 * operation slots with atomics: no lock, no allocation, no system call but clock_gettime (vDSO).
 * A full pool drops and counts. Stops may come in any order (a channel's stop before the
 * collective's own stop, which means "enqueued"). Facts on NCCL's side: docs/collector.md "NCCL
 * profiler plugin" and ../shared/notes/nccl-profiler-plugin.md. */
#ifndef RS_COLLECTOR_PLUGIN_H
#define RS_COLLECTOR_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Operation slots: in flight plus finished-and-not-yet-drained at once (a flush period's worth). */
#define RS_PLUGIN_SLOTS 8192
/* Communicators one process may initialise (more are refused: NCCL runs them unprofiled). */
#define RS_PLUGIN_MAX_COMMS 1024

/* One operation as drained. Point-to-point operations are numbered by us, exactly as NCCL pairs
 * them: the n-th send from comm rank a to b meets b's n-th receive from a, so both get
 * seq = a << 48 | b << 32 | n (comm ranks below 65536, n below 2^32) and op RS_COLL_SENDRECV. */
struct rs_plugin_op {
    uint64_t comm_hash;
    uint32_t comm_rank, comm_size;
    uint32_t op; /* enum rs_coll_op */
    uint64_t seq;
    bool seq_exact;       /* false: a point-to-point op beyond 65536 ranks or peers unknown */
    uint64_t bytes;       /* NCCL's count times the type's size (the rank's own part) */
    const char *func;     /* NCCL's names: "AllReduce", "Send", ... */
    const char *algo;     /* "RING", "TREE", ...; "" for point-to-point */
    const char *proto;    /* "LL", "LL128", "SIMPLE"; "" for point-to-point */
    uint64_t enqueue_ns;  /* CLOCK_REALTIME when NCCL started the operation's event */
    uint64_t enqueued_ns; /* ... and when it stopped it (enqueued); 0: not yet */
    /* GPU start (earliest channel) and stop (latest channel) in CLOCK_REALTIME; 0 when NCCL gave
     * no kernel-channel events for this operation */
    uint64_t gpu_start_ns, gpu_end_ns;
    uint32_t channels; /* kernel-channel events seen */
    /* the CUDA device current on the thread that initialised the communicator (the driver's
     * cuCtxGetDevice at NCCL's init call), -1 when not known: names the rank's GPU before any
     * kernel record does (kernels are traced in windows only) */
    int32_t device;
};

struct rs_plugin_stats {
    uint64_t comms;          /* communicators initialised */
    uint64_t comms_refused;  /* beyond RS_PLUGIN_MAX_COMMS */
    uint64_t ops;            /* operations tracked: drained + abandoned + live now */
    uint64_t channel_events; /* kernel-channel starts of the drained and abandoned ones */
    uint64_t other_events;   /* events of other types, not tracked */
    uint64_t dropped;        /* pool full: operations not tracked */
    uint64_t drained;        /* operations handed to the done callback */
    uint64_t host_only;      /* ... of them without GPU times */
    uint64_t stray;          /* events whose parent we did not track, ignored */
    uint64_t abandoned;      /* slots in flight past RS_PLUGIN_ABANDON_NS, given up */
    int64_t gpu_offset_ns;   /* CLOCK_REALTIME - globaltimer estimate (0 before any event) */
};

/* An in-flight operation is given up (its slot reused, counted) after this long. */
#define RS_PLUGIN_ABANDON_NS (3600ull * 1000000000ull)

struct rs_plugin_options {
    /* an operation started and not finished after max(hang_min_ns, hang_factor x the
     * communicator's usual operation time) is reported in flight; hang_min_ns 0: never */
    uint64_t hang_min_ns;
    unsigned hang_factor;
};

/* Arms the plugin: from now on NCCL's init calls are accepted (before, or after rs_plugin_disarm,
 * init returns an error and NCCL runs without a profiler). Called by the collector once its
 * flush thread runs. Not thread-safe against itself. */
void rs_plugin_arm(const struct rs_plugin_options *opts);
void rs_plugin_disarm(void);

/* True once NCCL initialised a communicator with us: NCCL kernels seen by CUPTI are then not
 * turned into collective records too (convert.c). Any thread. */
bool rs_plugin_active(void);

typedef void (*rs_plugin_op_fn)(void *arg, const struct rs_plugin_op *op);

/* One pass over the pool at CLOCK_REALTIME `now_ns`: every finished operation goes to `done` (in
 * no particular order) and its slot is freed; every operation in flight longer than its hang
 * limit goes to `in_flight` (each pass, while it lasts; NULL: not asked). An operation is finished
 * when NCCL enqueued it and every kernel channel it announced stopped (or those that came, and
 * none new for a second); without channel events, when a later operation of its communicator
 * finished on the GPU (one stream: in order), or a second after its enqueue on a communicator
 * that never had channel events; a send or receive to oneself at its enqueue (NCCL gives it no
 * channel events: its GPU end is unknown and it cannot be seen to hang). `last` (the process ends):
 * also every enqueued operation with channels all stopped, or of a communicator without channel
 * events. Returns the number of operations passed to `done`. One thread at a time (the flush
 * thread). */
size_t rs_plugin_drain(uint64_t now_ns, bool last, rs_plugin_op_fn done, rs_plugin_op_fn in_flight,
                       void *arg);

void rs_plugin_get_stats(struct rs_plugin_stats *out);

/* The symbols NCCL looks up (exported, exports.map): NCCL 2.28 takes ncclProfiler_v5, 2.29 takes
 * ncclProfiler_v6 (its descriptor only adds members to the union; the ones we read are where v5
 * has them). The layout is NCCL's ncclProfiler_v5_t, written out here (no NCCL header needed). */
struct rs_nccl_profiler {
    const char *name;
    int (*init)(void **context, uint64_t comm_id, int *activation_mask, const char *comm_name,
                int n_nodes, int n_ranks, int rank, void *logfn);
    int (*start_event)(void *context, void **handle, void *descr);
    int (*stop_event)(void *handle);
    int (*record_event_state)(void *handle, int state, void *args);
    int (*finalize)(void *context);
};

extern const struct rs_nccl_profiler ncclProfiler_v5;
extern const struct rs_nccl_profiler ncclProfiler_v6;

/* What NCCL_PROFILER_PLUGIN says about us, given its value and the path of this library:
 * true when it names some other plugin (then ours is not loaded; the collector says so once).
 * Unset, empty, "none", our path or our file name: false. */
bool rs_plugin_other_named(const char *value, const char *self_path);

#endif
