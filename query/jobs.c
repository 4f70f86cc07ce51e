/* JSON job and rank summaries (see jobs.h). */
#include "query/jobs.h"

#include "common/error.h"

#include <errno.h>

static json_t *
job_json(const struct rs_job_info *j)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:f}", "job", j->name, "received_ns",
                     (json_int_t)j->received_ns, "world_size", (json_int_t)j->world_size,
                     "ranks_seen", (json_int_t)j->n_ranks, "first_ns", (json_int_t)j->first_ns,
                     "last_ns", (json_int_t)j->last_ns, "span_s",
                     j->last_ns > j->first_ns ? (double)(j->last_ns - j->first_ns) / 1e9 : 0.0);
}

struct jobs_ctx {
    json_t *list;
    size_t limit;
};

static int
add_job(void *arg, const struct rs_job_info *job)
{
    struct jobs_ctx *ctx = arg;
    json_t *j = job_json(job);

    if (!j || json_array_append_new(ctx->list, j) != 0)
        return -ENOMEM;
    return ctx->limit && json_array_size(ctx->list) >= ctx->limit ? 1 : 0;
}

int
rs_query_jobs(rs_store_read *r, size_t limit, json_t **out)
{
    struct jobs_ctx ctx = {json_array(), limit};
    int rc;

    if (!ctx.list)
        return -ENOMEM;
    rc = rs_store_jobs_scan(r, add_job, &ctx);
    if (rc < 0) {
        json_decref(ctx.list);
        return rc;
    }
    *out = json_pack("{s:o}", "jobs", ctx.list);
    return *out ? 0 : -ENOMEM;
}

static double
per_step_ms(uint64_t ns, uint64_t steps)
{
    return steps ? (double)ns / (double)steps / 1e6 : 0.0;
}

/* {"flags": ["stepped_aside", ...], "status": "...", "clock_offset_ns": N} */
static json_t *
collector_json(const struct rs_rank_info *r)
{
    static const char *const names[] = {"stepped_aside", "version_mismatch", "clock_replaced",
                                        "cupti_error",   "in_flight",        "kernels_sampled"};
    json_t *flags = json_array();

    for (unsigned i = 0; flags && i < sizeof names / sizeof names[0]; i++)
        if (r->collector_flags & (1u << i))
            json_array_append_new(flags, json_string(names[i]));
    return json_pack("{s:o, s:s, s:I}", "flags", flags ? flags : json_array(), "status",
                     r->collector_status, "clock_offset_ns", (json_int_t)r->clock_offset_ns);
}

static int
add_rank(void *arg, const struct rs_rank_info *r)
{
    json_t *list = arg;
    json_t *j = json_pack(
        "{s:I, s:I, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, "
        "s:I, s:I}",
        "rank", (json_int_t)r->rank, "local_rank", (json_int_t)r->local_rank, "world_size",
        (json_int_t)r->world_size, "host", r->host, "gpu_uuid", r->gpu_uuid, "pid",
        (json_int_t)r->pid, "steps", (json_int_t)r->n_steps, "kernels", (json_int_t)r->n_kernels,
        "collectives", (json_int_t)r->n_collectives, "step_time_ms",
        per_step_ms(r->step_ns, r->n_steps), "kernel_ms_per_step",
        per_step_ms(r->kernel_ns, r->n_steps), "nccl_ms_per_step",
        per_step_ms(r->collective_ns, r->n_steps), "memcpy_ms_per_step",
        per_step_ms(r->memcpy_ns, r->n_steps), "memcpys", (json_int_t)r->n_memcpys, "stall_records",
        (json_int_t)r->n_stalls, "dropped_records", (json_int_t)r->dropped_records, "batches",
        (json_int_t)r->batches, "first_ns", (json_int_t)r->first_ns, "last_ns",
        (json_int_t)r->last_ns);

    /* loss accounting (storage/store.h): frames collectors sent that never arrived */
    if (!j || json_object_set_new(j, "frames", json_integer((json_int_t)r->frames)) != 0 ||
        json_object_set_new(j, "frames_lost", json_integer((json_int_t)r->frames_lost)) != 0 ||
        json_object_set_new(j, "records_lost", json_integer((json_int_t)r->records_lost)) != 0 ||
        json_object_set_new(j, "collector", collector_json(r)) != 0 ||
        json_array_append_new(list, j) != 0)
        return -ENOMEM;
    return 0;
}

int
rs_query_ranks(rs_store_read *r, const char *job, json_t **out)
{
    struct rs_job_info info;
    json_t *list;
    int rc = rs_store_job_get(r, job, &info);

    if (rc != 0)
        return rc;
    if (!(list = json_array()))
        return -ENOMEM;
    if ((rc = rs_store_ranks_scan(r, job, add_rank, list)) != 0) {
        json_decref(list);
        return rc;
    }
    *out = json_pack("{s:o, s:o}", "job", job_json(&info), "ranks", list);
    return *out ? 0 : -ENOMEM;
}
