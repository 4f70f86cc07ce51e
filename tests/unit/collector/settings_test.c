/* Unit tests of node-agent/collector/settings: the defaults, every kind of value, and a value that
 * cannot be used reported once (variable, value, what is used instead) — never replaced silently.
 */
#include "node-agent/collector/settings.h"
#include "tests/t.h"

#include <string.h>

static const char *const *vars; /* NAME, VALUE, ..., NULL */

static const char *
fake_env(const char *name)
{
    for (const char *const *v = vars; v && *v; v += 2)
        if (strcmp(*v, name) == 0)
            return v[1];
    return NULL;
}

static char reported[8][512];
static int n_reported;

static void
report(const char *line)
{
    if (n_reported < 8)
        snprintf(reported[n_reported], sizeof reported[0], "%s", line);
    n_reported++;
}

static int
read_with(const char *const *env, struct rs_collector_settings *s)
{
    vars = env;
    n_reported = 0;
    return rs_collector_settings_read(fake_env, report, s);
}

static void
defaults(void)
{
    struct rs_collector_settings s;

    T_EQ(read_with(NULL, &s), 0);
    T_EQ(n_reported, 0);
    T_CHECK(!s.disable && !s.debug && !s.pc_sampling && !s.hook_debug);
    T_CHECK(strcmp(s.agent_socket, "/run/rankscope/agent.sock") == 0 && !s.step_range);
    T_EQ(s.flush_ms, 250);
    T_EQ(s.buffer_kb, 4096);
    T_EQ(s.sync, RS_ACTIVITY_SYNC_API);
    T_EQ(s.launch_wait, RS_ACTIVITY_LAUNCH_WAIT_API);
    T_EQ(s.pc.window_ms, 1000);
    T_EQ(s.pc.period_ms, 60000);
    T_EQ(s.pc.drain_ms, 1000);
    T_EQ(s.pc.sampling_period, 0);
    T_EQ(s.pc.hw_buffer_mb, 64);
    T_EQ(s.kernels_in_windows, 1); /* windows by default (docs/collector.md "Tiers") */
    T_EQ(s.window_ms, 1000);
    T_EQ(s.window_period_ms, 60000);
    T_EQ(s.hang_ms, 10000);
    T_EQ(s.hang_factor, 20);
}

/* The tiers' and hangs' settings: windows, a period shorter than the window (raised to it), a
 * value that is not a choice, hangs off. */
static void
windows_and_hangs(void)
{
    struct rs_collector_settings s;
    static const char *const env[] = {"RANKSCOPE_KERNELS",
                                      "window",
                                      "RANKSCOPE_WINDOW_MS",
                                      "5000",
                                      "RANKSCOPE_WINDOW_PERIOD_MS",
                                      "2000",
                                      "RANKSCOPE_HANG_MS",
                                      "0",
                                      "RANKSCOPE_HANG_FACTOR",
                                      "0",
                                      NULL};
    static const char *const bad[] = {"RANKSCOPE_KERNELS", "sometimes", NULL};

    T_EQ(read_with(env, &s), 1); /* the factor 0 */
    T_EQ(s.kernels_in_windows, 1);
    T_EQ(s.window_ms, 5000);
    T_EQ(s.window_period_ms, 5000);
    T_EQ(s.hang_ms, 0);
    T_EQ(s.hang_factor, 20);
    T_CHECK(strstr(reported[0], "RANKSCOPE_HANG_FACTOR=0") != NULL);
    T_EQ(read_with(bad, &s), 1);
    T_EQ(s.kernels_in_windows, 1);
    T_CHECK(strstr(reported[0],
                   "RANKSCOPE_KERNELS=sometimes is not one of always, window; using window") !=
            NULL);
}

static void
values(void)
{
    static const char *const env[] = {"RANKSCOPE_DISABLE",
                                      "0",
                                      "RANKSCOPE_DEBUG",
                                      "yes",
                                      "RANKSCOPE_AGENT_SOCKET",
                                      "/run/a",
                                      "RANKSCOPE_STEP_RANGE",
                                      "train_step",
                                      "RANKSCOPE_FLUSH_MS",
                                      "100",
                                      "RANKSCOPE_SYNC",
                                      "0",
                                      "RANKSCOPE_LAUNCH_WAIT",
                                      "latency",
                                      "RANKSCOPE_PC_SAMPLING",
                                      "1",
                                      "RANKSCOPE_PC_WINDOW_MS",
                                      "0",
                                      "RANKSCOPE_PC_PERIOD_MS",
                                      "100",
                                      "RANKSCOPE_PC_SAMPLING_PERIOD",
                                      "20",
                                      "RANKSCOPE_BUFFER_KB",
                                      "",
                                      NULL};
    struct rs_collector_settings s;

    T_EQ(read_with(env, &s), 1); /* the empty RANKSCOPE_BUFFER_KB */
    T_CHECK(!s.disable && s.debug && s.pc_sampling);
    T_CHECK(strcmp(s.agent_socket, "/run/a") == 0 && strcmp(s.step_range, "train_step") == 0);
    T_EQ(s.flush_ms, 100);
    T_EQ(s.buffer_kb, 4096);
    T_EQ(s.sync, RS_ACTIVITY_SYNC_OFF);
    T_EQ(s.launch_wait, RS_ACTIVITY_LAUNCH_WAIT_LATENCY);
    T_EQ(s.pc.window_ms, 0); /* the whole run */
    T_EQ(s.pc.period_ms, 100);
    T_EQ(s.pc.sampling_period, 20);
}

static void
bad_values_reported_once(void)
{
    static const char *const env[] = {"RANKSCOPE_FLUSH_MS",
                                      "fast",
                                      "RANKSCOPE_SYNC",
                                      "2",
                                      "RANKSCOPE_PC_WINDOW_MS",
                                      "50",
                                      "RANKSCOPE_BUFFER_KB",
                                      "999999999999999999999",
                                      NULL};
    struct rs_collector_settings s;

    T_EQ(read_with(env, &s), 4);
    T_EQ(n_reported, 4);
    T_EQ(s.flush_ms, 250);
    T_EQ(s.sync, RS_ACTIVITY_SYNC_API);
    T_EQ(s.pc.window_ms, 1000);
    T_EQ(s.buffer_kb, 4096);
    T_CHECK(strcmp(reported[0], "RANKSCOPE_FLUSH_MS=fast is not 10 - 60000; using 250") == 0);
    T_CHECK(strcmp(reported[1], "RANKSCOPE_BUFFER_KB=999999999999999999999 is not 16 - 65536; "
                                "using 4096") == 0);
    T_CHECK(strcmp(reported[2], "RANKSCOPE_SYNC=2 is not one of api, 1, 0; using api") == 0);
    T_CHECK(strcmp(reported[3], "RANKSCOPE_PC_WINDOW_MS=50 is not 0 or 100 - 600000; using "
                                "1000") == 0);
}

static void
period_at_least_the_window(void)
{
    static const char *const env[] = {"RANKSCOPE_PC_WINDOW_MS", "5000", "RANKSCOPE_PC_PERIOD_MS",
                                      "1000", NULL};
    struct rs_collector_settings s;

    T_EQ(read_with(env, &s), 0);
    T_EQ(s.pc.window_ms, 5000);
    T_EQ(s.pc.period_ms, 5000);
}

int
main(void)
{
    T_RUN(defaults);
    T_RUN(values);
    T_RUN(bad_values_reported_once);
    T_RUN(period_at_least_the_window);
    T_RUN(windows_and_hangs);
    return T_DONE("collector/settings");
}
