/* Test helper for the collector's tests: a converter (convert.h) whose agent socket does not
 * exist — what it would send is dropped and counted — and its counts. */
#ifndef RS_TESTS_T_CONVERT_H
#define RS_TESTS_T_CONVERT_H

#include "node-agent/collector/convert.h"
#include "tests/t.h"

/* A converter that finds launch waits `launch_wait_lag_ns` behind the newest work (0: none). */
static inline rs_convert *
t_converter_lag(uint64_t launch_wait_lag_ns)
{
    struct rs_env_identity id = {.job = "job-t", .world_size = 1, .host = "h", .pid = 1};
    struct rs_convert_options opts = {"/nonexistent/agent.sock", NULL, NULL, launch_wait_lag_ns};
    rs_convert *c = NULL;
    T_EQ(rs_convert_new(&id, &opts, &c), 0);
    return c;
}

static inline rs_convert *
t_converter(void)
{
    return t_converter_lag(0);
}

static inline struct rs_convert_stats
t_convert_stats(const rs_convert *c)
{
    struct rs_convert_stats st;
    rs_convert_get_stats(c, &st);
    return st;
}

#endif
