/* Chrome/Perfetto trace export (see trace_export.h): per rank, a header, then the rank's kernels,
 * NCCL kernels and steps of the window streamed out as trace events. */
#include "query/trace_export.h"

#include "common/error.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct writer {
    FILE *f;
    uint32_t rank;
    uint64_t base_ns, t0, t1;
    bool first;
    uint64_t max_events, events; /* this rank's limit (0 = none) and count */
    struct rs_trace_export_stats *st;
};

/* A JSON string literal, escaped by jansson (names from the store are valid UTF-8). */
static void
put_string(FILE *f, const char *s)
{
    json_t *str = json_string_nocheck(s);

    if (!str || json_dumpf(str, f, JSON_ENCODE_ANY) != 0)
        fputs("\"?\"", f);
    json_decref(str);
}

/* "ts": µs relative to the base with 3 decimals, as Kineto writes it. */
static void
put_us(FILE *f, uint64_t ns)
{
    fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

/* Opens an event (the caller writes its args and closes it); RS_E_TOO_BIG past max_events. */
static int
event_start(struct writer *w, const char *cat, const char *name, uint64_t start, uint64_t end,
            uint32_t tid)
{
    if (w->max_events && w->events == w->max_events)
        return RS_E_TOO_BIG;
    w->events++;
    w->st->events++;
    fputs(w->first ? "\n  {" : ",\n  {", w->f);
    w->first = false;
    fprintf(w->f, "\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
    put_string(w->f, name);
    fprintf(w->f, ", \"pid\": %u, \"tid\": %u, \"ts\": ", w->rank, tid);
    put_us(w->f, start - w->base_ns);
    fputs(", \"dur\": ", w->f);
    put_us(w->f, end - start);
    return 0;
}

static bool
in_window(const struct writer *w, uint64_t start)
{
    return start >= w->t0 && start >= w->base_ns && (w->t1 == 0 || start < w->t1);
}

static int
put_kernel(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    struct writer *w = arg;
    int rc;

    if (!in_window(w, k->start_ns))
        return 0;
    if ((rc = event_start(w, "kernel", name, k->start_ns, k->end_ns, k->stream)) != 0)
        return rc;
    /* no "correlation": the store does not keep launch correlation ids, and a made-up one makes
     * HTA drop the kernel (it keeps GPU kernels whose correlation matches a CPU op of a step) */
    fprintf(w->f, ", \"args\": {\"device\": %u, \"stream\": %u}}", k->device, k->stream);
    w->st->kernels++;
    return 0;
}

/* The "Collective name" PyTorch gives each op (what the importer maps back). */
static const char *
collective_name(uint32_t op)
{
    static const char *const names[RS_COLL_OP_COUNT] = {"unknown",        "allreduce", "allgather",
                                                        "reduce_scatter", "broadcast", "reduce",
                                                        "sendrecv",       "alltoall"};
    return op < RS_COLL_OP_COUNT ? names[op] : "unknown";
}

static int
put_collective(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct writer *w = arg;
    char name[64];
    int rc;

    if (rank != w->rank || !in_window(w, c->start_ns))
        return 0;
    snprintf(name, sizeof name, "ncclDevKernel_%s", rs_coll_op_name(c->op));
    if ((rc = event_start(w, "kernel", name, c->start_ns, c->end_ns, c->stream)) != 0)
        return rc;
    fprintf(w->f,
            ", \"args\": {\"stream\": %u, \"Collective name\": \"%s\", \"Process Group Name\": "
            "\"%016llx\", \"Seq\": %llu, \"In msg nelems\": %llu, \"dtype\": \"Byte\"}}",
            c->stream, collective_name(c->op), (unsigned long long)c->comm_hash,
            (unsigned long long)c->seq, (unsigned long long)c->bytes);
    w->st->collectives++;
    return 0;
}

static int
put_memcpy(void *arg, const struct rs_memcpy_record *m)
{
    struct writer *w = arg;
    bool sync = rs_copy_kind_is_host_side(m->kind);
    const char *cat = sync ? "cuda_sync" : m->kind == RS_COPY_MEMSET ? "gpu_memset" : "gpu_memcpy";
    int rc;

    if (!in_window(w, m->start_ns))
        return 0;
    if ((rc = event_start(w, cat, rs_copy_kind_name(m->kind), m->start_ns, m->end_ns, m->stream)) !=
        0)
        return rc;
    if (sync) {
        fprintf(w->f, ", \"args\": {\"stream\": %d}}", (int)m->stream); /* -1: none */
        w->st->syncs++;
        return 0;
    }
    fprintf(w->f, ", \"args\": {\"stream\": %u, \"bytes\": %llu}}", m->stream,
            (unsigned long long)m->bytes);
    w->st->memcpys++;
    return 0;
}

static int
put_step(void *arg, const struct rs_step_record *s)
{
    struct writer *w = arg;
    char name[48];
    int rc;

    if (!in_window(w, s->start_ns))
        return 0;
    snprintf(name, sizeof name, "ProfilerStep#%llu", (unsigned long long)s->step);
    if ((rc = event_start(w, "user_annotation", name, s->start_ns, s->end_ns, 0)) != 0)
        return rc;
    fputs("}", w->f);
    w->st->steps++;
    return 0;
}

/* One rank's document to w->f. */
static int
write_rank(rs_store_read *r, const struct rs_trace_export_options *o, uint32_t world_size,
           struct writer *w)
{
    uint64_t from = rs_store_kernel_scan_from(o->since_ns),
             until = o->until_ns ? o->until_ns : UINT64_MAX;
    int rc;

    fprintf(w->f,
            "{\"schemaVersion\": 1, \"traceName\": \"rankscope export of job %s, rank %u\",\n"
            " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %u, \"world_size\": %u},\n"
            " \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": %llu,\n \"traceEvents\": [",
            o->job, w->rank, w->rank, world_size, (unsigned long long)w->base_ns);
    if ((rc = rs_store_kernels_scan(r, o->job, w->rank, from, until, put_kernel, w)) == 0 &&
        (rc = rs_store_memcpys_scan(r, o->job, w->rank, from, until, put_memcpy, w)) == 0 &&
        (rc = rs_store_collectives_scan_range(r, o->job, o->since_ns, until, put_collective, w)) ==
            0) {
        rc = rs_store_steps_scan(r, o->job, w->rank, 0, put_step, w);
        if (rc == RS_E_NOT_FOUND)
            rc = 0;
    }
    fputs("\n]}\n", w->f);
    return rc;
}

/* The job's ranks, their largest world size, and the base every rank's document shares. */
static int
job_layout(rs_store_read *r, const struct rs_trace_export_options *o, struct rs_rank_info **ranks,
           size_t *n_ranks, uint32_t *world_size, uint64_t *base_ns)
{
    struct rs_job_info job;
    int rc;

    if ((rc = rs_store_job_get(r, o->job, &job)) != 0 ||
        (rc = rs_store_ranks_get(r, o->job, ranks, n_ranks)) != 0)
        return rc;
    *world_size = 0;
    for (size_t i = 0; i < *n_ranks; i++)
        if ((*ranks)[i].world_size > *world_size)
            *world_size = (*ranks)[i].world_size;
    /* one base for every rank, so that the documents' timelines line up */
    *base_ns = o->since_ns > job.first_ns ? o->since_ns : job.first_ns;
    return 0;
}

int
rs_trace_export_rank(rs_store_read *r, const struct rs_trace_export_options *o, uint32_t rank,
                     FILE *f, struct rs_trace_export_stats *stats)
{
    struct rs_rank_info *ranks = NULL;
    size_t n_ranks = 0, i;
    uint32_t world_size;
    uint64_t base_ns;
    int rc;

    memset(stats, 0, sizeof *stats);
    if ((rc = job_layout(r, o, &ranks, &n_ranks, &world_size, &base_ns)) != 0)
        return rc;
    for (i = 0; i < n_ranks && ranks[i].rank != rank; i++)
        ;
    free(ranks);
    if (i == n_ranks)
        return RS_E_NOT_FOUND;
    struct writer w = {f, rank, base_ns, o->since_ns, o->until_ns, true, o->max_events, 0, stats};
    if ((rc = write_rank(r, o, world_size, &w)) == 0)
        stats->ranks = 1;
    return rc;
}

int
rs_trace_export(rs_store_read *r, const struct rs_trace_export_options *o,
                struct rs_trace_export_stats *stats, char *err, size_t err_len)
{
    struct rs_rank_info *ranks = NULL;
    size_t n_ranks = 0;
    uint32_t world_size;
    uint64_t base_ns;
    char path[4096];
    int rc;

    memset(stats, 0, sizeof *stats);
    if ((rc = job_layout(r, o, &ranks, &n_ranks, &world_size, &base_ns)) != 0) {
        snprintf(err, err_len, "job %s: %s", o->job, rs_strerror(rc));
        return rc;
    }
    for (size_t i = 0; i < n_ranks && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s_rank%u.json", o->dir, o->job, ranks[i].rank);
        struct writer w = {fopen(path, "w"),
                           ranks[i].rank,
                           base_ns,
                           o->since_ns,
                           o->until_ns,
                           true,
                           o->max_events,
                           0,
                           stats};
        if (!w.f) {
            rc = -errno;
            snprintf(err, err_len, "%s: %s", path, strerror(errno));
            break;
        }
        rc = write_rank(r, o, world_size, &w);
        if (fclose(w.f) != 0 && rc == 0) {
            rc = -errno;
            snprintf(err, err_len, "%s: %s", path, strerror(errno));
        } else if (rc != 0) {
            snprintf(err, err_len, "reading rank %u of job %s: %s", ranks[i].rank, o->job,
                     rs_strerror(rc));
        }
        stats->ranks += rc == 0;
    }
    free(ranks);
    return rc;
}
