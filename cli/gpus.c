/* `rankscope gpus JOB`: each rank's GPU as NVML saw it over the job's newest minutes — clocks
 * against their maxima, the share of the window each throttle reason held, power against its
 * limit, temperature, utilisation, errors and link state (GET /v1/jobs/{job}/gpus); and the
 * hardware evidence lines of `rankscope stragglers` (both read the same figures). */
#include "cli/commands.h"

#include "cli/output.h"

#include "common/grouped.h"

#include <stdio.h>
#include <string.h>

static const char *const reasons[][2] = {
    {"power_cap", "power cap"},   {"hw_slowdown", "HW slowdown"}, {"sw_thermal", "SW thermal"},
    {"hw_thermal", "HW thermal"}, {"power_brake", "power brake"}, {"sync_boost", "sync boost"},
};

/* "power cap 100%, HW thermal 20%" or "none" (readings without reasons: "?") */
static void
throttled(json_t *g, char *out, size_t len)
{
    json_t *share = json_object_get(g, "throttle_share");
    size_t n = 0;

    out[0] = '\0';
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0] && n < len; i++) {
        json_t *v = json_object_get(share, reasons[i][0]);
        if (json_is_number(v) && json_number_value(v) >= 0.005)
            n += (size_t)snprintf(out + n, len - n, "%s%s %.0f%%", n ? ", " : "", reasons[i][1],
                                  100 * json_number_value(v));
    }
    if (n == 0)
        snprintf(out, len, "%s",
                 json_is_number(json_object_get(share, "power_cap")) ? "none" : "?");
}

/* Busy is not efficient: what the rank's kernels did over the window (from its records, not
 * NVML), " (kernels busy 85%, tensor cores 0% of kernel time, memory-bound 40% of stall
 * samples)"; "<=" before a busy share summed from windows (an upper bound). Nothing without
 * kernels. */
static void
kernels(json_t *g)
{
    json_t *k = json_object_get(g, "kernels"), *mb = json_object_get(g, "memory_bound");
    const char *from = json_string_value(json_object_get(k, "busy_from"));

    if (!json_is_object(k))
        return;
    printf(" (kernels busy %s%.0f%%, tensor cores %.0f%% of kernel time",
           from && strcmp(from, "summed_windows") == 0 ? "<=" : "",
           100 * rs__cli_real(k, "busy_share"), 100 * rs__cli_real(k, "tensor_core_share"));
    if (json_is_number(json_object_get(mb, "share")))
        printf(", memory-bound %.0f%% of stall samples", 100 * rs__cli_real(mb, "share"));
    printf(")");
}

static int
render_gpus(const char *job, json_t *doc)
{
    json_t *g;
    size_t i;
    char a[32], b[32], t[160], first[32], last[32];

    json_t *w = json_object_get(doc, "window");
    rs__cli_format_time(rs__cli_int(w, "since_ns"), first, sizeof first);
    rs__cli_format_time(rs__cli_int(w, "until_ns"), last, sizeof last);
    printf("job %s: GPU readings from %s to %s\n", job, first, last);
    json_array_foreach(json_object_get(doc, "gpus"), i, g)
    {
        json_t *c = json_object_get(g, "clocks"), *p = json_object_get(g, "power"),
               *e = json_object_get(g, "errors"), *l = json_object_get(g, "links");
        printf("rank %-4lld %s %s", (long long)rs__cli_int(g, "rank"),
               json_string_value(json_object_get(g, "host")),
               json_string_value(json_object_get(g, "gpu_uuid")));
        if (rs__cli_int(g, "samples") == 0) {
            printf("  no readings (no telemetry from its node's agent in the window)");
            kernels(g);
            printf("\n");
            continue;
        }
        throttled(g, t, sizeof t);
        printf("  SM %s/%s MHz  throttled: %s", rs_grouped(rs__cli_real(c, "sm_mhz"), a, sizeof a),
               rs_grouped(rs__cli_real(c, "sm_max_mhz"), b, sizeof b), t);
        if (json_is_number(json_object_get(json_object_get(g, "violation_share"), "power")))
            printf(" (power-limited %.0f%% of the time)",
                   100 * rs__cli_real(json_object_get(g, "violation_share"), "power"));
        printf("  %.0f/%.0f W  %.0f C  util %.0f%%", rs__cli_real(p, "watts"),
               rs__cli_real(p, "limit_watts"),
               rs__cli_real(json_object_get(g, "temperature"), "max_c"),
               rs__cli_real(json_object_get(g, "utilization"), "gpu_pct"));
        kernels(g);
        printf("  ECC %lld/%lld  XID %lld", (long long)rs__cli_int(e, "ecc_corrected"),
               (long long)rs__cli_int(e, "ecc_uncorrected"), (long long)rs__cli_int(e, "xids"));
        if (json_is_integer(json_object_get(l, "pcie_width")))
            printf("  PCIe gen %lld/%lld x%lld/x%lld", (long long)rs__cli_int(l, "pcie_gen"),
                   (long long)rs__cli_int(l, "pcie_gen_max"),
                   (long long)rs__cli_int(l, "pcie_width"),
                   (long long)rs__cli_int(l, "pcie_width_max"));
        if (json_is_integer(json_object_get(l, "nvlink_up")))
            printf("  NVLink %lld up", (long long)rs__cli_int(l, "nvlink_up"));
        printf("\n");
    }
    return 0;
}

int
rs_cli_gpus(const struct rs_cli_options *o, int argc, char **argv)
{
    return rs__cli_show_job(o, argc, argv, "rankscope gpus JOB", "GET", "/gpus", false,
                            render_gpus);
}

void
rs__cli_render_hardware(json_t *verdict)
{
    json_t *hw = json_object_get(verdict, "hardware"), *it;
    size_t k;

    if (!json_is_object(hw) || !json_is_true(json_object_get(hw, "telemetry")))
        return;
    json_array_foreach(json_object_get(hw, "items"), k, it)
        printf("    GPU: %s\n", json_string_value(json_object_get(it, "text")));
    if (json_is_string(json_object_get(hw, "recommendation")))
        printf("  hardware: %s\n", json_string_value(json_object_get(hw, "recommendation")));
}

static int
render_fleet(const char *what, json_t *doc)
{
    bool hosts = strcmp(what, "hosts") == 0;
    json_t *row;
    size_t i;

    printf("%s ranked by how often they were the straggler (%lld stored verdicts)\n",
           hosts ? "hosts" : "GPUs", (long long)rs__cli_int(doc, "verdicts_known"));
    json_array_foreach(json_object_get(doc, hosts ? "hosts" : "gpus"), i, row)
    {
        json_t *ms = json_object_get(row, "mean_slowdown");
        printf("%s  %s", json_string_value(json_object_get(row, hosts ? "host" : "gpu_uuid")),
               json_string_value(json_object_get(row, "summary")));
        if (json_is_number(ms))
            printf(", %.1f%% slower on average", 100 * (json_number_value(ms) - 1));
        if (!hosts) {
            json_t *r = json_object_get(row, "newest_reading");
            printf("  (%s", json_string_value(json_object_get(row, "host")));
            if (json_is_object(r))
                printf("; newest reading: SM %lld/%lld MHz, %.0f W, %lld C, PCIe x%lld/x%lld",
                       (long long)rs__cli_int(r, "sm_clock_mhz"),
                       (long long)rs__cli_int(r, "sm_clock_max_mhz"),
                       rs__cli_real(r, "power_watts"), (long long)rs__cli_int(r, "temperature_c"),
                       (long long)rs__cli_int(r, "pcie_width"),
                       (long long)rs__cli_int(r, "pcie_width_max"));
            printf(")");
        }
        printf("; last job %s\n", json_string_value(json_object_get(row, "last_job")));
    }
    return 0;
}

int
rs_cli_fleet(const struct rs_cli_options *o, int argc, char **argv)
{
    if (argc > 1 || (argc == 1 && strcmp(argv[0], "hosts") != 0 && strcmp(argv[0], "gpus") != 0)) {
        fprintf(stderr, "usage: rankscope fleet [gpus|hosts]\n");
        return 2;
    }
    bool hosts = argc == 1 && strcmp(argv[0], "hosts") == 0;
    return rs__cli_show(o, "GET", hosts ? "hosts" : "gpus", hosts ? "/v1/hosts" : "/v1/gpus",
                        render_fleet, NULL);
}
