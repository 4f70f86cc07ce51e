/* `rankscope watch JOB` (see commands.h): a live view for an operator's terminal — the straggler
 * verdict with its history, NCCL wait skew and the top kernels, refreshed every --interval-s until
 * Ctrl-C (or --iterations N times). */
#include "cli/commands.h"

#include "cli/output.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void
on_interrupt(int sig)
{
    (void)sig;
    stop = 1;
}

static void
show_stragglers(const struct rs_cli_options *o, const char *job)
{
    char path[512], when[32];
    json_t *doc, *v;
    size_t i;

    snprintf(path, sizeof path, "/v1/jobs/%s/stragglers", job);
    if (rs__cli_request(o, "GET", path, &doc) != 0)
        return;
    printf("stragglers (newest %lld steps): %s\n", (long long)rs__cli_int(doc, "window_steps"),
           json_string_value(json_object_get(doc, "summary")));
    json_array_foreach(json_object_get(doc, "stragglers"), i, v)
    {
        rs__cli_format_time(rs__cli_int(v, "detected_ns"), when, sizeof when);
        printf("  rank %lld on %s: %s%+.1f%%, slow since step %lld, cause %s, impact %.1f%% of "
               "step time, action %s, raised %s\n",
               (long long)rs__cli_int(v, "rank"), json_string_value(json_object_get(v, "host")),
               json_is_real(json_object_get(v, "duty")) ? "intermittent, " : "",
               100 * (rs__cli_real(v, "slowdown") - 1), (long long)rs__cli_int(v, "since_step"),
               json_string_value(json_object_get(v, "cause")), rs__cli_real(v, "impact_pct"),
               json_string_value(json_object_get(v, "action")), when);
    }
    json_array_foreach(json_object_get(doc, "cleared"), i, v)
    {
        rs__cli_format_time(rs__cli_int(v, "cleared_ns"), when, sizeof when);
        printf("  rank %lld: cleared %s\n", (long long)rs__cli_int(v, "rank"), when);
    }
    json_decref(doc);
}

static void
show_skew(const struct rs_cli_options *o, const char *job)
{
    char path[512];
    json_t *doc, *r, *last = NULL;
    size_t i;

    snprintf(path, sizeof path, "/v1/jobs/%s/skew", job);
    if (rs__cli_request(o, "GET", path, &doc) != 0)
        return;
    json_t *skew = json_object_get(doc, "skew_ms");
    json_array_foreach(json_object_get(doc, "ranks"), i, r)
    {
        if (!last || rs__cli_real(r, "last_frac") > rs__cli_real(last, "last_frac"))
            last = r;
    }
    printf("NCCL wait skew (whole job): %lld instances, p50 %.3f ms, p95 %.3f ms, max %.3f ms",
           (long long)rs__cli_int(doc, "instances"), rs__cli_real(skew, "p50"),
           rs__cli_real(skew, "p95"), rs__cli_real(skew, "max"));
    if (last)
        printf("; last to arrive most often: rank %lld (%.0f%%)",
               (long long)rs__cli_int(last, "rank"), 100 * rs__cli_real(last, "last_frac"));
    printf("\n");
    json_decref(doc);
}

static void
show_top(const struct rs_cli_options *o, const char *job)
{
    char path[512];
    json_t *doc, *k;
    size_t i;

    snprintf(path, sizeof path, "/v1/jobs/%s/top?limit=5", job);
    if (rs__cli_request(o, "GET", path, &doc) != 0)
        return;
    json_t *busy = json_object_get(doc, "gpu_busy_ms");
    const char *unit = json_string_value(json_object_get(json_object_get(doc, "scope"), "unit"));
    printf("top kernels, GPU ms %s of the mean rank (summed %.2f",
           unit && strcmp(unit, "per_second") == 0 ? "per second" : "per step",
           rs__cli_real(doc, "total_ms"));
    if (json_is_number(busy))
        printf(", busy %.2f", json_number_value(busy));
    printf("):\n");
    json_array_foreach(json_object_get(doc, "kernels"), i, k)
        printf("  %8.3f %5.1f%%  %.90s\n", rs__cli_real(k, "ms"), rs__cli_real(k, "share_pct"),
               json_string_value(json_object_get(k, "name")));
    json_decref(doc);
}

int
rs_cli_watch(const struct rs_cli_options *o, int argc, char **argv)
{
    char now[32];
    int rc;
    bool tty = isatty(STDOUT_FILENO);

    if ((rc = rs__cli_job_arg("rankscope watch JOB [--interval-s S] [--iterations N]", argc,
                              argv)) != 0)
        return rc;
    if (o->json) {
        fprintf(stderr, "rankscope: watch is for terminals; poll the REST API for JSON "
                        "(GET /v1/jobs/JOB/stragglers?since_ns=...)\n");
        return 2;
    }
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    for (int64_t n = 0; !stop && (o->iterations <= 0 || n < o->iterations); n++) {
        json_t *doc;
        char path[512];
        snprintf(path, sizeof path, "/v1/jobs/%s/ranks", argv[0]);
        if ((rc = rs__cli_request(o, "GET", path, &doc)) != 0)
            return rc; /* no such job, or no server: nothing to watch */
        json_t *job = json_object_get(doc, "job");
        if (tty)
            printf("\033[H\033[2J");
        rs__cli_format_time((json_int_t)time(NULL) * 1000000000, now, sizeof now);
        printf("rankscope watch %s — %s — %lld of %lld ranks, %.1f s of data (every %.1f s, "
               "Ctrl-C to stop)\n\n",
               argv[0], now, (long long)rs__cli_int(job, "ranks_seen"),
               (long long)rs__cli_int(job, "world_size"), rs__cli_real(job, "span_s"),
               o->interval_s);
        json_decref(doc);
        show_stragglers(o, argv[0]);
        show_skew(o, argv[0]);
        show_top(o, argv[0]);
        fflush(stdout);
        if (o->iterations > 0 && n + 1 >= o->iterations)
            break;
        struct timespec ts = {(time_t)o->interval_s,
                              (long)((o->interval_s - (double)(time_t)o->interval_s) * 1e9)};
        nanosleep(&ts, NULL); /* Ctrl-C interrupts it */
    }
    return 0;
}
