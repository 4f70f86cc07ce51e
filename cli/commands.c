/* `rankscope jobs` and `rankscope ranks JOB` (see commands.h). */
#include "cli/commands.h"

#include "cli/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int
render_jobs(const char *unused, json_t *doc)
{
    json_t *job;
    size_t i;

    json_t *jobs = json_object_get(doc, "jobs");
    if (json_array_size(jobs) == 0)
        printf("no jobs yet (collectors send data through rankscope-agent)\n");
    else
        printf("%-32s %6s %6s %-20s %-20s %10s\n", "JOB", "RANKS", "WORLD", "FIRST SEEN",
               "LAST SEEN", "SPAN (s)");
    json_array_foreach(jobs, i, job)
    {
        char first[32], last[32];
        rs__cli_format_time(rs__cli_int(job, "first_ns"), first, sizeof first);
        rs__cli_format_time(rs__cli_int(job, "last_ns"), last, sizeof last);
        printf("%-32s %6lld %6lld %-20s %-20s %10.1f\n",
               json_string_value(json_object_get(job, "job")),
               (long long)rs__cli_int(job, "ranks_seen"), (long long)rs__cli_int(job, "world_size"),
               first, last, rs__cli_real(job, "span_s"));
    }
    return 0;
}

int
rs_cli_jobs(const struct rs_cli_options *o, int argc, char **argv)
{
    if (argc != 0) {
        fprintf(stderr, "rankscope: 'jobs' takes no arguments\n");
        return 2;
    }
    return rs__cli_show(o, "GET", "", "/v1/jobs", render_jobs, NULL);
}

static int
render_deleted(const char *job, json_t *doc)
{
    printf("deleted job %s (%lld entries)\n", job, (long long)rs__cli_int(doc, "entries_deleted"));
    return 0;
}

int
rs_cli_delete(const struct rs_cli_options *o, int argc, char **argv)
{
    return rs__cli_show_job(o, argc, argv, "rankscope delete JOB", "DELETE", "", false,
                            render_deleted);
}

int
rs__cli_render_ranks(const char *job, json_t *doc)
{
    json_t *rank;
    size_t i;

    json_t *info = json_object_get(doc, "job");
    printf("job %s: %lld of %lld ranks seen, %.1f s of data\n\n", job,
           (long long)rs__cli_int(info, "ranks_seen"), (long long)rs__cli_int(info, "world_size"),
           rs__cli_real(info, "span_s"));
    printf("%5s %-16s %-42s %6s %9s %10s %10s %8s %8s\n", "RANK", "HOST", "GPU", "STEPS", "STEP ms",
           "KERNEL ms", "NCCL ms", "DROPPED", "LOST");
    json_array_foreach(json_object_get(doc, "ranks"), i, rank)
    {
        printf("%5lld %-16.16s %-42.42s %6lld %9.2f %10.2f %10.2f %8lld %8lld\n",
               (long long)rs__cli_int(rank, "rank"),
               json_string_value(json_object_get(rank, "host")),
               json_string_value(json_object_get(rank, "gpu_uuid")),
               (long long)rs__cli_int(rank, "steps"), rs__cli_real(rank, "step_time_ms"),
               rs__cli_real(rank, "kernel_ms_per_step"), rs__cli_real(rank, "nccl_ms_per_step"),
               (long long)rs__cli_int(rank, "dropped_records"),
               (long long)rs__cli_int(rank, "records_lost"));
    }
    printf(
        "\nKERNEL ms and NCCL ms are per step; a rank with less NCCL time than its peers arrives "
        "last at collectives.\nDROPPED: records the collector dropped itself; LOST: records it "
        "sent that never reached the server (an agent killed with them).\n");
    return 0;
}

int
rs_cli_ranks(const struct rs_cli_options *o, int argc, char **argv)
{
    return rs__cli_show_job(o, argc, argv, "rankscope ranks JOB", "GET", "/ranks", false,
                            rs__cli_render_ranks);
}

static int
by_last_frac(const void *a, const void *b)
{
    double x = json_number_value(json_object_get(*(json_t *const *)a, "last_frac"));
    double y = json_number_value(json_object_get(*(json_t *const *)b, "last_frac"));
    return x < y ? 1 : x > y ? -1 : 0;
}

int
rs__cli_render_skew(const char *job, json_t *doc)
{
    json_t *ranks, *top;
    json_t **sorted;
    size_t n;

    ranks = json_object_get(doc, "ranks");
    n = json_array_size(ranks);
    json_t *window = json_object_get(doc, "window");
    json_int_t t0 = rs__cli_int(window, "since_ns"), t1 = rs__cli_int(window, "until_ns");
    char from[32];
    rs__cli_format_time(t0, from, sizeof from);
    printf("job %s: %lld NCCL collective instances matched across ranks (%lld seen by one rank "
           "only, %lld ties)\n",
           job, (long long)rs__cli_int(doc, "instances"),
           (long long)rs__cli_int(doc, "unmatched_instances"), (long long)rs__cli_int(doc, "ties"));
    if (t1 > t0)
        printf("window: %s, %.2f s from %s; every figure below is over these instances (the "
               "straggler verdict judges only the newest steps)\n",
               json_is_true(json_object_get(window, "whole_job")) ? "the whole job"
                                                                  : "the requested range",
               (double)(t1 - t0) / 1e9, from);
    if (n == 0) {
        printf("no collectives matched yet\n");
        return 0;
    }
    json_t *skew = json_object_get(doc, "skew_ms"),
           *spread = json_object_get(doc, "arrival_spread_ms");
    printf("wait skew per instance: p50 %.3f ms, p95 %.3f ms, max %.3f ms (clock-free)\n",
           rs__cli_real(skew, "p50"), rs__cli_real(skew, "p95"), rs__cli_real(skew, "max"));
    printf(
        "arrival spread:         p50 %.3f ms, p95 %.3f ms, max %.3f ms (needs aligned clocks)\n\n",
        rs__cli_real(spread, "p50"), rs__cli_real(spread, "p95"), rs__cli_real(spread, "max"));
    if (!(sorted = calloc(n, sizeof *sorted))) {
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_array_get(ranks, i);
    qsort(sorted, n, sizeof *sorted, by_last_frac);
    printf("%5s %10s %12s %10s %7s\n", "RANK", "INSTANCES", "WAITED ms", "LAST", "LAST %");
    for (size_t i = 0; i < n; i++)
        printf("%5lld %10lld %12.1f %10lld %6.1f%%\n", (long long)rs__cli_int(sorted[i], "rank"),
               (long long)rs__cli_int(sorted[i], "instances"), rs__cli_real(sorted[i], "wait_ms"),
               (long long)rs__cli_int(sorted[i], "last_arrivals"),
               100.0 * rs__cli_real(sorted[i], "last_frac"));
    top = sorted[0];
    if (rs__cli_real(top, "last_frac") >= 0.5)
        printf(
            "\nrank %lld arrives last at %.0f%% of its %lld collective instances in this window: "
            "the other ranks wait for it in NCCL.\n",
            (long long)rs__cli_int(top, "rank"), 100.0 * rs__cli_real(top, "last_frac"),
            (long long)rs__cli_int(top, "instances"));
    else
        printf("\nno rank arrives last at most collectives.\n");
    free(sorted);
    return 0;
}

int
rs_cli_skew(const struct rs_cli_options *o, int argc, char **argv)
{
    return rs__cli_show_job(o, argc, argv, "rankscope skew JOB", "GET", "/skew", false,
                            rs__cli_render_skew);
}

int
rs__cli_render_steps(const char *job, json_t *doc)
{
    json_t *rank;
    size_t i;

    const char *src = json_string_value(json_object_get(doc, "steps_source"));
    const char *from = !src                           ? "?"
                       : strcmp(src, "inferred") == 0 ? "the NCCL pattern (no step markers)"
                       : strcmp(src, "kernel_period") == 0
                           ? "the kernel-name period (no step markers, no NCCL pattern)"
                       : strcmp(src, "mixed") == 0 ? "step markers, the NCCL pattern or the "
                                                     "kernel-name period"
                                                      : "step markers";
    printf("job %s: medians over each rank's last %lld steps (ms; STEPS: how many it has), steps "
           "from %s\n\n",
           job, (long long)rs__cli_int(doc, "last_steps"), from);
    printf("%5s %6s %9s %9s %9s %9s %9s %9s\n", "RANK", "STEPS", "STEP", "COMPUTE", "NCCL",
           "EXPOSED", "IDLE", "HOST GAP");
    json_array_foreach(json_object_get(doc, "ranks"), i, rank)
    {
        json_t *m = json_object_get(rank, "median");
        printf("%5lld %6zu %9.2f %9.2f %9.2f %9.2f %9.2f %9.3f\n",
               (long long)rs__cli_int(rank, "rank"),
               json_array_size(json_object_get(rank, "steps")), rs__cli_real(m, "step_ms"),
               rs__cli_real(m, "compute_ms"), rs__cli_real(m, "comm_ms"),
               rs__cli_real(m, "exposed_comm_ms"), rs__cli_real(m, "idle_ms"),
               rs__cli_real(m, "host_gap_ms"));
    }
    printf(
        "\nEXPOSED: NCCL time not hidden under compute; HOST GAP: step start to first kernel.\n");
    return 0;
}

int
rs_cli_steps(const struct rs_cli_options *o, int argc, char **argv)
{
    return rs__cli_show_job(o, argc, argv, "rankscope steps JOB", "GET", "/steps?last=30", false,
                            rs__cli_render_steps);
}

/* "steps A..B (1.02 s from T0)" of a window object {first_step, last_step, since_ns, until_ns}. */
static void
format_window(json_t *w, char *out, size_t len)
{
    char from[32];
    json_int_t t0 = rs__cli_int(w, "since_ns"), t1 = rs__cli_int(w, "until_ns");

    rs__cli_format_time(t0, from, sizeof from);
    snprintf(out, len, "steps %lld..%lld (%.2f s from %s)", (long long)rs__cli_int(w, "first_step"),
             (long long)rs__cli_int(w, "last_step"), t1 > t0 ? (double)(t1 - t0) / 1e9 : 0.0, from);
}

int
rs__cli_render_stragglers(const char *job, json_t *doc)
{
    json_t *v, *window = json_object_get(doc, "window");
    char newest[128] = "";
    size_t i;

    printf("job %s: %s\n", job, json_string_value(json_object_get(doc, "summary")));
    if (json_is_object(window)) {
        format_window(window, newest, sizeof newest);
        printf("newest window: %s, %lld steps; slowdown and arrivals below are over it\n", newest,
               (long long)rs__cli_int(doc, "window_steps"));
    }
    json_array_foreach(json_object_get(doc, "stragglers"), i, v)
    {
        json_t *e, *onset = json_object_get(v, "onset");
        char impact[128];
        size_t k;
        const char *host = json_string_value(json_object_get(v, "host"));
        const char *gpu = json_string_value(json_object_get(v, "gpu_uuid"));
        const char *kind = json_is_real(json_object_get(v, "duty")) ? ": intermittent" : "";
        if (host && *host)
            printf("\nrank %lld on %s (%s)%s\n", (long long)rs__cli_int(v, "rank"), host,
                   gpu && *gpu ? gpu : "GPU unknown", kind);
        else /* imported traces say neither */
            printf("\nrank %lld%s\n", (long long)rs__cli_int(v, "rank"), kind);
        if (json_is_real(json_object_get(v, "duty")))
            printf("  intermittent: slow on %.0f%% of the steps examined, %.1f%% slower on those "
                   "(median); impact below is their time lost\n",
                   100 * rs__cli_real(v, "duty"), 100 * (rs__cli_real(v, "tail_slowdown") - 1));
        printf("  %.1f%% slower than its peers; arrives last at %.0f%% of its %lld collective "
               "instances, %.0f%% of the others' waiting (newest window)\n",
               100 * (rs__cli_real(v, "slowdown") - 1), 100 * rs__cli_real(v, "last_frac"),
               (long long)rs__cli_int(v, "instances"), 100 * rs__cli_real(v, "wait_share"));
        if (json_is_object(onset))
            printf("  slow since step %s%lld: the split of its steps %lld..%lld into not slow / "
                   "slow (above its peers' median at each step by min(%.0f%%, half its slowdown)) "
                   "with the fewest steps on the wrong side, %lld of %lld\n",
                   json_is_true(json_object_get(onset, "before_search")) ? "<= " : "",
                   (long long)rs__cli_int(onset, "step"),
                   (long long)rs__cli_int(onset, "searched_from_step"),
                   (long long)rs__cli_int(onset, "searched_to_step"),
                   100 * rs__cli_real(doc, "threshold"),
                   (long long)rs__cli_int(onset, "steps_disagreeing"),
                   (long long)rs__cli_int(onset, "steps_searched"));
        format_window(json_object_get(v, "impact_window"), impact, sizeof impact);
        printf("  impact: %.2f s of job time over %s, %.1f%% of that time; since step %lld; the "
               "rule holds over %lld windows\n",
               rs__cli_real(v, "impact_s"), impact, rs__cli_real(v, "impact_pct"),
               (long long)rs__cli_int(v, "since_step"), (long long)rs__cli_int(v, "windows"));
        printf("  cause: %s", json_string_value(json_object_get(v, "cause")));
        if (json_is_string(json_object_get(v, "evidence_source"))) /* "from capture <id>" */
            printf(" (%s; without it: %s)",
                   json_string_value(json_object_get(v, "evidence_source")),
                   json_string_value(json_object_get(v, "cause_without_capture")));
        printf("\n");
        json_array_foreach(json_object_get(v, "evidence"), k, e)
        {
            if (json_object_get(e, "kernel") &&
                rs__cli_rounds_to_zero(rs__cli_real(e, "extra_ms_per_step"), 2))
                continue; /* nothing at the printed precision */
            if (json_object_get(e, "kernel"))
                printf(
                    "    %.60s: %.2fx peers, %s ms per step\n",
                    json_string_value(json_object_get(e, "kernel")),
                    rs__cli_real(e, "ratio_to_peers"),
                    rs__cli_signed(rs__cli_real(e, "extra_ms_per_step"), 2, impact, sizeof impact));
            else {
                printf("    host gap (GPU waiting for its host) %.2f ms per step (peers %.2f ms)\n",
                       rs__cli_real(e, "host_gap_ms"), rs__cli_real(e, "peers_host_gap_ms"));
                if (json_object_get(e, "launch_wait_ms"))
                    printf("    launch waits %.2f ms per step (peers %.2f ms)\n",
                           rs__cli_real(e, "launch_wait_ms"),
                           rs__cli_real(e, "peers_launch_wait_ms"));
                if (json_object_get(e, "sync_wait_ms"))
                    printf("    host synchronizations %.2f ms per step (peers %.2f ms)\n",
                           rs__cli_real(e, "sync_wait_ms"), rs__cli_real(e, "peers_sync_wait_ms"));
            }
        }
        rs__cli_render_hardware(v);
        printf("  confidence %.2f; recommended action: %s\n", rs__cli_real(v, "confidence"),
               json_string_value(json_object_get(v, "action")));
    }
    json_array_foreach(json_object_get(doc, "suspects"), i, v)
    {
        if (i == 0)
            printf("\nsuspects (no verdict; informational):\n");
        printf(
            "  rank %lld: %.1f%% slower than its peers, last at %.0f%% of collectives, %.0f%% of "
            "the others' waiting: %s\n",
            (long long)rs__cli_int(v, "rank"), 100 * (rs__cli_real(v, "slowdown") - 1),
            100 * rs__cli_real(v, "last_frac"), 100 * rs__cli_real(v, "wait_share"),
            json_string_value(json_object_get(v, "reason")));
    }
    return 0;
}

/* "not enough data" is an answer, but not a verdict: exit 4 (commands.h) */
static int
stragglers_exit(json_t *doc)
{
    return json_is_false(json_object_get(doc, "enough_data")) ? RS_CLI_EXIT_NOT_ENOUGH_DATA : 0;
}

int
rs_cli_stragglers(const struct rs_cli_options *o, int argc, char **argv)
{
    char path[512];
    int rc;

    if ((rc = rs__cli_job_arg("rankscope stragglers JOB", argc, argv)) != 0)
        return rc;
    snprintf(path, sizeof path, "/v1/jobs/%s/stragglers", argv[0]);
    if (o->until_step >= 0)
        snprintf(path + strlen(path), sizeof path - strlen(path), "?until_step=%lld",
                 (long long)o->until_step);
    if (o->window > 0)
        snprintf(path + strlen(path), sizeof path - strlen(path), "%cwindow=%lld",
                 strchr(path, '?') ? '&' : '?', (long long)o->window);
    return rs__cli_show(o, "GET", argv[0], path, rs__cli_render_stragglers, stragglers_exit);
}
