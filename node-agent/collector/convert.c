/* CUPTI activity records -> rankscope records (see convert.h). */
#include "node-agent/collector/convert.h"

#include "proto/in_flight.h"
#include "proto/nccl_kernel.h"
#include "node-agent/collector_client.h"
#include "node-agent/collector/log.h"
#include "common/strtab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 64
#define MAX_OPEN_RANGES 64 /* NVTX ranges open at once that we track (step ranges nest little) */
#define MAX_NCCL_STREAMS 256

struct device {
    uint32_t id;
    char uuid[48];
};

struct coll_seq {
    uint32_t stream;
    uint32_t op;
    uint64_t next;
};

struct name_info {
    bool ready;
    uint32_t collector_id; /* id of the (demangled) name in the collector handle */
    bool is_nccl;
    struct rs_nccl_kernel nccl;
};

struct open_range {
    uint32_t id;
    uint64_t start_ns;
    uint64_t step; /* UINT64_MAX: not a step range */
};

struct rs_convert {
    struct rs_env_identity id;
    char *socket_path;
    rs_demangle_fn demangle;
    char *step_range;
    uint64_t next_user_step;
    struct open_range ranges[MAX_OPEN_RANGES];
    unsigned n_ranges;
    rs_collector *out; /* opened at the first timed record */
    bool uuid_known;   /* the handle's identity carries the GPU UUID */
    uint32_t status_flags;
    struct device devices[MAX_DEVICES];
    unsigned n_devices;
    struct coll_seq seqs[MAX_NCCL_STREAMS];
    unsigned n_seqs;
    struct rs_strtab mangled; /* CUPTI name -> index into names[] */
    struct name_info *names;
    uint32_t names_cap;
    uint64_t pending_dropped;
    int last_device;             /* of the latest kernel; -1 before */
    rs_launch_wait *launch_wait; /* NULL: off */
    char status_text[200];       /* of rs_convert_report/_note, kept under an in-flight text */
    struct {
        bool any; /* this drain found operations in flight past the limit */
        char text[RS_IN_FLIGHT_MAX + 1]; /* what is said while RS_COLLECTOR_IN_FLIGHT is set */
        struct rs_plugin_op oldest;
        uint64_t now_ns;
        uint64_t logged_comm, logged_seq; /* the last one said on stderr */
        uint32_t logged_op;
    } hang;
    struct rs_convert_stats stats;
};

int
rs_convert_new(const struct rs_env_identity *id, const struct rs_convert_options *opts,
               rs_convert **out)
{
    rs_convert *c = calloc(1, sizeof *c);

    if (!c || !(c->socket_path = strdup(opts->socket_path)) ||
        !(c->step_range = strdup(opts->step_range ? opts->step_range : ""))) {
        if (c)
            free(c->socket_path);
        free(c);
        return -ENOMEM;
    }
    if (opts->launch_wait_lag_ns && rs_launch_wait_new(opts->launch_wait_lag_ns, &c->launch_wait)) {
        free(c->socket_path);
        free(c->step_range);
        free(c);
        return -ENOMEM;
    }
    c->id = *id;
    c->demangle = opts->demangle;
    c->last_device = -1;
    rs_strtab_init(&c->mangled);
    *out = c;
    return 0;
}

void
rs_convert_free(rs_convert *c)
{
    if (!c)
        return;
    rs_collector_free(c->out);
    rs_launch_wait_free(c->launch_wait);
    rs_strtab_fini(&c->mangled);
    free(c->names);
    free(c->socket_path);
    free(c->step_range);
    free(c);
}

static void
format_uuid(const CUuuid *u, char *out, size_t len)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static const char *
uuid_of(const rs_convert *c, uint32_t device)
{
    for (unsigned i = 0; i < c->n_devices; i++)
        if (c->devices[i].id == device)
            return c->devices[i].uuid;
    return "";
}

/* The agent connection, opened at the first record that needs it. The GPU UUID joins the
 * identity with the first record that names a device (a step marker may come before any). */
/* The text that goes with the status flags: an operation in flight past the hang limit says so
 * (its text refreshed at each drain) while it lasts; otherwise the last report or note. */
static const char *
status_text(const rs_convert *c)
{
    return c->status_flags & RS_COLLECTOR_IN_FLIGHT ? c->hang.text : c->status_text;
}

static rs_collector *
output(rs_convert *c, int device)
{
    struct rs_collector_options opts = {c->socket_path, 0};
    struct rs_rank_identity id = {c->id.job,  c->id.rank, c->id.local_rank, c->id.world_size,
                                  c->id.host, "",         c->id.pid};

    if (!c->out && rs_collector_open(&opts, &id, &c->out) == 0) {
        if (c->pending_dropped)
            rs_collector_count_dropped(c->out, c->pending_dropped);
        c->pending_dropped = 0;
        if (c->status_flags) /* noted before the connection existed */
            rs_collector_set_status(c->out, c->status_flags, status_text(c));
    }
    if (c->out && device >= 0 && !c->uuid_known && uuid_of(c, (uint32_t)device)[0])
        c->uuid_known = rs_collector_set_gpu_uuid(c->out, uuid_of(c, (uint32_t)device)) == 0;
    return c->out;
}

/* Interns a CUPTI kernel name: demangles and classifies it once per distinct name. */
static const struct name_info *
name_info(rs_convert *c, rs_collector *out, const char *mangled)
{
    const char *key = mangled ? mangled : "?";
    uint32_t idx = rs_strtab_intern(&c->mangled, key);
    struct name_info *ni;

    if (idx == RS_STRTAB_NONE)
        return NULL;
    if (idx >= c->names_cap) {
        uint32_t cap = c->names_cap ? c->names_cap * 2 : 256;
        struct name_info *n = realloc(c->names, cap * sizeof *n);
        if (!n)
            return NULL;
        memset(n + c->names_cap, 0, (cap - c->names_cap) * sizeof *n);
        c->names = n;
        c->names_cap = cap;
    }
    ni = &c->names[idx];
    if (!ni->ready) {
        char *pretty = c->demangle ? c->demangle(key) : NULL;
        const char *shown = pretty ? pretty : key;
        ni->is_nccl = rs_nccl_kernel_parse(shown, &ni->nccl);
        ni->collector_id = rs_collector_name(out, shown);
        ni->ready = ni->collector_id != UINT32_MAX;
        free(pretty);
    }
    return ni->ready ? ni : NULL;
}

static uint64_t
next_seq(rs_convert *c, uint32_t stream, uint32_t op)
{
    for (unsigned i = 0; i < c->n_seqs; i++)
        if (c->seqs[i].stream == stream && c->seqs[i].op == op)
            return c->seqs[i].next++;
    if (c->n_seqs == MAX_NCCL_STREAMS)
        return UINT64_MAX; /* absurdly many NCCL streams: unmatched, still recorded */
    c->seqs[c->n_seqs] = (struct coll_seq){stream, op, 1};
    c->n_seqs++;
    return 0;
}

/* A launch wait becomes a host-side record of the device's rank. */
static void
add_launch_wait(void *arg, uint32_t device, uint32_t stream, uint64_t start_ns, uint64_t end_ns)
{
    rs_convert *c = arg;
    rs_collector *out = output(c, (int)device);
    struct rs_memcpy_record r = {start_ns, end_ns, 0, RS_LAUNCH_WAIT, stream};

    if (out)
        rs_collector_add_memcpy(out, &r);
}

/* GPU work of the process, for the launch waits between it: queued at queued_ns, or by the
 * launch call of `correlation` (0: unknown). */
static void
track_busy(rs_convert *c, uint32_t device, uint32_t stream, uint64_t start_ns, uint64_t end_ns,
           uint64_t queued_ns, uint32_t correlation)
{
    if (c->launch_wait)
        rs_launch_wait_add(c->launch_wait, device, stream, start_ns, end_ns, queued_ns, correlation,
                           add_launch_wait, c);
}

static void
convert_kernel(rs_convert *c, const CUpti_ActivityKernel10 *k)
{
    rs_collector *out;
    const struct name_info *ni;

    if (k->start == 0 || k->end < k->start) {
        c->stats.untimed++;
        return;
    }
    track_busy(c, k->deviceId, k->streamId, k->start, k->end, k->queued, k->correlationId);
    if (!(out = output(c, k->deviceId)) || !(ni = name_info(c, out, k->name))) {
        c->stats.untimed++;
        return;
    }
    c->last_device = (int)k->deviceId;
    if (ni->is_nccl && rs_plugin_active()) {
        c->stats.nccl_kernels_skipped++; /* the plugin's record of it has the exact sequence */
        return;
    }
    if (ni->is_nccl) {
        struct rs_collective_record r = {k->start,
                                         k->end,
                                         0,
                                         RS_WIRE_STREAM_COMM_TAG | k->streamId,
                                         next_seq(c, k->streamId, ni->nccl.op),
                                         ni->nccl.op,
                                         ni->collector_id,
                                         k->streamId,
                                         false};
        if (rs_collector_add_collective(out, &r) == 0)
            c->stats.collectives++;
        return;
    }
    struct rs_kernel_record r = {k->start,    k->end,      ni->collector_id,
                                 k->streamId, k->deviceId, k->correlationId};
    if (rs_collector_add_kernel(out, &r) == 0)
        c->stats.kernels++;
}

int
rs_convert_device(const rs_convert *c)
{
    return c->last_device;
}

void
rs_convert_stall(rs_convert *c, const char *function, const char *reason, uint64_t pc_offset,
                 uint64_t samples, uint64_t cubin_crc)
{
    rs_collector *out = c->last_device >= 0 ? output(c, c->last_device) : NULL;
    const struct name_info *ni = out && function ? name_info(c, out, function) : NULL;
    uint32_t reason_id = out ? rs_collector_name(out, reason) : UINT32_MAX;

    if (!ni || reason_id == UINT32_MAX) {
        rs_convert_count_dropped(c, 1);
        return;
    }
    /* the wire keeps 32 bits of the CRC: enough to tell a job's cubins apart */
    struct rs_stall_record r = {pc_offset, samples, ni->collector_id, reason_id,
                                (uint32_t)cubin_crc};
    if (rs_collector_add_stall(out, &r) == 0)
        c->stats.stalls++;
}

static uint32_t
copy_kind(uint8_t cupti_kind)
{
    switch (cupti_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return RS_COPY_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return RS_COPY_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return RS_COPY_DTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return RS_COPY_PEER;
    default:
        return RS_COPY_UNKNOWN;
    }
}

static void
add_copy(rs_convert *c, uint64_t start, uint64_t end, uint64_t bytes, uint32_t kind,
         uint32_t stream, int device, uint64_t *counter)
{
    rs_collector *out;
    struct rs_memcpy_record r = {start, end, bytes, kind, stream};

    if (start == 0 || end < start) {
        c->stats.untimed++;
        return;
    }
    if (device >= 0) /* a copy or memset: GPU work, queue time unknown */
        track_busy(c, (uint32_t)device, stream, start, end, 0, 0);
    if ((out = output(c, device)) && rs_collector_add_memcpy(out, &r) == 0)
        (*counter)++;
}

static uint32_t
sync_kind(CUpti_ActivitySynchronizationType type)
{
    switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
        return RS_SYNC_EVENT;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
        return RS_SYNC_STREAM_WAIT;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
        return RS_SYNC_STREAM;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
        return RS_SYNC_CONTEXT;
    default:
        return RS_COPY_KIND_COUNT;
    }
}

/* A host synchronization: the interval the host thread waited (host times, like the copies'). */
static void
convert_sync(rs_convert *c, const CUpti_ActivitySynchronization2 *y)
{
    uint32_t kind = sync_kind(y->type);

    if (kind == RS_COPY_KIND_COUNT) {
        c->stats.other++;
        return;
    }
    add_copy(c, y->start, y->end, 0, kind, y->streamId, -1, &c->stats.syncs);
}

/* The driver calls whose API records are host synchronizations, and their kinds. */
static const struct {
    CUpti_CallbackId cbid;
    uint32_t kind;
} sync_calls[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, RS_SYNC_EVENT},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, RS_SYNC_STREAM_WAIT},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz, RS_SYNC_STREAM_WAIT},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, RS_SYNC_STREAM},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, RS_SYNC_STREAM},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, RS_SYNC_CONTEXT},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, RS_SYNC_CONTEXT},
};

bool
rs_convert_sync_call(size_t i, CUpti_CallbackId *cbid)
{
    if (i >= sizeof sync_calls / sizeof sync_calls[0])
        return false;
    *cbid = sync_calls[i].cbid;
    return true;
}

static const CUpti_CallbackId launch_calls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};

bool
rs_convert_launch_call(size_t i, CUpti_CallbackId *cbid)
{
    if (i >= sizeof launch_calls / sizeof launch_calls[0])
        return false;
    *cbid = launch_calls[i];
    return true;
}

/* A driver call that synchronizes, or one that launches a kernel (activity.c enables records of
 * no others): by its end the kernel of its correlation id was queued. */
static void
convert_api(rs_convert *c, const CUpti_ActivityAPI *a)
{
    for (size_t i = 0; i < sizeof sync_calls / sizeof sync_calls[0]; i++)
        if (sync_calls[i].cbid == a->cbid) {
            add_copy(c, a->start, a->end, 0, sync_calls[i].kind,
                     CUPTI_SYNCHRONIZATION_INVALID_VALUE, -1, &c->stats.syncs);
            return;
        }
    for (size_t i = 0; i < sizeof launch_calls / sizeof launch_calls[0]; i++)
        if (launch_calls[i] == a->cbid) {
            if (c->launch_wait && a->end && a->correlationId)
                rs_launch_wait_call(c->launch_wait, a->correlationId, a->end);
            c->stats.launch_calls++;
            return;
        }
    c->stats.other++;
}

/* Whether a range name ends at p: PyTorch's emit_nvtx() names the range of a record_function
 * "NAME, seq = N, op_id = M, sizes = [...]" (what follows NAME varies), so ", " ends it too. */
static bool
name_ends(const char *p)
{
    return p[0] == '\0' || (p[0] == ',' && p[1] == ' ');
}

/* The step number a range name marks, or UINT64_MAX when it marks none. */
static uint64_t
step_of(rs_convert *c, const char *name)
{
    static const char prefix[] = "ProfilerStep#";
    size_t len = strlen(c->step_range);
    char *end;

    if (!name)
        return UINT64_MAX;
    if (strncmp(name, prefix, sizeof prefix - 1) == 0) {
        unsigned long long n = strtoull(name + sizeof prefix - 1, &end, 10);
        if (end != name + sizeof prefix - 1 && name_ends(end))
            return n;
    }
    if (len && strncmp(name, c->step_range, len) == 0 && name_ends(name + len))
        return c->next_user_step++;
    return UINT64_MAX;
}

/* NVTX range start/end pairs (same id) that mark steps become step records (host times). */
static void
convert_marker(rs_convert *c, const CUpti_ActivityMarker2 *m)
{
    if (m->timestamp == 0) {
        c->stats.untimed++;
        return;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        uint64_t step = step_of(c, m->name);
        if (step == UINT64_MAX)
            return;
        if (c->n_ranges == MAX_OPEN_RANGES) /* unbalanced ranges: forget the oldest */
            memmove(c->ranges, c->ranges + 1, --c->n_ranges * sizeof c->ranges[0]);
        c->ranges[c->n_ranges++] = (struct open_range){m->id, m->timestamp, step};
        return;
    }
    if (!(m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END))
        return;
    for (unsigned i = 0; i < c->n_ranges; i++) {
        if (c->ranges[i].id != m->id)
            continue;
        struct rs_step_record s = {
            .step = c->ranges[i].step, .start_ns = c->ranges[i].start_ns, .end_ns = m->timestamp};
        rs_collector *out = output(c, -1);
        if (m->timestamp >= s.start_ns && out && rs_collector_add_step(out, &s) == 0)
            c->stats.steps++;
        memmove(c->ranges + i, c->ranges + i + 1, (--c->n_ranges - i) * sizeof c->ranges[0]);
        return;
    }
}

void
rs_convert_record(rs_convert *c, const CUpti_Activity *record)
{
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
        convert_kernel(c, (const CUpti_ActivityKernel10 *)record);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)record;
        add_copy(c, m->start, m->end, m->bytes, copy_kind(m->copyKind), m->streamId,
                 (int)m->deviceId, &c->stats.memcpys);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)record;
        add_copy(c, m->start, m->end, m->bytes, RS_COPY_MEMSET, m->streamId, (int)m->deviceId,
                 &c->stats.memsets);
        break;
    }
    case CUPTI_ACTIVITY_KIND_DRIVER:
        convert_api(c, (const CUpti_ActivityAPI *)record);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        convert_sync(c, (const CUpti_ActivitySynchronization2 *)record);
        break;
    case CUPTI_ACTIVITY_KIND_MARKER:
        convert_marker(c, (const CUpti_ActivityMarker2 *)record);
        break;
    case CUPTI_ACTIVITY_KIND_DEVICE: {
        const CUpti_ActivityDevice5 *d = (const CUpti_ActivityDevice5 *)record;
        if (c->n_devices < MAX_DEVICES && !uuid_of(c, d->id)[0]) {
            c->devices[c->n_devices].id = d->id;
            format_uuid(&d->uuid, c->devices[c->n_devices].uuid,
                        sizeof c->devices[c->n_devices].uuid);
            c->n_devices++;
        }
        break;
    }
    default:
        c->stats.other++;
        break;
    }
}

/* rs_convert_report (connect: open the connection now, so that a frame goes out) and
 * rs_convert_note (ride on whatever frame comes). An in-flight text, while it lasts, stays what
 * is said (status_text); the new text is said once it is cleared. */
static void
set_status(rs_convert *c, uint32_t flag, const char *text, bool connect)
{
    rs_collector *out = connect ? output(c, -1) : c->out;

    c->status_flags |= flag;
    snprintf(c->status_text, sizeof c->status_text, "%s", text ? text : "");
    if (out)
        rs_collector_set_status(out, c->status_flags, status_text(c));
}

void
rs_convert_report(rs_convert *c, uint32_t flag, const char *text)
{
    set_status(c, flag, text, true);
}

void
rs_convert_note(rs_convert *c, uint32_t flag, const char *text)
{
    set_status(c, flag, text, false);
}

/* The rank's GPU: of the latest kernel, else of the NCCL operation's communicator (between
 * windows there are no kernels); -1: not known. */
static int
rank_device(const rs_convert *c, const struct rs_plugin_op *op)
{
    return c->last_device >= 0 ? c->last_device : op->device;
}

void
rs_convert_plugin_op(rs_convert *c, const struct rs_plugin_op *op)
{
    rs_collector *out = output(c, rank_device(c, op));
    char name[96];
    uint32_t name_id;
    bool gpu = op->gpu_start_ns && op->gpu_end_ns >= op->gpu_start_ns;
    uint64_t end = op->enqueued_ns > op->enqueue_ns ? op->enqueued_ns : op->enqueue_ns;

    if (!out)
        return;
    if (op->algo[0])
        snprintf(name, sizeof name, "%.32s %.24s/%.24s", op->func, op->algo, op->proto);
    else
        snprintf(name, sizeof name, "%.32s", op->func);
    if ((name_id = rs_collector_name(out, name)) == UINT32_MAX) {
        rs_convert_count_dropped(c, 1);
        return;
    }
    struct rs_collective_record r = {gpu ? op->gpu_start_ns : op->enqueue_ns,
                                     gpu ? op->gpu_end_ns : end,
                                     op->bytes,
                                     op->comm_hash,
                                     op->seq,
                                     op->op,
                                     name_id,
                                     0,
                                     op->seq_exact};
    if (rs_collector_add_collective(out, &r) == 0)
        c->stats.plugin_ops++;
}

void
rs_convert_in_flight_begin(rs_convert *c)
{
    c->hang.any = false;
}

void
rs_convert_in_flight(rs_convert *c, const struct rs_plugin_op *op, uint64_t now_ns)
{
    if (c->hang.any && c->hang.oldest.enqueue_ns <= op->enqueue_ns)
        return;
    c->hang.any = true;
    c->hang.oldest = *op;
    c->hang.now_ns = now_ns;
}

void
rs_convert_in_flight_end(rs_convert *c)
{
    const struct rs_plugin_op *op = &c->hang.oldest;
    /* a rank whose first operation hangs is named with its GPU too */
    rs_collector *out = output(c, c->hang.any ? rank_device(c, op) : -1);
    char *text = c->hang.text;
    size_t text_size = sizeof c->hang.text;

    if (!c->hang.any) {
        if (c->status_flags & RS_COLLECTOR_IN_FLIGHT) {
            c->status_flags &= ~(uint32_t)RS_COLLECTOR_IN_FLIGHT;
            if (out)
                rs_collector_set_status(out, c->status_flags, c->status_text);
        }
        return;
    }
    struct rs_in_flight f = {op->comm_hash,
                             op->seq,
                             op->enqueue_ns / 1000000u,
                             (c->hang.now_ns - op->enqueue_ns) / 1000000u,
                             op->comm_rank,
                             op->comm_size,
                             "",
                             op->channels > 0};
    snprintf(f.op, sizeof f.op, "%s", op->func);
    if (rs_in_flight_format(&f, text, text_size) != 0)
        snprintf(text, text_size, "in flight: an NCCL operation NCCL names oddly");
    c->status_flags |= RS_COLLECTOR_IN_FLIGHT;
    if (out)
        rs_collector_set_status(out, c->status_flags, text);
    if (c->hang.logged_comm != op->comm_hash || c->hang.logged_seq != op->seq ||
        c->hang.logged_op != op->op) {
        c->hang.logged_comm = op->comm_hash;
        c->hang.logged_seq = op->seq;
        c->hang.logged_op = op->op;
        rs_collector_log("NCCL operation past the hang limit: %s", text);
    }
}

#define CLOCK_TOLERANCE_NS 1000000000ll

bool
rs_convert_check_clock(rs_convert *c, const struct rs_clock_pair *clock)
{
    int64_t diff = (int64_t)(clock->realtime_ns - clock->source_ns);

    if (clock->source_ns == 0 || (c->status_flags & RS_COLLECTOR_CLOCK_REPLACED) ||
        (diff < CLOCK_TOLERANCE_NS && diff > -CLOCK_TOLERANCE_NS))
        return false;
    rs_convert_report(c, RS_COLLECTOR_CLOCK_REPLACED,
                      "CUPTI timestamps are not CLOCK_REALTIME (another tool installed a clock); "
                      "times are mapped with the shipped clock pairs");
    return true;
}

void
rs_convert_count_dropped(rs_convert *c, uint64_t n)
{
    c->stats.cupti_dropped += n;
    if (c->out)
        rs_collector_count_dropped(c->out, n);
    else
        c->pending_dropped += n;
}

void
rs_convert_traced_from(rs_convert *c, uint64_t at_ns)
{
    if (c->launch_wait)
        rs_launch_wait_traced_from(c->launch_wait, at_ns);
}

int
rs_convert_flush(rs_convert *c, const struct rs_clock_pair *clock, bool last)
{
    if (c->launch_wait)
        rs_launch_wait_settle(c->launch_wait, last, add_launch_wait, c);
    return c->out ? rs_collector_flush(c->out, clock) : 0;
}

void
rs_convert_get_stats(const rs_convert *c, struct rs_convert_stats *out)
{
    *out = c->stats;
    if (c->launch_wait)
        rs_launch_wait_get_stats(c->launch_wait, &out->launch_wait);
}

rs_collector *
rs_convert_client(const rs_convert *c)
{
    return c->out;
}

void
rs_convert_rank(const rs_convert *c, const char **job, uint32_t *rank)
{
    *job = c->id.job;
    *rank = c->id.rank;
}
