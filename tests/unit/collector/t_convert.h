/* Test helper for the collector's tests: a converter (convert.h) whose agent socket does not
 * exist — what it would send is dropped and counted — and its counts. */
#ifndef RS_TESTS_T_CONVERT_H
#define RS_TESTS_T_CONVERT_H

#include "node-agent/collector/convert.h"
#include "tests/t.h"

static inline rs_convert *
t_converter(void)
{
    struct rs_env_identity id = {.job = "job-t", .world_size = 1, .host = "h", .pid = 1};
    struct rs_convert_options opts = {"/nonexistent/agent.sock", NULL, NULL};
    rs_convert *c = NULL;
    T_EQ(rs_convert_new(&id, &opts, &c), 0);
    return c;
}

static inline struct rs_convert_stats
t_convert_stats(const rs_convert *c)
{
    struct rs_convert_stats st;
    rs_convert_get_stats(c, &st);
    return st;
}

#endif
