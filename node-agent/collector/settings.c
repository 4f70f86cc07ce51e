/* The collector's settings from one table (see settings.h). */
#include "node-agent/collector/settings.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SOCKET "/run/rankscope/agent.sock" /* the agent's default, RS_AGENT_DEFAULT_SOCKET */
#define DEFAULT_FLUSH_MS 250
/* 4 MiB CUPTI buffers: measured on 2 x H200 (docs/BENCHMARKS.md), 64 KiB buffers cost 1.6 us per
 * kernel launch instead of 0.7 (more buffer requests on the launching thread) and did not help
 * torch.profiler in the same process either. */
#define DEFAULT_BUFFER_KB 4096
/* Driver-API records of the synchronizing calls: measured on H200 (docs/BENCHMARKS.md, runs N - P),
 * CUPTI's SYNCHRONIZATION kind cost 0.2 - 0.4 us more per kernel launch than no sync records and
 * counted 17.5 Event Syncs per step for 2.1 cuEventSynchronize calls; these gave the same wait
 * times and cost 0.92 us per launch against 0.97 without sync records in one run, 1.11 against
 * 0.61 in another (wide ranges: not clearly more, not clearly the same). */
#define DEFAULT_SYNC RS_ACTIVITY_SYNC_API
/* Queue times from driver-API records of the launch calls: on 2 x H200 the DDP job's median step
 * took 1.0019 x with them and 1.0021 x with launch waits off, same rounds; CUPTI's latency
 * timestamps cost it 1.0115 x against 1.0038 x (docs/BENCHMARKS.md "Launch waits"). */
#define DEFAULT_LAUNCH_WAIT RS_ACTIVITY_LAUNCH_WAIT_API
/* PC-sampling windows (pcsampling.h) of 1 s a minute: stall data every minute at a duty cycle of
 * 1.7%. Kernels run one at a time inside a window: on 2 x H200 windows of 500 ms every 2 s (25%)
 * left the DDP job's median step time at 1.0038 x but raised its mean 1.18 x (docs/BENCHMARKS.md).
 */
#define DEFAULT_PC_WINDOW_MS 1000
#define DEFAULT_PC_PERIOD_MS 60000
/* Hangs (plugin.h): 10 s at least, or 20 times the communicator's usual operation time, whichever
 * is longer: far beyond the jitter of a step, well within what an operator waits for. */
#define DEFAULT_HANG_MS 10000
#define DEFAULT_HANG_FACTOR 20
/* Kernel tracing in windows (window.h) by default: 1 s every 60 s (1.7% of the time), the
 * schedule of PC-sampling windows. The budget (issue 25, docs/collector.md "Tiers"): at 46.8
 * kernel launches per ms (the launch-bound LM on an H100), 0.5% of step time is ~0.1 us per
 * launch, so nothing may run per launch between windows (no driver-API records there: launch
 * waits and host syncs come from windows only), and the windows' share must leave room: inside
 * one the LM runs 1.11 - 1.19x (CUPTI's kernel records, measured), which at 2 s every 60 s is
 * +0.4 - 0.6% by itself, at 1 s every 60 s +0.2 - 0.3%. On a GPU-bound job the default (then
 * 2 s every 60 s) measured 1.0033x. */
#define DEFAULT_KERNELS_IN_WINDOWS 1
/* Between windows no CUPTI at all (attach.h): a client that stays attached with no kernel records
 * measured +1 ... +8% on the launch-bound LM (docs/BENCHMARKS.md), over the whole budget. */
#define DEFAULT_DETACH 1
#define DEFAULT_WINDOW_MS 1000
#define DEFAULT_WINDOW_PERIOD_MS 60000
/* Each window costs a synchronize: shorter ones would be mostly that. */
#define MIN_PC_WINDOW_MS 100

enum kind { FLAG, NUMBER, CHOICE, TEXT };

struct choice {
    const char *text;
    int value;
};

static const struct choice sync_choices[] = {{"api", RS_ACTIVITY_SYNC_API},
                                             {"1", RS_ACTIVITY_SYNC_RECORDS},
                                             {"0", RS_ACTIVITY_SYNC_OFF},
                                             {0}};
static const struct choice kernels_choices[] = {{"always", 0}, {"window", 1}, {0}};
static const struct choice detach_choices[] = {{"1", 1}, {"0", 0}, {0}};
static const struct choice launch_wait_choices[] = {{"api", RS_ACTIVITY_LAUNCH_WAIT_API},
                                                    {"latency", RS_ACTIVITY_LAUNCH_WAIT_LATENCY},
                                                    {"0", RS_ACTIVITY_LAUNCH_WAIT_OFF},
                                                    {0}};

struct setting {
    const char *name;
    enum kind kind;
    size_t offset;         /* in struct rs_collector_settings */
    size_t size;           /* NUMBER: of the field (int, unsigned, long) */
    long lo, hi, fallback; /* NUMBER: [lo, hi] (0 also allowed when zero_ok); CHOICE: the default */
    bool zero_ok;
    const struct choice *choices;
    const char *text_default;
};

#define AT(field) offsetof(struct rs_collector_settings, field)
#define NUM(name, field, lo, hi, dflt, zero)                                                       \
    {                                                                                              \
        name, NUMBER, AT(field), sizeof(((struct rs_collector_settings *)0)->field), lo, hi, dflt, \
            zero, NULL, NULL                                                                       \
    }

static const struct setting table[] = {
    {"RANKSCOPE_DISABLE", FLAG, AT(disable), 0, 0, 0, 0, false, NULL, NULL},
    {"RANKSCOPE_DEBUG", FLAG, AT(debug), 0, 0, 0, 0, false, NULL, NULL},
    {"RANKSCOPE_HOOK_DEBUG", FLAG, AT(hook_debug), 0, 0, 0, 0, false, NULL, NULL},
    {"RANKSCOPE_AGENT_SOCKET", TEXT, AT(agent_socket), 0, 0, 0, 0, false, NULL, DEFAULT_SOCKET},
    {"RANKSCOPE_STEP_RANGE", TEXT, AT(step_range), 0, 0, 0, 0, false, NULL, NULL},
    NUM("RANKSCOPE_FLUSH_MS", flush_ms, 10, 60000, DEFAULT_FLUSH_MS, false),
    NUM("RANKSCOPE_BUFFER_KB", buffer_kb, 16, 65536, DEFAULT_BUFFER_KB, false),
    {"RANKSCOPE_SYNC", CHOICE, AT(sync), 0, 0, 0, DEFAULT_SYNC, false, sync_choices, NULL},
    {"RANKSCOPE_LAUNCH_WAIT", CHOICE, AT(launch_wait), 0, 0, 0, DEFAULT_LAUNCH_WAIT, false,
     launch_wait_choices, NULL},
    {"RANKSCOPE_PC_SAMPLING", FLAG, AT(pc_sampling), 0, 0, 0, 0, false, NULL, NULL},
    {"RANKSCOPE_PC_DEBUG", FLAG, AT(pc.debug), 0, 0, 0, 0, false, NULL, NULL},
    NUM("RANKSCOPE_PC_WINDOW_MS", pc.window_ms, MIN_PC_WINDOW_MS, 600000, DEFAULT_PC_WINDOW_MS,
        true),
    NUM("RANKSCOPE_PC_PERIOD_MS", pc.period_ms, 100, 86400000, DEFAULT_PC_PERIOD_MS, false),
    NUM("RANKSCOPE_PC_DRAIN_MS", pc.drain_ms, 100, 600000, 1000, false),
    NUM("RANKSCOPE_PC_SAMPLING_PERIOD", pc.sampling_period, 5, 31, 0, false),
    NUM("RANKSCOPE_PC_HW_BUFFER_MB", pc.hw_buffer_mb, 16, 4096, 64, false),
    {"RANKSCOPE_KERNELS", CHOICE, AT(kernels_in_windows), 0, 0, 0, DEFAULT_KERNELS_IN_WINDOWS, false,
     kernels_choices, NULL},
    {"RANKSCOPE_DETACH", CHOICE, AT(detach), 0, 0, 0, DEFAULT_DETACH, false, detach_choices, NULL},
    NUM("RANKSCOPE_WINDOW_MS", window_ms, 100, 600000, DEFAULT_WINDOW_MS, false),
    NUM("RANKSCOPE_WINDOW_PERIOD_MS", window_period_ms, 1000, 86400000, DEFAULT_WINDOW_PERIOD_MS,
        false),
    NUM("RANKSCOPE_HANG_MS", hang_ms, 1000, 86400000, DEFAULT_HANG_MS, true),
    NUM("RANKSCOPE_HANG_FACTOR", hang_factor, 1, 10000, DEFAULT_HANG_FACTOR, false),
};

static void
store_number(void *field, size_t size, long v)
{
    if (size == sizeof(long))
        *(long *)field = v;
    else
        *(int *)field = (int)v; /* int and unsigned fields alike: every range fits both */
}

/* Sets one setting from its variable; returns 1 when the value could not be used (reported). */
static int
read_one(const struct setting *s, const char *v, rs_settings_report_fn report, void *out)
{
    char *field = (char *)out + s->offset, line[512], *end;
    size_t i;

    switch (s->kind) {
    case FLAG:
        *(bool *)field = v && *v && strcmp(v, "0") != 0;
        return 0;
    case TEXT:
        *(const char **)field = v && *v ? v : s->text_default;
        return 0;
    case NUMBER: {
        store_number(field, s->size, s->fallback);
        if (!v)
            return 0;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (*v && *end == '\0' && errno == 0 &&
            ((n >= s->lo && n <= s->hi) || (n == 0 && s->zero_ok))) {
            store_number(field, s->size, n);
            return 0;
        }
        snprintf(line, sizeof line, "%s=%.64s is not %s%ld - %ld; using %ld", s->name, v,
                 s->zero_ok ? "0 or " : "", s->lo, s->hi, s->fallback);
        break;
    }
    case CHOICE: {
        *(int *)field = (int)s->fallback;
        if (!v)
            return 0;
        for (i = 0; s->choices[i].text; i++)
            if (strcmp(v, s->choices[i].text) == 0) {
                *(int *)field = s->choices[i].value;
                return 0;
            }
        size_t n = (size_t)snprintf(line, sizeof line, "%s=%.64s is not one of", s->name, v);
        for (i = 0; s->choices[i].text && n < sizeof line; i++)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s %s", i ? "," : "",
                                  s->choices[i].text);
        for (i = 0; s->choices[i].text; i++)
            if (s->choices[i].value == s->fallback && n < sizeof line)
                snprintf(line + n, sizeof line - n, "; using %s", s->choices[i].text);
        break;
    }
    }
    if (report)
        report(line);
    return 1;
}

int
rs_collector_settings_read(rs_getenv_fn env, rs_settings_report_fn report,
                           struct rs_collector_settings *out)
{
    int bad = 0;

    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        bad += read_one(&table[i], env(table[i].name), report, out);
    if (out->pc.period_ms < out->pc.window_ms)
        out->pc.period_ms = out->pc.window_ms; /* a window per period at most: always on */
    if (out->window_period_ms < out->window_ms)
        out->window_period_ms = out->window_ms;
    return bad;
}
