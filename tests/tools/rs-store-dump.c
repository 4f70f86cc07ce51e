/* Test tool: summarises what a store holds for one job, as JSON on stdout — per rank kernel,
 * collective and step counts, and how many collective instances (comm, op, seq) were seen on
 * every rank; and per rank where its kernels are (raw records, windows) and how many of its steps
 * an agent measured. Used by tests/gpu/ to check cross-rank matching on real GPUs and by the
 * integration tests. usage: rs-store-dump DATA_DIR JOB [collectives]: with "collectives", one
 * JSON line per stored collective record instead (rank, communicator, op, seq, seq_exact, start,
 * duration, bytes), as tests/gpu/plugin.sh checks the NCCL profiler plugin's records. */
#include "common/error.h"
#include "query/instances.h"
#include "storage/store.h"

#include <stdio.h>
#include <string.h>

struct totals {
    uint32_t world;
    uint64_t total, complete, partial;
    double skew_ns;            /* summed over complete instances */
    uint64_t last_by_rank[64]; /* instances in which rank r had the shortest kernel */
};

static int
on_instance(void *arg, const struct rs_instance *in)
{
    struct totals *t = arg;

    t->total++;
    if (in->n != t->world) {
        t->partial++;
        return 0;
    }
    t->complete++;
    t->skew_ns += (double)(in->max_dur_ns - in->min_dur_ns);
    if (in->members[in->last].rank < 64) /* the last to arrive waits least */
        t->last_by_rank[in->members[in->last].rank]++;
    return 0;
}

struct where {
    uint64_t raw_kernels, window_kernels, measured_steps;
};

static int
count_raw(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    ((struct where *)arg)->raw_kernels++;
    return 0;
}

static int
count_window(void *arg, const struct rs_kernel_window *kw, const char *name, uint64_t name_hash)
{
    ((struct where *)arg)->window_kernels += kw->count;
    return 0;
}

static int
count_measured(void *arg, const struct rs_step_record *s)
{
    ((struct where *)arg)->measured_steps += s->measured;
    return 0;
}

struct dump {
    rs_store_read *r;
    const char *job;
    int first;
};

static int
on_rank(void *arg, const struct rs_rank_info *r)
{
    struct dump *d = arg;
    struct where w = {0, 0, 0};

    rs_store_kernels_scan(d->r, d->job, r->rank, 0, UINT64_MAX, count_raw, &w);
    rs_store_kernel_windows_scan(d->r, d->job, r->rank, 0, UINT64_MAX, count_window, &w);
    rs_store_steps_scan(d->r, d->job, r->rank, 0, count_measured, &w);
    printf("%s{\"rank\":%u,\"host\":\"%s\",\"gpu_uuid\":\"%s\",\"kernels\":%llu,"
           "\"kernel_ms\":%.3f,\"collectives\":%llu,\"nccl_ms\":%.3f,\"memcpys\":%llu,"
           "\"steps\":%llu,\"dropped\":%llu,\"collector_flags\":%u,\"clock_offset_ns\":%lld,"
           "\"raw_kernels\":%llu,\"window_kernels\":%llu,\"measured_steps\":%llu}",
           d->first ? "" : ",", r->rank, r->host, r->gpu_uuid, (unsigned long long)r->n_kernels,
           (double)r->kernel_ns / 1e6, (unsigned long long)r->n_collectives,
           (double)r->collective_ns / 1e6, (unsigned long long)r->n_memcpys,
           (unsigned long long)r->n_steps, (unsigned long long)r->dropped_records,
           r->collector_flags, (long long)r->clock_offset_ns, (unsigned long long)w.raw_kernels,
           (unsigned long long)w.window_kernels, (unsigned long long)w.measured_steps);
    d->first = 0;
    return 0;
}

static int
print_collective(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    (void)arg;
    printf("{\"rank\":%u,\"comm\":\"0x%016llx\",\"op\":%u,\"seq\":%llu,\"seq_exact\":%s,"
           "\"start_ns\":%llu,\"dur_ns\":%llu,\"bytes\":%llu}\n",
           rank, (unsigned long long)c->comm_hash, c->op, (unsigned long long)c->seq,
           c->seq_exact ? "true" : "false", (unsigned long long)c->start_ns,
           (unsigned long long)(c->end_ns - c->start_ns), (unsigned long long)c->bytes);
    return 0;
}

int
main(int argc, char **argv)
{
    struct rs_store_options opts = {0};
    struct rs_job_info job;
    struct totals inst;
    rs_store *st;
    rs_store_read *r;
    int rc;

    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "collectives") == 0)) {
        fprintf(stderr, "usage: rs-store-dump DATA_DIR JOB [collectives]\n");
        return 2;
    }
    if ((rc = rs_store_open(argv[1], &opts, &st)) || (rc = rs_store_read_begin(st, &r))) {
        fprintf(stderr, "rs-store-dump: %s: %s\n", argv[1], rs_strerror(rc));
        return 1;
    }
    if ((rc = rs_store_job_get(r, argv[2], &job)) != 0) {
        fprintf(stderr, "rs-store-dump: job %s: %s\n", argv[2], rs_strerror(rc));
        return 1;
    }
    if (argc == 4) {
        rc = rs_store_collectives_scan(r, argv[2], print_collective, NULL);
        rs_store_read_end(r);
        rs_store_close(st);
        return rc ? 1 : 0;
    }
    memset(&inst, 0, sizeof inst);
    inst.world = job.n_ranks;
    rs_instances_scan(r, argv[2], on_instance, &inst);
    printf("{\"job\":\"%s\",\"ranks_seen\":%u,\"world_size\":%u,\"ranks\":[", job.name, job.n_ranks,
           job.world_size);
    struct dump d = {r, argv[2], 1};
    rs_store_ranks_scan(r, argv[2], on_rank, &d);
    printf("],\"collective_instances\":%llu,\"complete_instances\":%llu,"
           "\"partial_instances\":%llu,\"mean_skew_ms\":%.4f,\"last_arriver_counts\":[",
           (unsigned long long)inst.total, (unsigned long long)inst.complete,
           (unsigned long long)inst.partial,
           inst.complete ? inst.skew_ns / (double)inst.complete / 1e6 : 0.0);
    for (uint32_t i = 0; i < job.n_ranks && i < 64; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)inst.last_by_rank[i]);
    printf("]}\n");
    rs_store_read_end(r);
    rs_store_close(st);
    return 0;
}
