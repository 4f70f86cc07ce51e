/* Unit tests of the Chrome trace export on the hand-built job of profile_fixture.h: one rank's
 * document (what GET /v1/jobs/{job}/trace answers) parses, has the rank's exact events and the
 * base every rank shares; the event limit, an unknown rank and an unknown job are errors. */
#include "common/error.h"
#include "query/trace_export.h"
#include "tests/t.h"
#include "tests/unit/query/profile_fixture.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rank `rank`'s document, parsed; NULL (after checking the code) when export fails. */
static json_t *
document(rs_store_read *r, uint32_t rank, uint64_t max_events, int want_rc,
         struct rs_trace_export_stats *st)
{
    struct rs_trace_export_options o = {"job", 0, 0, NULL, max_events};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_t *doc = NULL;

    T_CHECK(f != NULL);
    if (!f)
        return NULL;
    T_EQ(rs_trace_export_rank(r, &o, rank, f, st), want_rc);
    fclose(f);
    if (want_rc == 0) {
        doc = json_loadb(buf, len, 0, NULL);
        T_CHECK(doc != NULL);
    }
    free(buf);
    return doc;
}

static size_t
count(json_t *doc, const char *cat, const char *prefix)
{
    json_t *e;
    size_t i, n = 0;

    json_array_foreach(json_object_get(doc, "traceEvents"), i, e)
    {
        const char *c = json_string_value(json_object_get(e, "cat"));
        const char *name = json_string_value(json_object_get(e, "name"));
        n += c && name && strcmp(c, cat) == 0 && strncmp(name, prefix, strlen(prefix)) == 0;
    }
    return n;
}

static void
one_rank_document(rs_store_read *r)
{
    struct rs_trace_export_stats st;
    json_t *d0 = document(r, 0, 0, 0, &st), *d1 = document(r, 1, 0, 0, &st);

    if (d0 && d1) {
        T_EQ(st.ranks, 1);
        /* rank 1: 40 kernels, 10 AllReduce, 10 steps, 10 Stream Syncs */
        T_EQ(st.events, 40 + 10 + 10 + 10);
        T_EQ(st.syncs, 10);
        T_EQ(count(d1, "cuda_sync", "Stream Sync"), 10);
        T_EQ(count(d0, "cuda_sync", ""), 0);
        T_EQ(count(d0, "kernel", "a"), 20);
        T_EQ(count(d1, "kernel", "ncclDevKernel_AllReduce"), 10);
        T_EQ(count(d0, "user_annotation", "ProfilerStep#"), 10);
        /* no made-up launch correlation (HTA would drop the kernels: it keeps those whose
         * correlation matches a CPU op of a traced step) */
        json_t *e;
        size_t i, with_correlation = 0;
        json_array_foreach(json_object_get(d0, "traceEvents"), i, e) with_correlation +=
            json_object_get(json_object_get(e, "args"), "correlation") != NULL;
        T_EQ(with_correlation, 0);
        T_EQ(json_integer_value(json_object_get(json_object_get(d1, "distributedInfo"), "rank")),
             1);
        T_EQ(json_integer_value(
                 json_object_get(json_object_get(d1, "distributedInfo"), "world_size")),
             2);
        T_EQ(json_integer_value(json_object_get(d0, "baseTimeNanoseconds")),
             json_integer_value(json_object_get(d1, "baseTimeNanoseconds")));
    }
    json_decref(d0);
    json_decref(d1);
}

static void
errors(rs_store_read *r)
{
    struct rs_trace_export_stats st;
    struct rs_trace_export_options absent = {"absent", 0, 0, NULL, 0};
    FILE *f = fopen("/dev/null", "w");

    document(r, 1, 69, RS_E_TOO_BIG, &st);
    json_decref(document(r, 1, 70, 0, &st)); /* exactly at the limit */
    document(r, 7, 0, RS_E_NOT_FOUND, &st);
    T_CHECK(f != NULL);
    if (f) {
        T_EQ(rs_trace_export_rank(r, &absent, 0, f, &st), RS_E_NOT_FOUND);
        fclose(f);
    }
}

int
main(void)
{
    char dir[] = "/tmp/rs-trace-XXXXXX";
    rs_store *st;
    rs_store_read *r = fixture_open(dir, &st);

    T_RUN_ARG(one_rank_document, r);
    T_RUN_ARG(errors, r);
    fixture_close(dir, st, r);
    return T_DONE("query/trace_export");
}
