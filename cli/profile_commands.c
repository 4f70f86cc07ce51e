/* `rankscope top`, `stalls` and `compare` (see commands.h): where GPU time goes, why kernels stall,
 * and what changed between two jobs, ranks or windows. */
#include "cli/commands.h"

#include "cli/output.h"

#include <stdio.h>
#include <string.h>

#define NAME_WIDTH 90 /* kernel names run to hundreds of characters; tables show the start */

static const char *
str_of(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void
print_scope(const char *label, json_t *scope)
{
    json_t *rank = json_object_get(scope, "rank"), *peers = json_object_get(scope, "peers_of");
    char from[32], to[32], who[64];

    rs__cli_format_time(rs__cli_int(scope, "since_ns"), from, sizeof from);
    rs__cli_format_time(rs__cli_int(scope, "until_ns"), to, sizeof to);
    if (json_is_integer(rank))
        snprintf(who, sizeof who, "rank %lld", (long long)json_integer_value(rank));
    else if (json_is_integer(peers))
        snprintf(who, sizeof who, "the %lld peers of rank %lld",
                 (long long)rs__cli_int(scope, "ranks"), (long long)json_integer_value(peers));
    else
        snprintf(who, sizeof who, "%lld ranks", (long long)rs__cli_int(scope, "ranks"));
    json_int_t steps = rs__cli_int(scope, "rank_steps"),
               inferred = rs__cli_int(scope, "inferred_rank_steps");
    char what[160];
    if (steps == 0 && inferred > 0)
        snprintf(what, sizeof what,
                 "no step markers (%lld rank-steps inferred from NCCL, not used to divide): "
                 "per second of this span",
                 (long long)inferred);
    else if (steps == 0)
        snprintf(what, sizeof what, "no steps: per second of this span");
    else
        snprintf(what, sizeof what, "%lld rank-steps", (long long)steps);
    printf("%s%s, %s, %s .. %s, %s\n", label, str_of(scope, "job"), who, from, to, what);
}

static const char *
per_unit(json_t *doc)
{
    return strcmp(str_of(doc, "unit"), "per_second") == 0 ? "per second" : "per step";
}

int
rs__cli_render_top(const char *job, json_t *doc)
{
    json_t *k, *other;
    size_t i;

    json_t *scope = json_object_get(doc, "scope"), *busy = json_object_get(doc, "gpu_busy_ms");
    const char *of = json_is_integer(json_object_get(scope, "rank")) ? "" : " of the mean rank";
    print_scope("", scope);
    if (json_is_true(json_object_get(doc, "sampled")))
        printf("SAMPLED: kernels are traced in windows (RANKSCOPE_KERNELS=window); these figures "
               "cover the windows only\n");
    printf("GPU time %s%s: %.2f ms summed over kernels (kernels on several streams overlap)\n",
           per_unit(scope), of, rs__cli_real(doc, "total_ms"));
    if (json_is_number(busy))
        printf("GPU busy %s%s: %.2f ms (the union of kernel intervals)\n\n", per_unit(scope), of,
               json_number_value(busy));
    else
        printf("GPU busy: not known (summarized kernels have no intervals)\n\n");
    printf("%9s %6s %7s %10s %-6s %s\n", "ms", "SHARE", "CALLS", "MEAN us", "KIND", "NAME");
    json_array_foreach(json_object_get(doc, "kernels"), i, k)
    {
        printf("%9.3f %5.1f%% %7.1f %10.1f %-6s %.*s\n", rs__cli_real(k, "ms"),
               rs__cli_real(k, "share_pct"), rs__cli_real(k, "calls"), rs__cli_real(k, "mean_us"),
               str_of(k, "kind"), NAME_WIDTH, str_of(k, "name"));
    }
    other = json_object_get(doc, "other");
    if (rs__cli_int(other, "items") > 0)
        printf("%9.3f %6s %7.1f %10s %-6s (%lld more)\n", rs__cli_real(other, "ms"), "",
               rs__cli_real(other, "calls"), "", "", (long long)rs__cli_int(other, "items"));
    json_t *syncs = json_object_get(doc, "host_sync");
    if (json_array_size(syncs) > 0) {
        printf("\nhost waiting for the GPU (synchronizations) %s, not GPU time:\n",
               per_unit(scope));
        json_array_foreach(syncs, i, k)
        {
            printf("%9.3f %6s %7.1f %10s %-6s %s\n", rs__cli_real(k, "ms"), "",
                   rs__cli_real(k, "calls"), "", "sync", str_of(k, "name"));
        }
    }
    json_t *lw = json_object_get(doc, "launch_wait");
    if (json_is_object(lw)) {
        printf("\nGPU waiting for the host (launch waits: idle until the host queued work) %s:\n",
               per_unit(scope));
        printf("%9.3f %6s %7.1f %10s %-6s %s\n", rs__cli_real(lw, "ms"), "",
               rs__cli_real(lw, "calls"), "", "wait", "Launch Wait");
    }
    return 0;
}

int
rs_cli_top(const struct rs_cli_options *o, int argc, char **argv)
{
    return rs__cli_show_job(o, argc, argv, "rankscope top JOB [--rank R] [--limit N]", "GET",
                            "/top", true, rs__cli_render_top);
}

static void
print_stall_mix(json_t *mix, size_t most)
{
    json_t *m;
    size_t i;

    json_array_foreach(mix, i, m)
    {
        if (i == most)
            break;
        char pts[24];
        printf("    %-24s %6s pts  (%5.1f%% against %5.1f%%)\n", str_of(m, "reason"),
               rs__cli_signed(rs__cli_real(m, "change_pts"), 1, pts, sizeof pts),
               rs__cli_real(m, "b_pct"), rs__cli_real(m, "a_pct"));
    }
}

/* Rows of a comparison: A ms, B ms, change. */
static void
print_items(json_t *cmp)
{
    json_t *it, *other = json_object_get(cmp, "other"), *total = json_object_get(cmp, "total");
    size_t i, unchanged = 0;
    char ms[32];

    printf("%9s %9s %10s %8s %-6s %s\n", "A ms", "B ms", "CHANGE ms", "CHANGE", "KIND", "NAME");
    json_array_foreach(json_object_get(cmp, "items"), i, it)
    {
        char pct[16] = "new";
        if (json_is_number(json_object_get(it, "change_pct"))) {
            rs__cli_signed(rs__cli_real(it, "change_pct"), 1, pct, sizeof pct - 1);
            strcat(pct, "%");
        }
        /* a change that rounds to zero is printed as 0, without a sign, and marked "=" */
        bool zero = rs__cli_rounds_to_zero(rs__cli_real(it, "change_ms"), 3);
        unchanged += zero;
        printf("%9.3f %9.3f %10s %8s %-6s %s%.*s\n", rs__cli_real(it, "a_ms"),
               rs__cli_real(it, "b_ms"),
               rs__cli_signed(rs__cli_real(it, "change_ms"), 3, ms, sizeof ms), pct,
               str_of(it, "kind"), zero ? "= " : "", NAME_WIDTH, str_of(it, "name"));
    }
    if (rs__cli_int(other, "items") > 0)
        printf("%9.3f %9.3f %10s %8s %-6s (%lld more)\n", rs__cli_real(other, "a_ms"),
               rs__cli_real(other, "b_ms"),
               rs__cli_signed(rs__cli_real(other, "change_ms"), 3, ms, sizeof ms), "", "",
               (long long)rs__cli_int(other, "items"));
    printf("%9.3f %9.3f %10s %8s %-6s total\n", rs__cli_real(total, "a_ms"),
           rs__cli_real(total, "b_ms"),
           rs__cli_signed(rs__cli_real(total, "change_ms"), 3, ms, sizeof ms), "", "");
    json_t *busy = json_object_get(cmp, "gpu_busy");
    if (json_is_object(busy))
        printf("%9.3f %9.3f %10s %8s %-6s GPU busy (the union of kernel intervals)\n",
               rs__cli_real(busy, "a_ms"), rs__cli_real(busy, "b_ms"),
               rs__cli_signed(rs__cli_real(busy, "change_ms"), 3, ms, sizeof ms), "", "");
    if (unchanged)
        printf("(= : %zu item%s whose change rounds to 0.000 ms)\n", unchanged,
               unchanged == 1 ? "" : "s");
}

/* Host synchronizations of a comparison, B against A (nothing when neither side has any), then
 * launch waits, in their own section: the GPU waiting for the host. */
static void
print_syncs(json_t *rows, json_t *lw)
{
    json_t *it;
    size_t i;
    char ms[32];

    if (json_array_size(rows) > 0) {
        printf("\nhost waiting for the GPU (synchronizations, not GPU time), B against A:\n");
        json_array_foreach(rows, i, it)
        {
            printf("%9.3f %9.3f %10s %8s %-6s %s\n", rs__cli_real(it, "a_ms"),
                   rs__cli_real(it, "b_ms"),
                   rs__cli_signed(rs__cli_real(it, "change_ms"), 3, ms, sizeof ms), "", "sync",
                   str_of(it, "name"));
        }
    }
    if (json_is_object(lw)) {
        printf("\nGPU waiting for the host (launch waits), B against A:\n");
        printf("%9.3f %9.3f %10s %8s %-6s %s\n", rs__cli_real(lw, "a_ms"), rs__cli_real(lw, "b_ms"),
               rs__cli_signed(rs__cli_real(lw, "change_ms"), 3, ms, sizeof ms), "", "wait",
               "Launch Wait");
    }
}

static int
render_stalls(const char *job, json_t *doc)
{
    json_t *k, *r;
    size_t i, j;

    print_scope("", json_object_get(doc, "scope"));
    if (rs__cli_int(doc, "samples") == 0) {
        printf("%s\n", str_of(doc, "note"));
        return 0;
    }
    printf("%lld PC samples; stall reasons:", (long long)rs__cli_int(doc, "samples"));
    json_array_foreach(json_object_get(doc, "reasons"), i, r)
        printf("%s %s %.1f%%", i ? "," : "", str_of(r, "reason"), rs__cli_real(r, "pct"));
    printf("\n\n%10s %6s  %-52s %s\n", "SAMPLES", "SHARE", "TOP REASONS", "KERNEL");
    json_array_foreach(json_object_get(doc, "kernels"), i, k)
    {
        char reasons[128] = "";
        size_t n = 0;
        json_array_foreach(json_object_get(k, "reasons"), j, r)
        {
            if (j == 3 || n >= sizeof reasons)
                break;
            n += (size_t)snprintf(reasons + n, sizeof reasons - n, "%s%s %.0f%%", j ? ", " : "",
                                  str_of(r, "reason"), rs__cli_real(r, "pct"));
        }
        printf("%10lld %5.1f%%  %-52s %.*s\n", (long long)rs__cli_int(k, "samples"),
               rs__cli_real(k, "pct"), reasons, NAME_WIDTH - 30, str_of(k, "name"));
    }
    json_t *vs = json_object_get(doc, "vs_peers");
    if (json_is_object(vs)) {
        json_t *cmp = json_object_get(vs, "comparison");
        printf("\nrank %lld (%s) against its peers — stall mix, rank against peers:\n",
               (long long)rs__cli_int(vs, "rank"),
               strcmp(str_of(vs, "why"), "straggler") == 0 ? "the straggler" : "requested");
        print_stall_mix(json_object_get(cmp, "stall_mix"), 5);
        printf("\nkernel time %s, peers (A) and rank (B):\n", per_unit(cmp));
        print_items(cmp);
    }
    return 0;
}

int
rs_cli_stalls(const struct rs_cli_options *o, int argc, char **argv)
{
    return rs__cli_show_job(o, argc, argv, "rankscope stalls JOB [--rank R] [--limit N]", "GET",
                            "/stalls", true, render_stalls);
}

static int
render_compare(const char *job, json_t *doc)
{
    print_scope("A: ", json_object_get(doc, "a"));
    print_scope("B: ", json_object_get(doc, "b"));
    printf("%s\n\nGPU time %s (summed over kernels):\n", str_of(doc, "summary"), per_unit(doc));
    print_items(doc);
    if (json_array_size(json_object_get(doc, "stall_mix")) > 0) {
        printf("\nstall mix, B against A:\n");
        print_stall_mix(json_object_get(doc, "stall_mix"), 6);
    }
    print_syncs(json_object_get(doc, "host_sync"), json_object_get(doc, "launch_wait"));
    return 0;
}

int
rs_cli_compare(const struct rs_cli_options *o, int argc, char **argv)
{
    char path[1024];
    int rc;

    static const char usage[] = "rankscope compare JOB [JOB_B] [--rank R --with-rank R2] "
                                "[--since/--until --with-since/--with-until]";
    if ((rc = rs__cli_job_arg(usage, argc == 2 ? 1 : argc, argv)) != 0 ||
        (argc == 2 && (rc = rs__cli_job_arg(usage, 1, argv + 1)) != 0))
        return rc;
    snprintf(path, sizeof path, "/v1/jobs/%s/compare", argv[0]);
    if (argc == 2)
        snprintf(path + strlen(path), sizeof path - strlen(path), "?with=%s", argv[1]);
    rs__cli_scope_query(o, path, sizeof path, true);
    return rs__cli_show(o, "GET", argv[0], path, render_compare, NULL);
}
