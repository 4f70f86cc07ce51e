/* Trace-file arguments of `analyze` and `import` (see trace_args.h). */
#include "cli/trace_args.h"

#include "cli/output.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/hash.h"
#include "import/trace_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The files' longest common name prefix, cut before a trailing "rank"/"_rank" etc.:
 * "fixture_slow_rank0.json.gz" + "fixture_slow_rank1.json.gz" -> "fixture_slow". */
static void
job_from_names(char *const *paths, size_t n, char *out, size_t len)
{
    char common[256];
    const char *first = strrchr(paths[0], '/') ? strrchr(paths[0], '/') + 1 : paths[0];
    size_t k;

    snprintf(common, sizeof common, "%s", first);
    for (size_t i = 0; i < n; i++) {
        const char *b = strrchr(paths[i], '/') ? strrchr(paths[i], '/') + 1 : paths[i];
        for (k = 0; common[k] && common[k] == b[k]; k++)
            ;
        common[k] = '\0';
    }
    char *dot = strchr(common, '.');
    if (dot)
        *dot = '\0';
    k = strlen(common);
    if (n > 1)
        while (k > 0 && (common[k - 1] >= '0' && common[k - 1] <= '9'))
            common[--k] = '\0';
    if (k >= 4 && strncasecmp(common + k - 4, "rank", 4) == 0)
        common[k -= 4] = '\0';
    while (k > 0 && (common[k - 1] == '_' || common[k - 1] == '-' || common[k - 1] == '.'))
        common[--k] = '\0';
    rs_wire_job_sanitize(k ? common : "imported", out, len);
}

static uint64_t
set_identity(const struct rs_trace_set *set)
{
    char key[4096 + 128];
    uint64_t h = rs_hash_fnv1a64(set->job, strlen(set->job));

    for (size_t i = 0; i < set->n_paths; i++) {
        struct stat st = {0};
        char *real = realpath(set->paths[i], NULL); /* the same file by any path */
        stat(set->paths[i], &st);
        int n = snprintf(key, sizeof key, "%016llx|%s|%lld|%lld.%09ld", (unsigned long long)h,
                         real ? real : set->paths[i], (long long)st.st_size,
                         (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
        free(real);
        h = rs_hash_fnv1a64(key, n < 0 ? 0 : (size_t)n < sizeof key ? (size_t)n : sizeof key - 1);
    }
    return h ? h : 1;
}

int
rs__cli_trace_set_open(const struct rs_cli_options *o, const char *usage, int argc, char **argv,
                       struct rs_trace_set *set)
{
    char err[512];

    memset(set, 0, sizeof *set);
    set->rank = o->rank;
    if (argc < 1) {
        fprintf(stderr, "usage: %s\n", usage);
        return 2;
    }
    if (o->job && *o->job && !rs_wire_job_valid(o->job)) {
        fprintf(stderr,
                "rankscope: '%s' is not a valid job name (1-%u of A-Z a-z 0-9 . _ : @ + = -)\n",
                o->job, RS_WIRE_MAX_JOB_LEN);
        return 2;
    }
    if (rs_trace_expand(argv, (size_t)argc, &set->paths, &set->n_paths, err, sizeof err) != 0) {
        fprintf(stderr, "rankscope: %s\n", rs__cli_escaped(err));
        return 2;
    }
    if (set->rank >= 0 && set->n_paths != 1) {
        fprintf(stderr, "rankscope: --rank names the rank of one trace file; %zu files given\n",
                set->n_paths);
        rs__cli_trace_set_close(set);
        return 2;
    }
    if (o->job && *o->job)
        snprintf(set->job, sizeof set->job, "%s", o->job);
    else
        job_from_names(set->paths, set->n_paths, set->job, sizeof set->job);
    set->agent_id = set_identity(set);
    return 0;
}

void
rs__cli_trace_set_close(struct rs_trace_set *set)
{
    rs_trace_paths_free(set->paths, set->n_paths);
    set->paths = NULL;
    set->n_paths = 0;
}

struct progress {
    const char *path;
    uint64_t t0, last;
    bool tty, shown;
};

/* rs_trace_progress_fn: on a terminal a line redrawn twice a second, elsewhere one every 10 s;
 * nothing for files read within a second. */
static void
show_progress(void *arg, uint64_t done, uint64_t total)
{
    struct progress *p = arg;
    uint64_t now = rs_clock_mono_ns();
    uint64_t every = p->tty ? 500000000ull : 10000000000ull;

    if (now - p->t0 < 1000000000ull || now - p->last < every)
        return;
    p->last = now;
    p->shown = true;
    double s = (double)(now - p->t0) / 1e9, mb = (double)done / 1e6;
    fprintf(stderr, "%simporting %s: %.0f%% (%.0f of %.0f MB, %.0f MB/s)%s", p->tty ? "\r" : "",
            rs__cli_escaped(p->path), total ? 100.0 * (double)done / (double)total : 0.0, mb,
            (double)total / 1e6, mb / s, p->tty ? "" : "\n");
}

static json_t *
file_json(const char *path, const struct rs_kineto_stats *st, uint64_t bytes, double seconds)
{
    return json_pack(
        "{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b, s:I, "
        "s:f}",
        "path", path, "rank", (json_int_t)st->rank, "world_size", (json_int_t)st->world_size,
        "events", (json_int_t)st->events, "kernels", (json_int_t)st->kernels, "collectives",
        (json_int_t)st->collectives, "memcpys", (json_int_t)st->memcpys, "syncs",
        (json_int_t)st->syncs, "steps", (json_int_t)st->steps, "ignored_events",
        (json_int_t)st->ignored, "rejected_events", (json_int_t)st->rejected, "nccl_out_of_order",
        (json_int_t)st->nccl_out_of_order, "names_truncated", (json_int_t)st->names_truncated,
        "relative_time", st->relative_time, "rank_assumed", st->rank_assumed, "bytes",
        (json_int_t)bytes, "seconds", seconds);
}

int
rs__cli_trace_set_import(const struct rs_trace_set *set, rs_kineto_sink_fn sink, void *arg,
                         json_t **files)
{
    struct rs_kineto_options ko = {set->job, set->rank, "", set->n_paths == 1};
    uint32_t *ranks = calloc(set->n_paths ? set->n_paths : 1, sizeof *ranks);
    json_t *list = json_array();
    char err[1024];
    size_t skipped = 0;
    int rc = 0;

    if (!ranks || !list) {
        fprintf(stderr, "rankscope: out of memory\n");
        rc = 1;
        goto done;
    }
    for (size_t i = 0; i < set->n_paths; i++) {
        const char *path = set->paths[i];
        struct rs_kineto_stats st;
        struct progress p = {path, rs_clock_mono_ns(), 0, isatty(2) == 1, false};
        struct stat sb = {0};
        stat(path, &sb);
        uint64_t bytes = (uint64_t)sb.st_size;
        rc = rs_trace_import_file(path, &ko, sink, arg, show_progress, &p, &st, err, sizeof err);
        if (p.shown && p.tty)
            fprintf(stderr, "\n");
        if (rc != 0 && st.not_a_trace && set->n_paths > 1) {
            fprintf(stderr, "rankscope: warning: skipped %s: %s\n", rs__cli_escaped(path),
                    rs__cli_escaped(err));
            skipped++;
            rc = 0;
            continue;
        }
        if (rc != 0) {
            fprintf(stderr, "rankscope: %s\n", rs__cli_escaped(err));
            rc = 1;
            goto done;
        }
        for (size_t k = 0; k < i; k++)
            if (ranks[k] == st.rank + 1) { /* 0: a file skipped */
                fprintf(stderr, "rankscope: %s and %s are both rank %u of job %s\n",
                        rs__cli_escaped(set->paths[k]), rs__cli_escaped(path), st.rank, set->job);
                rc = 1;
                goto done;
            }
        ranks[i] = st.rank + 1;
        if (st.rank_assumed)
            fprintf(stderr,
                    "rankscope: %s says no rank (no distributedInfo, no rank in its name): taken "
                    "as rank 0 of a one-rank job\n",
                    rs__cli_escaped(path));
        double s = (double)(rs_clock_mono_ns() - p.t0) / 1e9;
        fprintf(stderr,
                "imported %s: rank %u, %llu kernels, %llu NCCL kernels, %llu memcpy/memset, %llu "
                "host synchronizations, %llu steps (%.1f MB in %.2f s)%s\n",
                rs__cli_escaped(path), st.rank, (unsigned long long)st.kernels,
                (unsigned long long)st.collectives, (unsigned long long)st.memcpys,
                (unsigned long long)st.syncs, (unsigned long long)st.steps, (double)bytes / 1e6, s,
                st.rejected ? " — some GPU events had no usable time and were skipped" : "");
        json_array_append_new(list, file_json(path, &st, bytes, s));
    }
    if (skipped == set->n_paths) {
        fprintf(stderr, "rankscope: none of the %zu files is a trace\n", set->n_paths);
        rc = 1;
    }
done:
    free(ranks);
    if (rc == 0)
        *files = list;
    else
        json_decref(list);
    return rc;
}

struct rs_agent_batch
rs__cli_import_batch(uint64_t agent_id, uint64_t batch_seq, const struct rs_rank_batch *b)
{
    return (struct rs_agent_batch){
        .agent_id = agent_id,
        .boot_id = agent_id,
        .batch_seq = batch_seq,
        .hello = {agent_id, agent_id, "", "rankscope-import " RS_VERSION, b->clock},
        .ranks = b,
        .n_ranks = 1,
    };
}
