/* Encode/decode between proto/wire.h types and the protobuf-c structs of rankscope.proto.
 * One validation routine (validate_rank_batch) serves encoders and decoders, so we never send
 * what we would refuse. Temporary protobuf-c structs come from a bump arena freed in one go. */
#include "proto/wire.h"

#include "common/auth_token.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/utf8.h"
#include "proto/capture_pb.h"
#include "rankscope.pb-c.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------------------------------
 */

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[];
};

struct arena {
    struct arena_block *head;
};

static void *
arena_alloc(struct arena *a, size_t n, size_t size)
{
    size_t bytes;
    struct arena_block *b = a->head;

    if (n != 0 && size > SIZE_MAX / n)
        return NULL;
    bytes = (n * size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    if (bytes == 0)
        bytes = sizeof(max_align_t);
    if (!b || b->cap - b->used < bytes) {
        size_t cap = bytes > 65536 ? bytes : 65536;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += bytes;
    return p;
}

/* protobuf-c's allocator over an arena: a decoded message's many small parts (one allocation per
 * record) come from a few blocks and go with them, instead of one malloc and free each. */
static void *
arena_pb_alloc(void *arena, size_t size)
{
    return arena_alloc(arena, 1, size);
}

static void
arena_pb_free(void *arena, void *p)
{
    (void)arena; /* freed with the arena */
    (void)p;
}

static ProtobufCAllocator
arena_allocator(struct arena *a)
{
    return (ProtobufCAllocator){arena_pb_alloc, arena_pb_free, a};
}

static void
arena_free(struct arena *a)
{
    while (a->head) {
        struct arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

/* ---- validation --------------------------------------------------------------------------------
 */

bool
rs_wire_job_valid(const char *job)
{
    size_t n = job ? strlen(job) : 0;

    if (n == 0 || n > RS_WIRE_MAX_JOB_LEN)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = job[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("._:@+=-", c)))
            return false;
    }
    return true;
}

void
rs_wire_job_sanitize(const char *in, char *out, size_t out_len)
{
    size_t n = 0;

    if (out_len == 0)
        return;
    for (; in && in[n] && n + 1 < out_len && n < RS_WIRE_MAX_JOB_LEN; n++) {
        char c = in[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  (c && strchr("._:@+=-", c));
        out[n] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, out_len, "unknown");
}

static bool
text_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n <= RS_WIRE_MAX_STRING_LEN && rs_utf8_valid(s ? s : "", n);
}

static bool
span_ok(uint64_t start, uint64_t end)
{
    return end >= start && end < RS_WIRE_MAX_TIME_NS;
}

/* A summary window: starts at a multiple of its length, which is 1 ns .. RS_WIRE_MAX_WINDOW_NS;
 * counts at least one launch, none longer than all of them together. */
static bool
window_ok(uint64_t start, uint64_t window_ns, uint64_t count, uint64_t total_ns, uint64_t max_ns)
{
    return window_ns > 0 && window_ns <= RS_WIRE_MAX_WINDOW_NS && start % window_ns == 0 &&
           span_ok(start, start + window_ns) && count > 0 && max_ns <= total_ns &&
           total_ns < RS_WIRE_MAX_TIME_NS;
}

static int
validate_rank_batch(const struct rs_rank_batch *b)
{
    const struct rs_rank_identity *id = &b->identity;

    if (!rs_wire_job_valid(id->job) || !text_ok(id->host) || !text_ok(id->gpu_uuid))
        return RS_E_MALFORMED;
    if (id->world_size != 0 && id->rank >= id->world_size)
        return RS_E_MALFORMED;
    if ((b->collector_flags & ~(uint32_t)RS_COLLECTOR_FLAGS_ALL) || !text_ok(b->collector_status))
        return RS_E_MALFORMED;
    if (b->n_captures > RS_CAPTURE_MAX_REPORTS)
        return RS_E_TOO_BIG;
    for (uint32_t i = 0; i < b->n_captures; i++)
        if (!rs_capture_report_valid(&b->captures[i]))
            return RS_E_MALFORMED;
    if (b->has_capture_count && !b->capture_id)
        return RS_E_MALFORMED;
    if (b->frames > b->frame_seq || b->frame_records > b->records_sent ||
        (b->frame_seq && (!b->collector_id || !b->frames)))
        return RS_E_MALFORMED;
    if (b->n_strings > RS_WIRE_MAX_STRINGS)
        return RS_E_TOO_BIG;
    for (uint32_t i = 0; i < b->n_strings; i++)
        if (!b->strings[i] || !text_ok(b->strings[i]))
            return RS_E_MALFORMED;
    for (uint32_t i = 0; i < b->n_kernels; i++) {
        const struct rs_kernel_record *k = &b->kernels[i];
        if (!span_ok(k->start_ns, k->end_ns) || k->name_id >= b->n_strings)
            return RS_E_MALFORMED;
    }
    for (uint32_t i = 0; i < b->n_memcpys; i++) {
        const struct rs_memcpy_record *m = &b->memcpys[i];
        if (!span_ok(m->start_ns, m->end_ns) || m->kind >= RS_COPY_KIND_COUNT)
            return RS_E_MALFORMED;
    }
    for (uint32_t i = 0; i < b->n_collectives; i++) {
        const struct rs_collective_record *c = &b->collectives[i];
        if (!span_ok(c->start_ns, c->end_ns) || c->op >= RS_COLL_OP_COUNT ||
            c->name_id >= b->n_strings)
            return RS_E_MALFORMED;
    }
    for (uint32_t i = 0; i < b->n_steps; i++) {
        const struct rs_step_record *st = &b->steps[i];
        if (!span_ok(st->start_ns, st->end_ns) ||
            (st->measured && !rs_step_metrics_valid(&st->metrics, st->end_ns - st->start_ns)))
            return RS_E_MALFORMED;
    }
    for (uint32_t i = 0; i < b->n_kernel_totals; i++) {
        const struct rs_kernel_total *t = &b->kernel_totals[i];
        if (!window_ok(t->window_start_ns, t->window_ns, t->count, t->total_ns, t->max_ns) ||
            t->name_id >= b->n_strings)
            return RS_E_MALFORMED;
    }
    for (uint32_t i = 0; i < b->n_copy_totals; i++) {
        const struct rs_copy_total *t = &b->copy_totals[i];
        if (!window_ok(t->window_start_ns, t->window_ns, t->count, t->total_ns, t->max_ns) ||
            t->kind >= RS_COPY_KIND_COUNT)
            return RS_E_MALFORMED;
    }
    for (uint32_t i = 0; i < b->n_stalls; i++) {
        const struct rs_stall_record *s = &b->stalls[i];
        if (s->kernel_name_id >= b->n_strings || s->reason_id >= b->n_strings)
            return RS_E_MALFORMED;
    }
    return 0;
}

const char *
rs_coll_op_name(enum rs_coll_op op)
{
    static const char *const names[RS_COLL_OP_COUNT] = {"Unknown",       "AllReduce", "AllGather",
                                                        "ReduceScatter", "Broadcast", "Reduce",
                                                        "SendRecv",      "AllToAll"};
    return (unsigned)op < RS_COLL_OP_COUNT ? names[op] : "Unknown";
}

const char *
rs_copy_kind_name(uint32_t kind)
{
    switch (kind) {
    case RS_COPY_HTOD:
        return "Memcpy HtoD";
    case RS_COPY_DTOH:
        return "Memcpy DtoH";
    case RS_COPY_DTOD:
        return "Memcpy DtoD";
    case RS_COPY_PEER:
        return "Memcpy PtoP";
    case RS_COPY_MEMSET:
        return "Memset (Device)";
    case RS_SYNC_EVENT:
        return "Event Sync";
    case RS_SYNC_STREAM_WAIT:
        return "Stream Wait Event";
    case RS_SYNC_STREAM:
        return "Stream Sync";
    case RS_SYNC_CONTEXT:
        return "Context Sync";
    case RS_LAUNCH_WAIT:
        return "Launch Wait";
    }
    return "Memcpy";
}

/* ---- C -> protobuf-c
 * ----------------------------------------------------------------------------- */

static uint64_t
batch_base(const struct rs_rank_batch *b)
{
    uint64_t base = UINT64_MAX;

#define RS__MIN_START(arr, n)                                                                      \
    for (uint32_t i = 0; i < (n); i++)                                                             \
        if ((arr)[i].start_ns < base)                                                              \
            base = (arr)[i].start_ns;
    RS__MIN_START(b->kernels, b->n_kernels)
    RS__MIN_START(b->memcpys, b->n_memcpys)
    RS__MIN_START(b->collectives, b->n_collectives)
    RS__MIN_START(b->steps, b->n_steps)
#undef RS__MIN_START
    for (uint32_t i = 0; i < b->n_kernel_totals; i++)
        if (b->kernel_totals[i].window_start_ns < base)
            base = b->kernel_totals[i].window_start_ns;
    for (uint32_t i = 0; i < b->n_copy_totals; i++)
        if (b->copy_totals[i].window_start_ns < base)
            base = b->copy_totals[i].window_start_ns;
    return base == UINT64_MAX ? 0 : base;
}

/* Allocates a pointer array and the structs it points to, all from the arena. */
#define ARENA_ARRAY(a, ptrs, items, n)                                                             \
    ((ptrs) = arena_alloc((a), (n), sizeof *(ptrs)),                                               \
     (items) = arena_alloc((a), (n), sizeof *(items)), (ptrs) && (items))

static int
rank_to_pb(struct arena *a, const struct rs_rank_batch *b, Rankscope__V1__RankBatch *pb)
{
    Rankscope__V1__RankIdentity *id;
    Rankscope__V1__ClockPair *clock;
    Rankscope__V1__KernelRecord **kp, *k;
    Rankscope__V1__MemcpyRecord **mp, *m;
    Rankscope__V1__CollectiveRecord **cp, *c;
    Rankscope__V1__StepRecord **sp, *s;
    Rankscope__V1__StallRecord **xp, *x;
    Rankscope__V1__StepMetrics *sm;
    Rankscope__V1__KernelTotal **ktp, *kt;
    Rankscope__V1__CopyTotal **ctp, *ct;
    uint64_t base;
    int rc = validate_rank_batch(b);

    if (rc != 0)
        return rc;
    id = arena_alloc(a, 1, sizeof *id);
    clock = arena_alloc(a, 1, sizeof *clock);
    if (!id || !clock || !ARENA_ARRAY(a, kp, k, b->n_kernels) ||
        !ARENA_ARRAY(a, mp, m, b->n_memcpys) || !ARENA_ARRAY(a, cp, c, b->n_collectives) ||
        !ARENA_ARRAY(a, sp, s, b->n_steps) || !ARENA_ARRAY(a, xp, x, b->n_stalls) ||
        !(sm = arena_alloc(a, b->n_steps, sizeof *sm)) ||
        !ARENA_ARRAY(a, ktp, kt, b->n_kernel_totals) || !ARENA_ARRAY(a, ctp, ct, b->n_copy_totals))
        return -ENOMEM;
    base = batch_base(b);
    rankscope__v1__rank_batch__init(pb);
    rankscope__v1__rank_identity__init(id);
    rankscope__v1__clock_pair__init(clock);
    id->job = (char *)b->identity.job;
    id->rank = b->identity.rank;
    id->local_rank = b->identity.local_rank;
    id->world_size = b->identity.world_size;
    id->host = (char *)(b->identity.host ? b->identity.host : "");
    id->gpu_uuid = (char *)(b->identity.gpu_uuid ? b->identity.gpu_uuid : "");
    id->pid = b->identity.pid;
    clock->source_ns = b->clock.source_ns;
    clock->realtime_ns = b->clock.realtime_ns;
    pb->identity = id;
    pb->clock = clock;
    pb->base_ns = base;
    pb->n_strings = b->n_strings;
    pb->strings = (char **)b->strings;
    pb->dropped_records = b->dropped_records;
    pb->collector_flags = b->collector_flags;
    pb->collector_status = (char *)(b->collector_status ? b->collector_status : "");
    pb->capture_id = b->capture_id;
    if (b->n_captures) {
        Rankscope__V1__CaptureReport **crp, *cr;
        if (!ARENA_ARRAY(a, crp, cr, b->n_captures))
            return -ENOMEM;
        for (uint32_t i = 0; i < b->n_captures; i++) {
            rs__capture_report_to_pb(&b->captures[i], &cr[i]);
            crp[i] = &cr[i];
        }
        pb->captures = crp;
        pb->n_captures = b->n_captures;
    }
    if (b->has_capture_count) {
        Rankscope__V1__CaptureCount *cc = arena_alloc(a, 1, sizeof *cc);
        if (!cc)
            return -ENOMEM;
        rankscope__v1__capture_count__init(cc);
        cc->kernels = b->capture_kernels;
        cc->stall_samples = b->capture_stall_samples;
        pb->capture_count = cc;
    }
    pb->collector_id = b->collector_id;
    pb->frame_seq = b->frame_seq;
    pb->records_sent = b->records_sent;
    pb->frames = b->frames;
    pb->frame_records = b->frame_records;
    for (uint32_t i = 0; i < b->n_kernels; i++) {
        const struct rs_kernel_record *r = &b->kernels[i];
        rankscope__v1__kernel_record__init(&k[i]);
        k[i].start_offset_ns = r->start_ns - base;
        k[i].duration_ns = r->end_ns - r->start_ns;
        k[i].name_id = r->name_id;
        k[i].stream = r->stream;
        k[i].device = r->device;
        k[i].correlation = r->correlation;
        kp[i] = &k[i];
    }
    for (uint32_t i = 0; i < b->n_memcpys; i++) {
        const struct rs_memcpy_record *r = &b->memcpys[i];
        rankscope__v1__memcpy_record__init(&m[i]);
        m[i].start_offset_ns = r->start_ns - base;
        m[i].duration_ns = r->end_ns - r->start_ns;
        m[i].bytes = r->bytes;
        m[i].kind = (Rankscope__V1__CopyKind)r->kind;
        m[i].stream = r->stream;
        mp[i] = &m[i];
    }
    for (uint32_t i = 0; i < b->n_collectives; i++) {
        const struct rs_collective_record *r = &b->collectives[i];
        rankscope__v1__collective_record__init(&c[i]);
        c[i].start_offset_ns = r->start_ns - base;
        c[i].duration_ns = r->end_ns - r->start_ns;
        c[i].op = (Rankscope__V1__CollectiveOp)r->op;
        c[i].comm_hash = r->comm_hash;
        c[i].seq = r->seq;
        c[i].bytes = r->bytes;
        c[i].name_id = r->name_id;
        c[i].stream = r->stream;
        c[i].seq_exact = r->seq_exact;
        cp[i] = &c[i];
    }
    for (uint32_t i = 0; i < b->n_steps; i++) {
        rankscope__v1__step_record__init(&s[i]);
        s[i].step = b->steps[i].step;
        s[i].start_offset_ns = b->steps[i].start_ns - base;
        s[i].duration_ns = b->steps[i].end_ns - b->steps[i].start_ns;
        if (b->steps[i].measured) {
            const struct rs_step_metrics *mt = &b->steps[i].metrics;
            rankscope__v1__step_metrics__init(&sm[i]);
            sm[i].compute_ns = mt->compute_ns;
            sm[i].comm_ns = mt->comm_ns;
            sm[i].exposed_comm_ns = mt->exposed_comm_ns;
            sm[i].idle_ns = mt->idle_ns;
            sm[i].host_gap_ns = mt->host_gap_ns;
            sm[i].kernels = mt->kernels;
            s[i].metrics = &sm[i];
        }
        sp[i] = &s[i];
    }
    for (uint32_t i = 0; i < b->n_kernel_totals; i++) {
        const struct rs_kernel_total *t = &b->kernel_totals[i];
        rankscope__v1__kernel_total__init(&kt[i]);
        kt[i].window_offset_ns = t->window_start_ns - base;
        kt[i].window_ns = t->window_ns;
        kt[i].name_id = t->name_id;
        kt[i].count = t->count;
        kt[i].total_ns = t->total_ns;
        kt[i].max_ns = t->max_ns;
        ktp[i] = &kt[i];
    }
    for (uint32_t i = 0; i < b->n_copy_totals; i++) {
        const struct rs_copy_total *t = &b->copy_totals[i];
        rankscope__v1__copy_total__init(&ct[i]);
        ct[i].window_offset_ns = t->window_start_ns - base;
        ct[i].window_ns = t->window_ns;
        ct[i].kind = (Rankscope__V1__CopyKind)t->kind;
        ct[i].count = t->count;
        ct[i].total_ns = t->total_ns;
        ct[i].max_ns = t->max_ns;
        ct[i].bytes = t->bytes;
        ctp[i] = &ct[i];
    }
    for (uint32_t i = 0; i < b->n_stalls; i++) {
        const struct rs_stall_record *r = &b->stalls[i];
        rankscope__v1__stall_record__init(&x[i]);
        x[i].kernel_name_id = r->kernel_name_id;
        x[i].pc_offset = r->pc_offset;
        x[i].reason_id = r->reason_id;
        x[i].count = r->count;
        x[i].cubin_crc = r->cubin_crc;
        xp[i] = &x[i];
    }
    pb->n_kernels = b->n_kernels;
    pb->kernels = kp;
    pb->n_memcpys = b->n_memcpys;
    pb->memcpys = mp;
    pb->n_collectives = b->n_collectives;
    pb->collectives = cp;
    pb->n_steps = b->n_steps;
    pb->steps = sp;
    pb->n_stalls = b->n_stalls;
    pb->stalls = xp;
    pb->n_kernel_totals = b->n_kernel_totals;
    pb->kernel_totals = ktp;
    pb->n_copy_totals = b->n_copy_totals;
    pb->copy_totals = ctp;
    return 0;
}

/* ---- protobuf-c -> C
 * ----------------------------------------------------------------------------- */

static bool
offset_ok(uint64_t base, uint64_t off, uint64_t dur, uint64_t *start, uint64_t *end)
{
    if (base >= RS_WIRE_MAX_TIME_NS || off >= RS_WIRE_MAX_TIME_NS || dur >= RS_WIRE_MAX_TIME_NS)
        return false;
    *start = base + off;
    *end = *start + dur;
    return *end < RS_WIRE_MAX_TIME_NS;
}

static int
rank_from_pb(struct arena *a, const Rankscope__V1__RankBatch *pb, struct rs_rank_batch *b)
{
    struct rs_kernel_record *k;
    struct rs_memcpy_record *m;
    struct rs_collective_record *c;
    struct rs_step_record *s;
    struct rs_stall_record *x;
    struct rs_kernel_total *kt;
    struct rs_copy_total *ct;
    uint64_t base = pb->base_ns;

    memset(b, 0, sizeof *b);
    if (!pb->identity)
        return RS_E_MALFORMED;
    if (pb->n_strings > RS_WIRE_MAX_STRINGS)
        return RS_E_TOO_BIG;
    k = arena_alloc(a, pb->n_kernels, sizeof *k);
    m = arena_alloc(a, pb->n_memcpys, sizeof *m);
    c = arena_alloc(a, pb->n_collectives, sizeof *c);
    s = arena_alloc(a, pb->n_steps, sizeof *s);
    x = arena_alloc(a, pb->n_stalls, sizeof *x);
    kt = arena_alloc(a, pb->n_kernel_totals, sizeof *kt);
    ct = arena_alloc(a, pb->n_copy_totals, sizeof *ct);
    if (!k || !m || !c || !s || !x || !kt || !ct)
        return -ENOMEM;
    b->identity.job = pb->identity->job;
    b->identity.rank = pb->identity->rank;
    b->identity.local_rank = pb->identity->local_rank;
    b->identity.world_size = pb->identity->world_size;
    b->identity.host = pb->identity->host;
    b->identity.gpu_uuid = pb->identity->gpu_uuid;
    b->identity.pid = pb->identity->pid;
    if (pb->clock) {
        b->clock.source_ns = pb->clock->source_ns;
        b->clock.realtime_ns = pb->clock->realtime_ns;
    }
    b->strings = (const char *const *)pb->strings;
    b->n_strings = (uint32_t)pb->n_strings;
    b->dropped_records = pb->dropped_records;
    b->collector_flags = pb->collector_flags;
    b->collector_status = pb->collector_status;
    b->capture_id = pb->capture_id;
    if (pb->n_captures > RS_CAPTURE_MAX_REPORTS)
        return RS_E_TOO_BIG;
    if (pb->n_captures) {
        struct rs_capture_report *cr = arena_alloc(a, pb->n_captures, sizeof *cr);
        if (!cr)
            return -ENOMEM;
        for (size_t i = 0; i < pb->n_captures; i++)
            if (rs__capture_report_from_pb(pb->captures[i], &cr[i]) != 0)
                return RS_E_MALFORMED;
        b->captures = cr;
        b->n_captures = (uint32_t)pb->n_captures;
    }
    if (pb->capture_count) {
        b->has_capture_count = true;
        b->capture_kernels = pb->capture_count->kernels;
        b->capture_stall_samples = pb->capture_count->stall_samples;
    }
    b->collector_id = pb->collector_id;
    b->frame_seq = pb->frame_seq;
    b->records_sent = pb->records_sent;
    b->frames = pb->frames;
    b->frame_records = pb->frame_records;
    for (size_t i = 0; i < pb->n_kernels; i++) {
        const Rankscope__V1__KernelRecord *r = pb->kernels[i];
        if (!offset_ok(base, r->start_offset_ns, r->duration_ns, &k[i].start_ns, &k[i].end_ns))
            return RS_E_MALFORMED;
        k[i].name_id = r->name_id;
        k[i].stream = r->stream;
        k[i].device = r->device;
        k[i].correlation = r->correlation;
    }
    for (size_t i = 0; i < pb->n_memcpys; i++) {
        const Rankscope__V1__MemcpyRecord *r = pb->memcpys[i];
        if (!offset_ok(base, r->start_offset_ns, r->duration_ns, &m[i].start_ns, &m[i].end_ns))
            return RS_E_MALFORMED;
        m[i].bytes = r->bytes;
        m[i].kind = (uint32_t)r->kind;
        m[i].stream = r->stream;
    }
    for (size_t i = 0; i < pb->n_collectives; i++) {
        const Rankscope__V1__CollectiveRecord *r = pb->collectives[i];
        if (!offset_ok(base, r->start_offset_ns, r->duration_ns, &c[i].start_ns, &c[i].end_ns))
            return RS_E_MALFORMED;
        c[i].op = (uint32_t)r->op;
        c[i].comm_hash = r->comm_hash;
        c[i].seq = r->seq;
        c[i].bytes = r->bytes;
        c[i].name_id = r->name_id;
        c[i].stream = r->stream;
        c[i].seq_exact = r->seq_exact;
    }
    for (size_t i = 0; i < pb->n_steps; i++) {
        const Rankscope__V1__StepRecord *r = pb->steps[i];
        s[i] = (struct rs_step_record){0}; /* (arena memory is not zeroed) */
        if (!offset_ok(base, r->start_offset_ns, r->duration_ns, &s[i].start_ns, &s[i].end_ns))
            return RS_E_MALFORMED;
        s[i].step = r->step;
        if (r->metrics) {
            s[i].measured = true;
            s[i].metrics = (struct rs_step_metrics){
                r->metrics->compute_ns, r->metrics->comm_ns,     r->metrics->exposed_comm_ns,
                r->metrics->idle_ns,    r->metrics->host_gap_ns, r->metrics->kernels};
        }
    }
    for (size_t i = 0; i < pb->n_kernel_totals; i++) {
        const Rankscope__V1__KernelTotal *r = pb->kernel_totals[i];
        uint64_t end;
        if (!offset_ok(base, r->window_offset_ns, 0, &kt[i].window_start_ns, &end))
            return RS_E_MALFORMED;
        kt[i].window_ns = r->window_ns;
        kt[i].name_id = r->name_id;
        kt[i].count = r->count;
        kt[i].total_ns = r->total_ns;
        kt[i].max_ns = r->max_ns;
    }
    for (size_t i = 0; i < pb->n_copy_totals; i++) {
        const Rankscope__V1__CopyTotal *r = pb->copy_totals[i];
        uint64_t end;
        if (!offset_ok(base, r->window_offset_ns, 0, &ct[i].window_start_ns, &end))
            return RS_E_MALFORMED;
        ct[i].window_ns = r->window_ns;
        ct[i].kind = (uint32_t)r->kind;
        ct[i].count = r->count;
        ct[i].total_ns = r->total_ns;
        ct[i].max_ns = r->max_ns;
        ct[i].bytes = r->bytes;
    }
    for (size_t i = 0; i < pb->n_stalls; i++) {
        const Rankscope__V1__StallRecord *r = pb->stalls[i];
        x[i].kernel_name_id = r->kernel_name_id;
        x[i].pc_offset = r->pc_offset;
        x[i].reason_id = r->reason_id;
        x[i].count = r->count;
        x[i].cubin_crc = r->cubin_crc;
    }
    b->kernels = k;
    b->n_kernels = (uint32_t)pb->n_kernels;
    b->memcpys = m;
    b->n_memcpys = (uint32_t)pb->n_memcpys;
    b->collectives = c;
    b->n_collectives = (uint32_t)pb->n_collectives;
    b->steps = s;
    b->n_steps = (uint32_t)pb->n_steps;
    b->stalls = x;
    b->n_stalls = (uint32_t)pb->n_stalls;
    b->kernel_totals = kt;
    b->n_kernel_totals = (uint32_t)pb->n_kernel_totals;
    b->copy_totals = ct;
    b->n_copy_totals = (uint32_t)pb->n_copy_totals;
    return validate_rank_batch(b);
}

/* ---- RankBatch frames
 * ---------------------------------------------------------------------------- */

struct rs_wire_rank_frame {
    struct arena arena;
    Rankscope__V1__RankBatch *pb;
    struct rs_rank_batch batch;
};

size_t
rs_wire_rank_batch_size(const struct rs_rank_batch *b)
{
    struct arena a = {0};
    Rankscope__V1__RankBatch pb;
    size_t n = 0;

    if (rank_to_pb(&a, b, &pb) == 0)
        n = rankscope__v1__rank_batch__get_packed_size(&pb);
    arena_free(&a);
    return n;
}

int
rs_wire_rank_batch_encode(const struct rs_rank_batch *b, uint8_t *buf, size_t cap, size_t *out_len)
{
    struct arena a = {0};
    Rankscope__V1__RankBatch pb;
    size_t n;
    int rc = rank_to_pb(&a, b, &pb);

    if (rc != 0)
        goto out;
    n = rankscope__v1__rank_batch__get_packed_size(&pb);
    if (n > cap || n > RS_WIRE_MAX_FRAME_BYTES) {
        rc = RS_E_TOO_BIG;
        goto out;
    }
    *out_len = rankscope__v1__rank_batch__pack(&pb, buf);
out:
    arena_free(&a);
    return rc;
}

int
rs_wire_rank_frame_decode(const uint8_t *buf, size_t len, size_t max_len, rs_wire_rank_frame **out)
{
    rs_wire_rank_frame *f;
    int rc;

    if (len > max_len)
        return RS_E_TOO_BIG;
    f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    ProtobufCAllocator alloc = arena_allocator(&f->arena);
    f->pb = rankscope__v1__rank_batch__unpack(&alloc, len, buf);
    if (!f->pb) {
        rc = RS_E_MALFORMED;
        goto fail;
    }
    rc = rank_from_pb(&f->arena, f->pb, &f->batch);
    if (rc != 0)
        goto fail;
    *out = f;
    return 0;
fail:
    rs_wire_rank_frame_free(f);
    return rc;
}

const struct rs_rank_batch *
rs_wire_rank_frame_batch(const rs_wire_rank_frame *f)
{
    return &f->batch;
}

void
rs_wire_rank_frame_free(rs_wire_rank_frame *f)
{
    if (!f)
        return;
    /* the decoded message lives in the arena (arena_allocator) */
    arena_free(&f->arena);
    free(f);
}

/* ---- AgentBatch
 * ---------------------------------------------------------------------------------- */

/* ---- GPU telemetry ------------------------------------------------------------------------ */

bool
rs_wire_gpu_uuid_valid(const char *uuid)
{
    size_t n = uuid ? strlen(uuid) : 0;

    if (n == 0 || n > RS_WIRE_MAX_UUID_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (uuid[i] <= ' ' || uuid[i] > '~')
            return false;
    return true;
}

/* A sample is what NVML can report: known field bits, times and counters in range, percentages
 * up to 100, clocks and link figures no hardware reaches exceeded. */
static bool
gpu_sample_ok(const struct rs_gpu_sample *g)
{
    return rs_wire_gpu_uuid_valid(g->uuid) && g->time_ns < RS_WIRE_MAX_TIME_NS &&
           (g->present & ~(uint32_t)RS_GPU_FIELDS_ALL) == 0 && g->util_gpu_pct <= 100 &&
           g->util_mem_pct <= 100 && g->sm_clock_mhz <= 65535 && g->sm_clock_max_mhz <= 65535 &&
           g->mem_clock_mhz <= 65535 && g->mem_clock_max_mhz <= 65535 &&
           g->temperature_c <= 255 && g->pcie_gen <= 255 && g->pcie_gen_max <= 255 &&
           g->pcie_width <= 255 && g->pcie_width_max <= 255 && g->nvlink_up <= 255 &&
           g->power_violation_ns < RS_WIRE_MAX_TIME_NS &&
           g->thermal_violation_ns < RS_WIRE_MAX_TIME_NS &&
           g->sync_boost_violation_ns < RS_WIRE_MAX_TIME_NS &&
           g->board_violation_ns < RS_WIRE_MAX_TIME_NS &&
           g->reliability_violation_ns < RS_WIRE_MAX_TIME_NS;
}

/* The field-by-field copy both ways (one list, so encoder and decoder cannot drift apart). */
#define RS__GPU_FIELDS(X)                                                                          \
    X(time_ns) X(present) X(sm_clock_mhz) X(sm_clock_max_mhz) X(mem_clock_mhz)                     \
    X(mem_clock_max_mhz) X(clock_reasons) X(power_violation_ns) X(thermal_violation_ns)            \
    X(sync_boost_violation_ns) X(board_violation_ns) X(reliability_violation_ns) X(power_mw)       \
    X(power_limit_mw) X(temperature_c) X(util_gpu_pct) X(util_mem_pct) X(mem_used_bytes)           \
    X(mem_total_bytes) X(ecc_corrected) X(ecc_uncorrected) X(remapped_correctable)                 \
    X(remapped_uncorrectable) X(remap_pending) X(remap_failed) X(pcie_gen) X(pcie_gen_max)         \
    X(pcie_width) X(pcie_width_max) X(pcie_replay) X(nvlink_errors) X(nvlink_up) X(xid_count)      \
    X(last_xid)

static int
gpus_to_pb(struct arena *a, const struct rs_agent_batch *b, Rankscope__V1__AgentBatch *pb)
{
    Rankscope__V1__GpuSample **gp, *g;

    if (b->n_gpus > RS_WIRE_MAX_GPUS_PER_BATCH)
        return RS_E_TOO_BIG;
    if (b->n_gpus == 0)
        return 0;
    if (!ARENA_ARRAY(a, gp, g, b->n_gpus))
        return -ENOMEM;
    for (uint32_t i = 0; i < b->n_gpus; i++) {
        const struct rs_gpu_sample *s = &b->gpus[i];
        if (!gpu_sample_ok(s))
            return RS_E_MALFORMED;
        rankscope__v1__gpu_sample__init(&g[i]);
        g[i].uuid = (char *)s->uuid;
#define RS__TO_PB(f) g[i].f = s->f;
        RS__GPU_FIELDS(RS__TO_PB)
#undef RS__TO_PB
        gp[i] = &g[i];
    }
    pb->n_gpus = b->n_gpus;
    pb->gpus = gp;
    return 0;
}

static int
gpus_from_pb(struct arena *a, const Rankscope__V1__AgentBatch *pb, struct rs_agent_batch *b)
{
    struct rs_gpu_sample *g;

    if (pb->n_gpus > RS_WIRE_MAX_GPUS_PER_BATCH)
        return RS_E_TOO_BIG;
    if (pb->n_gpus && pb->schema_version < 5)
        return RS_E_MALFORMED; /* telemetry needs version 5 (wire.h) */
    if (pb->n_gpus == 0)
        return 0;
    if (!(g = arena_alloc(a, pb->n_gpus, sizeof *g)))
        return -ENOMEM;
    for (size_t i = 0; i < pb->n_gpus; i++) {
        const Rankscope__V1__GpuSample *p = pb->gpus[i];
        memset(&g[i], 0, sizeof g[i]);
        g[i].uuid = p->uuid;
#define RS__FROM_PB(f) g[i].f = p->f;
        RS__GPU_FIELDS(RS__FROM_PB)
#undef RS__FROM_PB
        if (!gpu_sample_ok(&g[i]))
            return RS_E_MALFORMED;
    }
    b->gpus = g;
    b->n_gpus = (uint32_t)pb->n_gpus;
    return 0;
}

struct rs_wire_agent_batch {
    struct arena arena;
    Rankscope__V1__AgentBatch *pb;
    struct rs_agent_batch batch;
};

/* The schema version a record of copy kind `kind` needs (wire.h). */
static uint32_t
copy_kind_version(uint32_t kind)
{
    return kind == RS_LAUNCH_WAIT ? 4 : rs_copy_kind_is_sync(kind) ? 3 : 1;
}

/* The schema version a rank's records need (wire.h). */
static uint32_t
rank_version(const struct rs_rank_batch *r)
{
    uint32_t v = r->n_kernel_totals || r->n_copy_totals ? 2 : 1;

    for (uint32_t k = 0; k < r->n_steps && v < 2; k++)
        if (r->steps[k].measured)
            v = 2;
    for (uint32_t k = 0; k < r->n_memcpys; k++)
        if (copy_kind_version(r->memcpys[k].kind) > v)
            v = copy_kind_version(r->memcpys[k].kind);
    for (uint32_t k = 0; k < r->n_copy_totals; k++)
        if (copy_kind_version(r->copy_totals[k].kind) > v)
            v = copy_kind_version(r->copy_totals[k].kind);
    return v;
}

/* The schema version a batch needs: the highest of its ranks'. */
static uint32_t
batch_version(const struct rs_agent_batch *b)
{
    uint32_t v = b->n_gpus ? 5 : 1;

    for (uint32_t i = 0; i < b->n_ranks && v < RS_WIRE_SCHEMA_VERSION; i++) {
        uint32_t rv = rank_version(&b->ranks[i]);
        if (rv > v)
            v = rv;
    }
    return v;
}

int
rs_wire_agent_batch_encode(const struct rs_agent_batch *b, uint8_t **out, size_t *out_len)
{
    struct arena a = {0};
    Rankscope__V1__AgentBatch pb;
    Rankscope__V1__AgentHello hello;
    Rankscope__V1__ClockPair clock;
    Rankscope__V1__RankBatch **rp, *r;
    uint8_t *buf = NULL;
    size_t n;
    int rc = 0;

    if (b->n_ranks > RS_WIRE_MAX_RANKS_PER_BATCH || !text_ok(b->hello.host) ||
        !text_ok(b->hello.agent_version))
        return b->n_ranks > RS_WIRE_MAX_RANKS_PER_BATCH ? RS_E_TOO_BIG : RS_E_MALFORMED;
    rankscope__v1__agent_batch__init(&pb);
    rankscope__v1__agent_hello__init(&hello);
    rankscope__v1__clock_pair__init(&clock);
    if (!ARENA_ARRAY(&a, rp, r, b->n_ranks)) {
        rc = -ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        if ((rc = rank_to_pb(&a, &b->ranks[i], &r[i])) != 0)
            goto out;
        rp[i] = &r[i];
    }
    clock.source_ns = b->hello.clock.source_ns;
    clock.realtime_ns = b->hello.clock.realtime_ns;
    hello.agent_id = b->hello.agent_id;
    hello.boot_id = b->hello.boot_id;
    hello.host = (char *)(b->hello.host ? b->hello.host : "");
    hello.agent_version = (char *)(b->hello.agent_version ? b->hello.agent_version : "");
    hello.schema_version = batch_version(b);
    hello.clock = &clock;
    pb.schema_version = batch_version(b);
    pb.agent_id = b->agent_id;
    pb.boot_id = b->boot_id;
    pb.batch_seq = b->batch_seq;
    pb.hello = &hello;
    pb.n_ranks = b->n_ranks;
    pb.ranks = rp;
    pb.agent_dropped = b->agent_dropped;
    if ((rc = gpus_to_pb(&a, b, &pb)) != 0)
        goto out;
    n = rankscope__v1__agent_batch__get_packed_size(&pb);
    if (n > RS_WIRE_MAX_BATCH_BYTES) {
        rc = RS_E_TOO_BIG;
        goto out;
    }
    buf = malloc(n ? n : 1);
    if (!buf) {
        rc = -ENOMEM;
        goto out;
    }
    *out_len = rankscope__v1__agent_batch__pack(&pb, buf);
    *out = buf;
out:
    arena_free(&a);
    return rc;
}

/* The names' hashes for the server's store (rs_rank_batch.string_hashes): computed here, in the
 * server's decoding thread, not by its writer. */
static int
hash_strings(struct arena *a, struct rs_rank_batch *b)
{
    uint64_t *h = arena_alloc(a, b->n_strings, sizeof *h);

    if (!h)
        return -ENOMEM;
    for (uint32_t i = 0; i < b->n_strings; i++)
        h[i] = b->strings[i] ? rs_hash_fnv1a64(b->strings[i], strlen(b->strings[i])) : 0;
    b->string_hashes = h;
    return 0;
}

int
rs_wire_agent_batch_decode(const uint8_t *buf, size_t len, rs_wire_agent_batch **out)
{
    rs_wire_agent_batch *w;
    struct rs_rank_batch *ranks;
    const Rankscope__V1__AgentBatch *pb;
    int rc;

    if (len > RS_WIRE_MAX_BATCH_BYTES)
        return RS_E_TOO_BIG;
    w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    ProtobufCAllocator alloc = arena_allocator(&w->arena);
    w->pb = rankscope__v1__agent_batch__unpack(&alloc, len, buf);
    pb = w->pb;
    if (!pb) {
        rc = RS_E_MALFORMED;
        goto fail;
    }
    if (pb->schema_version < RS_WIRE_SCHEMA_VERSION_MIN ||
        pb->schema_version > RS_WIRE_SCHEMA_VERSION) {
        rc = RS_E_VERSION;
        goto fail;
    }
    if (pb->n_ranks > RS_WIRE_MAX_RANKS_PER_BATCH) {
        rc = RS_E_TOO_BIG;
        goto fail;
    }
    if (!pb->hello || pb->agent_id == 0 || !text_ok(pb->hello->host) ||
        !text_ok(pb->hello->agent_version) ||
        (pb->auth_token[0] && !rs_auth_token_valid(pb->auth_token))) {
        rc = RS_E_MALFORMED;
        goto fail;
    }
    ranks = arena_alloc(&w->arena, pb->n_ranks, sizeof *ranks);
    if (!ranks) {
        rc = -ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < pb->n_ranks; i++)
        if ((rc = rank_from_pb(&w->arena, pb->ranks[i], &ranks[i])) != 0 ||
            (rc = hash_strings(&w->arena, &ranks[i])) != 0)
            goto fail;
    w->batch.agent_id = pb->agent_id;
    w->batch.boot_id = pb->boot_id;
    w->batch.batch_seq = pb->batch_seq;
    w->batch.hello.agent_id = pb->hello->agent_id;
    w->batch.hello.boot_id = pb->hello->boot_id;
    w->batch.hello.host = pb->hello->host;
    w->batch.hello.agent_version = pb->hello->agent_version;
    if (pb->hello->clock) {
        w->batch.hello.clock.source_ns = pb->hello->clock->source_ns;
        w->batch.hello.clock.realtime_ns = pb->hello->clock->realtime_ns;
    }
    w->batch.ranks = ranks;
    w->batch.n_ranks = (uint32_t)pb->n_ranks;
    w->batch.agent_dropped = pb->agent_dropped;
    w->batch.auth_token = pb->auth_token;
    if ((rc = gpus_from_pb(&w->arena, pb, &w->batch)) != 0)
        goto fail;
    *out = w;
    return 0;
fail:
    rs_wire_agent_batch_free(w);
    return rc;
}

const struct rs_agent_batch *
rs_wire_agent_batch_get(const rs_wire_agent_batch *b)
{
    return &b->batch;
}

void
rs_wire_agent_batch_free(rs_wire_agent_batch *b)
{
    if (!b)
        return;
    /* the decoded message lives in the arena (arena_allocator) */
    arena_free(&b->arena);
    free(b);
}

int
rs_wire_agent_batch_peek_seq(const uint8_t *buf, size_t len, uint64_t *agent_id,
                             uint64_t *batch_seq)
{
    Rankscope__V1__AgentBatch *pb;

    if (len > RS_WIRE_MAX_BATCH_BYTES)
        return RS_E_TOO_BIG;
    pb = rankscope__v1__agent_batch__unpack(NULL, len, buf);
    if (!pb)
        return RS_E_MALFORMED;
    *agent_id = pb->agent_id;
    *batch_seq = pb->batch_seq;
    rankscope__v1__agent_batch__free_unpacked(pb, NULL);
    return 0;
}

int
rs_wire_auth_token_field(const char *token, uint8_t *buf, size_t cap, size_t *out_len)
{
    Rankscope__V1__AgentBatch pb;
    size_t n;

    if (!rs_auth_token_valid(token))
        return RS_E_MALFORMED;
    rankscope__v1__agent_batch__init(&pb); /* proto3: zero fields are not written */
    pb.auth_token = (char *)token;
    n = rankscope__v1__agent_batch__get_packed_size(&pb);
    if (n > cap)
        return RS_E_TOO_BIG;
    *out_len = rankscope__v1__agent_batch__pack(&pb, buf);
    return 0;
}

/* ---- ServerReply
 * --------------------------------------------------------------------------------- */

int
rs_wire_reply_encode(const struct rs_server_reply *r, uint8_t *buf, size_t cap, size_t *out_len)
{
    Rankscope__V1__ServerReply pb;
    Rankscope__V1__Control control;
    char err[512];
    size_t n;

    rankscope__v1__server_reply__init(&pb);
    rankscope__v1__control__init(&control);
    control.min_flush_ms = r->control.min_flush_ms;
    Rankscope__V1__CaptureOrder orders[RS_CAPTURE_MAX_ORDERS], *order_ptrs[RS_CAPTURE_MAX_ORDERS];
    if (r->control.n_captures > RS_CAPTURE_MAX_ORDERS)
        return RS_E_TOO_BIG;
    for (uint32_t i = 0; i < r->control.n_captures; i++) {
        if (!rs_capture_order_valid(&r->control.captures[i]))
            return RS_E_MALFORMED;
        rs__capture_order_to_pb(&r->control.captures[i], &orders[i]);
        order_ptrs[i] = &orders[i];
    }
    control.n_captures = r->control.n_captures;
    control.captures = order_ptrs;
    pb.control = &control;
    /* Error texts are for people; cut them so a reply always fits its limit. */
    snprintf(err, sizeof err, "%s", r->error ? r->error : "");
    if (!rs_utf8_valid(err, strlen(err)))
        snprintf(err, sizeof err, "(error text was not UTF-8)");
    pb.batch_seq = r->batch_seq;
    pb.status = (Rankscope__V1__ReplyStatus)r->status;
    pb.error = err;
    pb.retry_after_ms = r->retry_after_ms;
    n = rankscope__v1__server_reply__get_packed_size(&pb);
    if (n > cap || n > RS_WIRE_MAX_REPLY_BYTES)
        return RS_E_TOO_BIG;
    *out_len = rankscope__v1__server_reply__pack(&pb, buf);
    return 0;
}

int
rs_wire_reply_decode(const uint8_t *buf, size_t len, struct rs_server_reply *r, char *err,
                     size_t err_len)
{
    Rankscope__V1__ServerReply *pb;
    int rc = 0;

    if (len > RS_WIRE_MAX_REPLY_BYTES)
        return RS_E_TOO_BIG;
    pb = rankscope__v1__server_reply__unpack(NULL, len, buf);
    if (!pb)
        return RS_E_MALFORMED;
    if ((int)pb->status < RS_REPLY_ACK || (int)pb->status > RS_REPLY_UNAUTHORIZED) {
        rc = RS_E_MALFORMED;
        goto out;
    }
    snprintf(err, err_len, "%s", pb->error ? pb->error : "");
    r->batch_seq = pb->batch_seq;
    r->status = (uint32_t)pb->status;
    r->error = err;
    r->retry_after_ms = pb->retry_after_ms;
    r->control.min_flush_ms = pb->control ? pb->control->min_flush_ms : 0;
    r->control.n_captures = 0;
    if (pb->control && pb->control->n_captures > RS_CAPTURE_MAX_ORDERS) {
        rc = RS_E_MALFORMED;
        goto out;
    }
    for (size_t i = 0; pb->control && i < pb->control->n_captures; i++)
        if ((rc = rs__capture_order_from_pb(pb->control->captures[i],
                                            &r->control.captures[i])) != 0)
            goto out;
    if (pb->control)
        r->control.n_captures = (uint32_t)pb->control->n_captures;
out:
    rankscope__v1__server_reply__free_unpacked(pb, NULL);
    return rc;
}
