/* Test tool: summarises what a store holds for one job, as JSON on stdout — per rank kernel,
 * collective and step counts, and how many collective instances (comm, op, seq) were seen on
 * every rank. Used by tests/gpu/ to check cross-rank matching on real GPUs.
 * usage: rs-store-dump DATA_DIR JOB */
#include "common/error.h"
#include "storage/store.h"

#include <stdio.h>
#include <string.h>

struct instances {
    uint64_t comm, seq;
    uint32_t op, ranks_here;
    uint32_t world;
    uint64_t total, complete, partial;
    uint64_t min_dur_sum, max_dur_sum; /* sums over complete instances (wait skew, ns) */
    uint64_t cur_min, cur_max;
    uint64_t last_by_rank[64]; /* instances in which rank r had the shortest kernel */
    int cur_last;
};

static void
close_instance(struct instances *s)
{
    if (s->ranks_here == 0)
        return;
    s->total++;
    if (s->ranks_here == s->world) {
        s->complete++;
        s->min_dur_sum += s->cur_min;
        s->max_dur_sum += s->cur_max;
        if (s->cur_last >= 0 && s->cur_last < 64)
            s->last_by_rank[s->cur_last]++;
    } else
        s->partial++;
    s->ranks_here = 0;
}

static int
on_coll(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct instances *s = arg;
    uint64_t d = c->end_ns - c->start_ns;

    if (s->ranks_here == 0 || c->comm_hash != s->comm || c->op != s->op || c->seq != s->seq) {
        close_instance(s);
        s->comm = c->comm_hash;
        s->op = c->op;
        s->seq = c->seq;
        s->cur_min = UINT64_MAX;
        s->cur_max = 0;
    }
    s->ranks_here++;
    if (d < s->cur_min) {
        s->cur_min = d;
        s->cur_last = (int)rank; /* the last to arrive waits least */
    }
    if (d > s->cur_max)
        s->cur_max = d;
    return 0;
}

static int
on_rank(void *arg, const struct rs_rank_info *r)
{
    int *first = arg;
    printf("%s{\"rank\":%u,\"host\":\"%s\",\"gpu_uuid\":\"%s\",\"kernels\":%llu,"
           "\"kernel_ms\":%.3f,\"collectives\":%llu,\"nccl_ms\":%.3f,\"memcpys\":%llu,"
           "\"steps\":%llu,\"dropped\":%llu}",
           *first ? "" : ",", r->rank, r->host, r->gpu_uuid, (unsigned long long)r->n_kernels,
           (double)r->kernel_ns / 1e6, (unsigned long long)r->n_collectives,
           (double)r->collective_ns / 1e6, (unsigned long long)r->n_memcpys,
           (unsigned long long)r->n_steps, (unsigned long long)r->dropped_records);
    *first = 0;
    return 0;
}

int
main(int argc, char **argv)
{
    struct rs_store_options opts = {0};
    struct rs_job_info job;
    struct instances inst;
    rs_store *st;
    rs_store_read *r;
    int rc, first = 1;

    if (argc != 3) {
        fprintf(stderr, "usage: rs-store-dump DATA_DIR JOB\n");
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
    memset(&inst, 0, sizeof inst);
    inst.world = job.n_ranks;
    rs_store_collectives_scan(r, argv[2], on_coll, &inst);
    close_instance(&inst);
    printf("{\"job\":\"%s\",\"ranks_seen\":%u,\"world_size\":%u,\"ranks\":[", job.name, job.n_ranks,
           job.world_size);
    rs_store_ranks_scan(r, argv[2], on_rank, &first);
    printf("],\"collective_instances\":%llu,\"complete_instances\":%llu,"
           "\"partial_instances\":%llu,\"mean_skew_ms\":%.4f,\"last_arriver_counts\":[",
           (unsigned long long)inst.total, (unsigned long long)inst.complete,
           (unsigned long long)inst.partial,
           inst.complete ? (double)(inst.max_dur_sum - inst.min_dur_sum) / inst.complete / 1e6
                         : 0.0);
    for (uint32_t i = 0; i < job.n_ranks && i < 64; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)inst.last_by_rank[i]);
    printf("]}\n");
    rs_store_read_end(r);
    rs_store_close(st);
    return 0;
}
