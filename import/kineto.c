/* Kineto trace import (see kineto.h): walks the document with the streaming JSON reader, reads
 * each trace event into a fixed-size struct, turns the GPU ones into wire records and hands them
 * to the sink in batches. */
#include "import/kineto.h"

#include "common/array.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/strtab.h"
#include "proto/nccl_kernel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Timestamps at or above this (in ns) are absolute epoch times: 1e15 µs is September 2001. */
#define ABSOLUTE_TIME_NS 1000000000000000000ll

struct event {
    char ph;
    char cat[32];
    char name[RS_WIRE_MAX_STRING_LEN + 1];
    bool name_truncated;
    bool have_ts, have_dur, have_stream, have_device, have_correlation, have_bytes, have_seq,
        have_nelems;
    int64_t ts_ns, dur_ns, tid, stream, device, correlation, bytes, seq, nelems;
    char collective[48]; /* args "Collective name" */
    char group[128];     /* args "Process Group Name" */
    char dtype[24];      /* args "dtype" */
};

struct seq_counter {
    uint64_t comm;
    uint32_t op, stream;
    uint64_t next;
    uint64_t last_start;
};

struct importer {
    rs_json_reader *r;
    const struct rs_kineto_options *o;
    struct rs_kineto_header hdr;
    rs_kineto_sink_fn sink;
    void *arg;
    struct rs_kineto_stats *st;
    char *err;
    size_t err_len;
    bool time_decided, relative;
    struct rs_strtab names;
    struct rs_kernel_record *kernels;
    struct rs_collective_record *colls;
    struct rs_memcpy_record *memcpys;
    struct rs_step_record *steps;
    uint32_t n_kernels, n_colls, n_memcpys, n_steps;
    uint64_t batch_first_ns;
    struct seq_counter *seqs;
    size_t n_seqs, cap_seqs;
    struct event ev;
};

static int
set_err(struct importer *im, int code, const char *fmt, ...)
{
    va_list ap;

    if (im->err_len) {
        va_start(ap, fmt);
        vsnprintf(im->err, im->err_len, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Valid JSON that is no trace (a config file beside the traces): RS_E_MALFORMED, said in stats. */
static int
not_a_trace(struct importer *im, const char *why)
{
    if (im->st)
        im->st->not_a_trace = true;
    return set_err(im, RS_E_MALFORMED, "not a trace: %s", why);
}

/* The reader failed: its message says what and where. */
static int
reader_err(struct importer *im, int code)
{
    return set_err(im, code, "%s", rs_json_error(im->r));
}

static const struct {
    const char *name;
    enum rs_coll_op op;
} collective_names[] = {
    {"allreduce", RS_COLL_ALLREDUCE},
    {"all_reduce", RS_COLL_ALLREDUCE},
    {"allreduce_coalesced", RS_COLL_ALLREDUCE},
    {"all_reduce_coalesced", RS_COLL_ALLREDUCE},
    {"allgather", RS_COLL_ALLGATHER},
    {"all_gather", RS_COLL_ALLGATHER},
    {"_allgather_base", RS_COLL_ALLGATHER},
    {"all_gather_into_tensor", RS_COLL_ALLGATHER},
    {"all_gather_into_tensor_coalesced", RS_COLL_ALLGATHER},
    {"allgather_coalesced", RS_COLL_ALLGATHER},
    {"allgather_into_tensor_coalesced", RS_COLL_ALLGATHER},
    {"reduce_scatter", RS_COLL_REDUCESCATTER},
    {"_reduce_scatter_base", RS_COLL_REDUCESCATTER},
    {"reduce_scatter_tensor", RS_COLL_REDUCESCATTER},
    {"reduce_scatter_tensor_coalesced", RS_COLL_REDUCESCATTER},
    {"broadcast", RS_COLL_BROADCAST},
    {"reduce", RS_COLL_REDUCE},
    {"send", RS_COLL_SENDRECV},
    {"recv", RS_COLL_SENDRECV},
    {"recvanysource", RS_COLL_SENDRECV},
    {"sendrecv", RS_COLL_SENDRECV},
    {"alltoall", RS_COLL_ALLTOALL},
    {"all_to_all", RS_COLL_ALLTOALL},
    {"alltoall_base", RS_COLL_ALLTOALL},
    {"all_to_all_single", RS_COLL_ALLTOALL},
};

enum rs_coll_op
rs_kineto_collective_op(const char *name)
{
    for (size_t i = 0; i < sizeof collective_names / sizeof collective_names[0]; i++)
        if (strcasecmp(name, collective_names[i].name) == 0)
            return collective_names[i].op;
    return RS_COLL_UNKNOWN;
}

/* Bytes per element of a PyTorch dtype name as Kineto writes it ("Float", "BFloat16", ...). */
static unsigned
dtype_size(const char *dtype)
{
    static const struct {
        const char *name;
        unsigned size;
    } sizes[] = {{"Float", 4},         {"Double", 8}, {"Half", 2},          {"BFloat16", 2},
                 {"Int", 4},           {"Long", 8},   {"Short", 2},         {"Char", 1},
                 {"Byte", 1},          {"Bool", 1},   {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1},
                 {"UInt16", 2},        {"UInt32", 4}, {"UInt64", 8},        {"ComplexFloat", 8},
                 {"ComplexDouble", 16}};

    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(dtype, sizes[i].name) == 0)
            return sizes[i].size;
    return 0;
}

/* Copies a string token into dst[cap], cutting it at a UTF-8 character boundary. */
static bool
copy_text(char *dst, size_t cap, const struct rs_json_token *t)
{
    size_t n = t->len;
    bool cut = n >= cap;

    if (cut) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)t->text[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, t->text, n);
    dst[n] = '\0';
    return cut;
}

/* ---- batches ----------------------------------------------------------------------------------
 */

static uint32_t
batch_records(const struct importer *im)
{
    return im->n_kernels + im->n_colls + im->n_memcpys + im->n_steps;
}

static int
flush_batch(struct importer *im)
{
    uint32_t n_strings = im->names.count;
    int rc;

    if (batch_records(im) == 0)
        return 0;
    struct rs_rank_batch b = {
        .identity = {im->o->job, im->st->rank, 0, im->st->world_size,
                     im->o->host ? im->o->host : "", "", 0},
        .clock = {im->batch_first_ns, im->batch_first_ns},
        .strings = (const char *const *)im->names.strings,
        .n_strings = n_strings,
        .kernels = im->kernels,
        .n_kernels = im->n_kernels,
        .memcpys = im->memcpys,
        .n_memcpys = im->n_memcpys,
        .collectives = im->colls,
        .n_collectives = im->n_colls,
        .steps = im->steps,
        .n_steps = im->n_steps,
        .collector_status = "imported from a PyTorch profiler trace",
    };
    if ((rc = im->sink(im->arg, &b)) != 0)
        return set_err(im, rc, "storing the imported records failed: %s", rs_strerror(rc));
    im->st->batches++;
    im->n_kernels = im->n_colls = im->n_memcpys = im->n_steps = 0;
    rs_strtab_clear(&im->names);
    return 0;
}

/* Room for one more record: flushes a full batch first. */
static int
make_room(struct importer *im, uint64_t start_ns)
{
    int rc;

    if (batch_records(im) >= RS_KINETO_BATCH_RECORDS && (rc = flush_batch(im)) != 0)
        return rc;
    if (batch_records(im) == 0 || start_ns < im->batch_first_ns)
        im->batch_first_ns = start_ns;
    if (im->st->first_ns == 0 || start_ns < im->st->first_ns)
        im->st->first_ns = start_ns;
    return 0;
}

static int
intern(struct importer *im, const char *name, uint32_t *id)
{
    if ((*id = rs_strtab_intern(&im->names, name)) == RS_STRTAB_NONE)
        return set_err(im, -ENOMEM, "out of memory");
    return 0;
}

/* ---- event conversion -------------------------------------------------------------------------
 */

enum { TIME_OK = 0, TIME_REJECTED = RS_KINETO_NEED_HEADER + 1 };

/* The event's absolute [start, end) in ns, deciding once per trace whether times are relative to
 * baseTimeNanoseconds. TIME_OK, TIME_REJECTED or RS_KINETO_NEED_HEADER. */
static int
event_time(struct importer *im, uint64_t *start, uint64_t *end)
{
    const struct event *e = &im->ev;

    if (!e->have_ts || !e->have_dur || e->dur_ns < 0)
        return TIME_REJECTED;
    if (!im->time_decided) {
        if (im->hdr.have_base)
            im->relative = true;
        else if (e->ts_ns < ABSOLUTE_TIME_NS && !im->hdr.scanned)
            return RS_KINETO_NEED_HEADER; /* the base may follow the events */
        else
            im->relative = false;
        im->time_decided = true;
        im->st->relative_time = im->relative;
    }
    int64_t s = e->ts_ns;
    if (im->relative) {
        if (s > 0 && (uint64_t)s > RS_WIRE_MAX_TIME_NS)
            return TIME_REJECTED;
        s += (int64_t)im->hdr.base_ns;
    }
    if (s < 0 || (uint64_t)s + (uint64_t)e->dur_ns >= RS_WIRE_MAX_TIME_NS)
        return TIME_REJECTED;
    *start = (uint64_t)s;
    *end = (uint64_t)s + (uint64_t)e->dur_ns;
    return TIME_OK;
}

static uint64_t
next_seq(struct importer *im, uint64_t comm, uint32_t op, uint32_t stream, uint64_t start,
         bool *out_of_order)
{
    for (size_t i = 0; i < im->n_seqs; i++) {
        struct seq_counter *c = &im->seqs[i];
        if (c->comm == comm && c->op == op && c->stream == stream) {
            *out_of_order = start < c->last_start;
            c->last_start = start;
            return c->next++;
        }
    }
    if (RS_ARRAY_RESERVE(im->seqs, im->cap_seqs, im->n_seqs, 1) != 0)
        return 0;
    im->seqs[im->n_seqs++] = (struct seq_counter){comm, op, stream, 2, start};
    *out_of_order = false;
    return 1;
}

static int
add_collective(struct importer *im, const struct rs_nccl_kernel *nk, uint64_t start, uint64_t end)
{
    const struct event *e = &im->ev;
    uint32_t stream = e->have_stream ? (uint32_t)e->stream : (uint32_t)e->tid;
    enum rs_coll_op op = e->collective[0] ? rs_kineto_collective_op(e->collective) : nk->op;
    uint64_t comm = RS_WIRE_STREAM_COMM_TAG | stream, seq;
    bool late = false;
    uint32_t name_id;
    int rc;

    if (op == RS_COLL_UNKNOWN)
        op = nk->op;
    if (e->group[0]) {
        char key[160];
        int n = snprintf(key, sizeof key, "pg:%s", e->group);
        comm = rs_hash_fnv1a64(key, (size_t)n);
    }
    if (e->have_seq) {
        seq = (uint64_t)e->seq;
    } else if ((seq = next_seq(im, comm, op, stream, start, &late)) == 0) {
        return set_err(im, -ENOMEM, "out of memory");
    }
    im->st->nccl_out_of_order += late;
    if ((rc = make_room(im, start)) != 0 || (rc = intern(im, e->name, &name_id)) != 0)
        return rc;
    uint64_t bytes = 0;
    if (e->have_nelems && e->nelems > 0)
        bytes = (uint64_t)e->nelems * dtype_size(e->dtype);
    im->colls[im->n_colls++] = (struct rs_collective_record){
        start, end, bytes, comm, seq, op, name_id, stream, e->have_seq};
    im->st->collectives++;
    return 0;
}

static int
add_kernel(struct importer *im, uint64_t start, uint64_t end)
{
    const struct event *e = &im->ev;
    struct rs_nccl_kernel nk = {0};
    uint32_t name_id;
    int rc;

    if (rs_nccl_kernel_parse(e->name, &nk) || e->collective[0])
        return add_collective(im, &nk, start, end);
    if ((rc = make_room(im, start)) != 0 || (rc = intern(im, e->name, &name_id)) != 0)
        return rc;
    im->kernels[im->n_kernels++] = (struct rs_kernel_record){
        start,
        end,
        name_id,
        e->have_stream ? (uint32_t)e->stream : (uint32_t)e->tid,
        e->have_device ? (uint32_t)e->device : 0,
        e->have_correlation ? (uint32_t)e->correlation : 0,
    };
    im->st->kernels++;
    return 0;
}

static enum rs_copy_kind
copy_kind(const char *name)
{
    if (strstr(name, "HtoD"))
        return RS_COPY_HTOD;
    if (strstr(name, "DtoH"))
        return RS_COPY_DTOH;
    if (strstr(name, "DtoD"))
        return RS_COPY_DTOD;
    if (strstr(name, "PtoP") || strstr(name, "Peer"))
        return RS_COPY_PEER;
    return RS_COPY_UNKNOWN;
}

/* Kineto's names of CUPTI's synchronization records ("cuda_sync" events) -> *out. */
static bool
sync_kind(const char *name, enum rs_copy_kind *out)
{
    for (uint32_t k = RS_SYNC_EVENT; rs_copy_kind_is_host_side(k); k++)
        if (strcmp(name, rs_copy_kind_name(k)) == 0) {
            *out = (enum rs_copy_kind)k;
            return true;
        }
    return false;
}

static int
add_memcpy(struct importer *im, enum rs_copy_kind kind, uint64_t start, uint64_t end)
{
    const struct event *e = &im->ev;
    int rc;

    if ((rc = make_room(im, start)) != 0)
        return rc;
    im->memcpys[im->n_memcpys++] = (struct rs_memcpy_record){
        start, end, e->have_bytes && e->bytes > 0 ? (uint64_t)e->bytes : 0, kind,
        e->have_stream ? (uint32_t)e->stream : (uint32_t)e->tid};
    if (rs_copy_kind_is_host_side(kind))
        im->st->syncs++;
    else
        im->st->memcpys++;
    return 0;
}

/* "ProfilerStep#12" -> 12. */
static bool
step_number(const char *name, uint64_t *out)
{
    static const char prefix[] = "ProfilerStep#";
    char *end;

    if (strncmp(name, prefix, sizeof prefix - 1) != 0)
        return false;
    const char *p = name + sizeof prefix - 1;
    if (*p < '0' || *p > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static int
add_step(struct importer *im, uint64_t step, uint64_t start, uint64_t end)
{
    int rc;

    if ((rc = make_room(im, start)) != 0)
        return rc;
    im->steps[im->n_steps++] =
        (struct rs_step_record){.step = step, .start_ns = start, .end_ns = end};
    im->st->steps++;
    return 0;
}

static bool
cat_is(const char *cat, const char *a, const char *b)
{
    return strcasecmp(cat, a) == 0 || (b && strcasecmp(cat, b) == 0);
}

/* One complete trace event read into im->ev. */
static int
convert_event(struct importer *im)
{
    const struct event *e = &im->ev;
    enum { KERNEL, MEMCPY, MEMSET, SYNC, STEP, OTHER } kind = OTHER;
    enum rs_copy_kind sync = RS_COPY_UNKNOWN;
    uint64_t start = 0, end = 0, step = 0;
    int rc;

    im->st->events++;
    if (e->ph == 'X') {
        if (cat_is(e->cat, "kernel", NULL))
            kind = KERNEL;
        else if (cat_is(e->cat, "gpu_memcpy", "memcpy"))
            kind = MEMCPY;
        else if (cat_is(e->cat, "gpu_memset", "memset"))
            kind = MEMSET;
        else if (cat_is(e->cat, "cuda_sync", NULL) && sync_kind(e->name, &sync))
            kind = SYNC;
        else if ((cat_is(e->cat, "user_annotation", "cpu_op") ||
                  cat_is(e->cat, "operator", NULL)) &&
                 step_number(e->name, &step))
            kind = STEP;
    }
    if (kind == OTHER) {
        im->st->ignored++;
        return 0;
    }
    if ((rc = event_time(im, &start, &end)) != TIME_OK) {
        im->st->rejected += rc == TIME_REJECTED;
        return rc == TIME_REJECTED ? 0 : rc;
    }
    im->st->names_truncated += e->name_truncated && (kind == KERNEL);
    if (end > im->st->last_ns)
        im->st->last_ns = end;
    switch (kind) {
    case KERNEL:
        return add_kernel(im, start, end);
    case MEMCPY:
        return add_memcpy(im, copy_kind(e->name), start, end);
    case MEMSET:
        return add_memcpy(im, RS_COPY_MEMSET, start, end);
    case SYNC:
        return add_memcpy(im, sync, start, end);
    case STEP:
        return add_step(im, step, start, end);
    case OTHER:
        break;
    }
    return 0;
}

/* ---- document walking -------------------------------------------------------------------------
 */

static int
next(struct importer *im, struct rs_json_token *t)
{
    int rc = rs_json_next(im->r, t);
    return rc ? reader_err(im, rc) : 0;
}

static int
skip(struct importer *im, const struct rs_json_token *t)
{
    int rc = rs_json_skip(im->r, t);
    return rc ? reader_err(im, rc) : 0;
}

/* An integer member value: *have (when not NULL) stays false for non-numbers, which are skipped;
 * *out is left alone then. */
static int
read_int(struct importer *im, unsigned decimals, int64_t *out, bool *have)
{
    struct rs_json_token t;
    int rc;

    if ((rc = next(im, &t)) != 0)
        return rc;
    if (t.type != RS_JSON_NUMBER)
        return skip(im, &t);
    bool ok = rs_json_number_scaled(&t, decimals, out) == 0;
    if (have)
        *have = ok;
    return 0;
}

static int
read_text(struct importer *im, char *dst, size_t cap, bool *truncated)
{
    struct rs_json_token t;
    int rc;

    if ((rc = next(im, &t)) != 0)
        return rc;
    if (t.type != RS_JSON_STRING)
        return skip(im, &t);
    bool cut = copy_text(dst, cap, &t);
    if (truncated)
        *truncated = cut;
    return 0;
}

static int
read_args(struct importer *im)
{
    struct event *e = &im->ev;
    struct rs_json_token t;
    int rc;

    for (;;) {
        if ((rc = next(im, &t)) != 0)
            return rc;
        if (t.type == RS_JSON_OBJECT_END)
            return 0;
        const char *k = t.text;
        if (strcmp(k, "stream") == 0)
            rc = read_int(im, 0, &e->stream, &e->have_stream);
        else if (strcmp(k, "device") == 0)
            rc = read_int(im, 0, &e->device, &e->have_device);
        else if (strcmp(k, "correlation") == 0)
            rc = read_int(im, 0, &e->correlation, &e->have_correlation);
        else if (strcmp(k, "bytes") == 0)
            rc = read_int(im, 0, &e->bytes, &e->have_bytes);
        else if (strcmp(k, "Seq") == 0)
            rc = read_int(im, 0, &e->seq, &e->have_seq);
        else if (strcmp(k, "In msg nelems") == 0)
            rc = read_int(im, 0, &e->nelems, &e->have_nelems);
        else if (strcmp(k, "Collective name") == 0)
            rc = read_text(im, e->collective, sizeof e->collective, NULL);
        else if (strcmp(k, "Process Group Name") == 0)
            rc = read_text(im, e->group, sizeof e->group, NULL);
        else if (strcmp(k, "dtype") == 0)
            rc = read_text(im, e->dtype, sizeof e->dtype, NULL);
        else if ((rc = next(im, &t)) == 0)
            rc = skip(im, &t);
        if (rc != 0)
            return rc;
    }
}

/* After the '{' of one event. */
static int
read_event(struct importer *im)
{
    struct event *e = &im->ev;
    struct rs_json_token t;
    int rc;

    e->ph = 0;
    e->cat[0] = e->name[0] = e->collective[0] = e->group[0] = e->dtype[0] = '\0';
    e->name_truncated = e->have_ts = e->have_dur = e->have_stream = e->have_device =
        e->have_correlation = e->have_bytes = e->have_seq = e->have_nelems = false;
    e->tid = 0;
    for (;;) {
        if ((rc = next(im, &t)) != 0)
            return rc;
        if (t.type == RS_JSON_OBJECT_END)
            return convert_event(im);
        const char *k = t.text;
        if (strcmp(k, "ph") == 0) {
            char ph[2] = "";
            rc = read_text(im, ph, sizeof ph, NULL);
            e->ph = ph[0];
        } else if (strcmp(k, "cat") == 0) {
            rc = read_text(im, e->cat, sizeof e->cat, NULL);
        } else if (strcmp(k, "name") == 0) {
            rc = read_text(im, e->name, sizeof e->name, &e->name_truncated);
        } else if (strcmp(k, "ts") == 0) {
            rc = read_int(im, 3, &e->ts_ns, &e->have_ts);
        } else if (strcmp(k, "dur") == 0) {
            rc = read_int(im, 3, &e->dur_ns, &e->have_dur);
        } else if (strcmp(k, "tid") == 0) {
            rc = read_int(im, 0, &e->tid, NULL); /* stays 0 when not a number ("stream 7") */
        } else if (strcmp(k, "args") == 0) {
            if ((rc = next(im, &t)) == 0)
                rc = t.type == RS_JSON_OBJECT ? read_args(im) : skip(im, &t);
        } else if ((rc = next(im, &t)) == 0) {
            rc = skip(im, &t);
        }
        if (rc != 0)
            return rc;
    }
}

static int
start_events(struct importer *im)
{
    const struct rs_kineto_options *o = im->o;

    if (o->rank >= 0) {
        im->st->rank = (uint32_t)o->rank;
    } else if (im->hdr.have_rank) {
        im->st->rank = im->hdr.rank;
    } else if (!im->hdr.scanned) {
        return RS_KINETO_NEED_HEADER;
    } else {
        return set_err(im, RS_E_CONFIG,
                       "the trace does not say its rank (no distributedInfo.rank): give --rank or "
                       "put the rank in the file name (trace_rank3.json)");
    }
    im->st->world_size = im->hdr.world_size;
    if (im->st->world_size && im->st->rank >= im->st->world_size)
        return set_err(im, RS_E_MALFORMED, "rank %u is not below the world size %u", im->st->rank,
                       im->st->world_size);
    return 0;
}

/* After the '[' of traceEvents (or of a document that is a bare event array). */
static int
read_events(struct importer *im)
{
    struct rs_json_token t;
    int rc;

    if ((rc = start_events(im)) != 0)
        return rc;
    for (;;) {
        if ((rc = next(im, &t)) != 0)
            return rc;
        if (t.type == RS_JSON_ARRAY_END)
            return 0;
        if (t.type != RS_JSON_OBJECT)
            return set_err(im, RS_E_MALFORMED, "a trace event is not an object at byte %llu",
                           (unsigned long long)t.offset);
        if ((rc = read_event(im)) != 0)
            return rc;
    }
}

static int
read_distributed_info(struct importer *im)
{
    struct rs_json_token t;
    int64_t v;
    bool have;
    int rc;

    for (;;) {
        if ((rc = next(im, &t)) != 0)
            return rc;
        if (t.type == RS_JSON_OBJECT_END)
            return 0;
        bool is_rank = strcmp(t.text, "rank") == 0, is_world = strcmp(t.text, "world_size") == 0;
        if (!is_rank && !is_world) {
            if ((rc = next(im, &t)) != 0 || (rc = skip(im, &t)) != 0)
                return rc;
            continue;
        }
        have = false;
        if ((rc = read_int(im, 0, &v, &have)) != 0)
            return rc;
        if (!have || v < 0 || v > 16777215)
            return set_err(im, RS_E_MALFORMED, "distributedInfo.%s is not a rank number",
                           is_rank ? "rank" : "world_size");
        if (is_rank) {
            im->hdr.rank = (uint32_t)v;
            im->hdr.have_rank = true;
        } else {
            im->hdr.world_size = (uint32_t)v;
        }
    }
}

/* The top-level object; with events = false only the header fields are read. */
static int
read_document(struct importer *im, bool events)
{
    struct rs_json_token t;
    bool seen_events = false;
    int rc;

    if ((rc = next(im, &t)) != 0)
        return rc;
    if (t.type == RS_JSON_ARRAY) /* the Chrome trace "JSON Array Format" */
        return events ? read_events(im) : skip(im, &t);
    if (t.type != RS_JSON_OBJECT)
        return not_a_trace(im, "the document is not a JSON object");
    for (;;) {
        if ((rc = next(im, &t)) != 0)
            return rc;
        if (t.type == RS_JSON_OBJECT_END)
            break;
        if (strcmp(t.text, "traceEvents") == 0) {
            if ((rc = next(im, &t)) != 0)
                return rc;
            if (t.type != RS_JSON_ARRAY)
                return set_err(im, RS_E_MALFORMED, "traceEvents is not an array at byte %llu",
                               (unsigned long long)t.offset);
            seen_events = true;
            rc = events ? read_events(im) : skip(im, &t);
        } else if (strcmp(t.text, "baseTimeNanoseconds") == 0) {
            int64_t v = 0;
            bool have = false;
            if ((rc = read_int(im, 0, &v, &have)) == 0 && (!have || v < 0))
                rc = set_err(im, RS_E_MALFORMED, "baseTimeNanoseconds is not a time");
            im->hdr.base_ns = (uint64_t)v;
            im->hdr.have_base = rc == 0;
        } else if (strcmp(t.text, "distributedInfo") == 0) {
            if ((rc = next(im, &t)) == 0)
                rc = t.type == RS_JSON_OBJECT ? read_distributed_info(im) : skip(im, &t);
        } else if ((rc = next(im, &t)) == 0) {
            rc = skip(im, &t);
        }
        if (rc != 0)
            return rc;
    }
    if (!seen_events)
        return not_a_trace(im, "no traceEvents array");
    if ((rc = next(im, &t)) != 0)
        return rc;
    return 0;
}

int
rs_kineto_header_scan(rs_json_reader *r, struct rs_kineto_header *out, char *err, size_t err_len)
{
    struct importer im = {.r = r, .err = err, .err_len = err_len};
    int rc = read_document(&im, false);

    if (rc == 0) {
        *out = im.hdr;
        out->scanned = true;
    }
    return rc;
}

int
rs_kineto_import(rs_json_reader *r, const struct rs_kineto_options *o,
                 const struct rs_kineto_header *header, rs_kineto_sink_fn sink, void *arg,
                 struct rs_kineto_stats *stats, char *err, size_t err_len)
{
    struct importer im = {
        .r = r, .o = o, .sink = sink, .arg = arg, .st = stats, .err = err, .err_len = err_len};
    int rc = -ENOMEM;

    memset(stats, 0, sizeof *stats);
    if (err_len)
        err[0] = '\0';
    if (header)
        im.hdr = *header;
    rs_strtab_init(&im.names);
    im.kernels = malloc(RS_KINETO_BATCH_RECORDS * sizeof *im.kernels);
    im.colls = malloc(RS_KINETO_BATCH_RECORDS * sizeof *im.colls);
    im.memcpys = malloc(RS_KINETO_BATCH_RECORDS * sizeof *im.memcpys);
    im.steps = malloc(RS_KINETO_BATCH_RECORDS * sizeof *im.steps);
    if (!im.kernels || !im.colls || !im.memcpys || !im.steps) {
        set_err(&im, rc, "out of memory");
        goto done;
    }
    if ((rc = read_document(&im, true)) == 0)
        rc = flush_batch(&im);
done:
    free(im.kernels);
    free(im.colls);
    free(im.memcpys);
    free(im.steps);
    free(im.seqs);
    rs_strtab_fini(&im.names);
    return rc;
}
