/* Unit tests of the streaming straggler evaluator (server/evaluator.c) against a real store, writer
 * and loop: a job's steps arrive in parts (tests/straggler_fixture.h), and after each part the
 * timer's evaluations must raise a verdict only once the rule holds (two windows in a row), keep
 * it (and its detected_ns) while it holds, clear it when it stops, raise it again as a new entry,
 * and annotate a REST answer with that history. */
#include "common/clock.h"
#include "query/stragglers.h"
#include "server/evaluator.h"
#include "server/server_int.h"
#include "tests/store_fixture.h"
#include "tests/straggler_fixture.h"
#include "tests/t.h"

#include <string.h>

#define SLOW_RANK 2

struct fixture {
    char dir[32];
    struct rs_server srv;
    rs_evaluator *e;
};

static void
fixture_start(struct fixture *f)
{
    struct rs_writer_options wo = {.max_queue = 64, .max_group = 8};
    struct rs_evaluator_options eo = {5, 3600}; /* every 5 ms; every job is running */

    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/rs-evaluator-XXXXXX");
    f->srv.store = t_store_open(f->dir, NULL);
    T_EQ(uv_loop_init(&f->srv.loop), 0);
    T_EQ(rs_post_new(&f->srv.loop, &f->srv.post), 0);
    T_EQ(rs_writer_start(f->srv.store, &wo, &f->srv.counters, &f->srv.writer), 0);
    T_EQ(rs_evaluator_start(&f->srv, &eo, &f->e), 0);
}

static void
fixture_stop(struct fixture *f)
{
    rs_evaluator_close(f->e);
    rs_post_close(f->srv.post);
    uv_run(&f->srv.loop, UV_RUN_DEFAULT);
    rs_writer_stop(f->srv.writer);
    rs_post_drain(f->srv.post);
    T_EQ(uv_loop_close(&f->srv.loop), 0);
    t_store_remove(f->srv.store, f->dir);
}

/* Runs the loop until two more evaluations have ended: the second started after the caller's
 * last write (the first may have been in flight). */
static struct rs_evaluator_stats
evaluate(struct fixture *f)
{
    struct rs_evaluator_stats s;
    uint64_t until = rs_clock_mono_ns() + 10000000000ull;

    rs_evaluator_get_stats(f->e, &s);
    uint64_t want = s.evaluations + 2;
    while (s.evaluations < want && rs_clock_mono_ns() < until) {
        uv_run(&f->srv.loop, UV_RUN_ONCE);
        rs_evaluator_get_stats(f->e, &s);
    }
    T_CHECK(s.evaluations >= want);
    T_EQ(s.errors, 0);
    return s;
}

struct active {
    size_t n;
    uint32_t rank;
    uint64_t detected_ns;
};

static void
on_active(void *arg, const struct rs_evaluator_verdict *v)
{
    struct active *a = arg;

    T_CHECK(strcmp(v->job, "job") == 0 && v->slowdown > 1.05);
    T_EQ(v->capture_id, 0); /* no capture table here: the rule's own cause */
    a->n++;
    a->rank = v->rank;
    a->detected_ns = v->detected_ns;
}

static struct active
active(const struct fixture *f)
{
    struct active a = {0, 0, 0};

    size_t n = rs_evaluator_foreach_active(f->e, 10, on_active, &a);
    T_EQ(n, a.n);
    return a;
}

/* The REST answer for the job, annotated with since_ns. */
static json_t *
answer(struct fixture *f, uint64_t since_ns)
{
    struct rs_straggler_report rep = {0};
    rs_store_read *r;
    json_t *doc;

    T_EQ(rs_store_read_begin(f->srv.store, &r), 0);
    T_EQ(rs_stragglers_evaluate_job(r, "job", NULL, &rep), 0);
    rs_store_read_end(r);
    doc = rs_straggler_report_json(&rep);
    T_CHECK(doc != NULL);
    T_EQ(rs_evaluator_annotate(f->e, "job", since_ns, &rep, doc), 0);
    rs_straggler_report_fini(&rep);
    return doc;
}

static uint64_t
int_of(json_t *o, const char *key)
{
    return (uint64_t)json_integer_value(json_object_get(o, key));
}

static void
history(void)
{
    struct fixture f;
    struct rs_evaluator_stats s;
    struct active a;
    json_t *doc, *v;

    fixture_start(&f);
    /* 60 steps without a fault: nothing to raise */
    t_straggler_put(f.srv.store, "job", T_NO_FAULT, SLOW_RANK, 0, 0, 60);
    s = evaluate(&f);
    T_EQ(s.raised, 0);
    T_CHECK(s.jobs_evaluated > 0);

    /* slow from step 60: one slow window (60..89) is not yet the rule (two in a row) */
    t_straggler_put(f.srv.store, "job", T_SLOW_GPU, SLOW_RANK, 60, 60, 90);
    s = evaluate(&f);
    T_EQ(s.raised, 0);
    T_EQ(active(&f).n, 0);

    /* a second slow window: raised, once */
    uint64_t before_raise = rs_clock_realtime_ns();
    t_straggler_put(f.srv.store, "job", T_SLOW_GPU, SLOW_RANK, 60, 90, 120);
    s = evaluate(&f);
    T_EQ(s.raised, 1);
    T_EQ(s.active_stragglers, 1);
    a = active(&f);
    T_EQ(a.n, 1);
    T_EQ(a.rank, SLOW_RANK);
    T_CHECK(a.detected_ns >= before_raise && a.detected_ns <= rs_clock_realtime_ns());
    uint64_t detected = a.detected_ns;

    /* still slow: kept, with the same detected_ns; not raised again */
    t_straggler_put(f.srv.store, "job", T_SLOW_GPU, SLOW_RANK, 60, 120, 150);
    s = evaluate(&f);
    T_EQ(s.raised, 1);
    T_EQ(s.cleared, 0);
    a = active(&f);
    T_CHECK(a.n == 1 && a.detected_ns == detected);

    /* the REST answer annotated: the verdict's detected_ns, no clears, events_ns the raise */
    doc = answer(&f, 0);
    v = json_array_get(json_object_get(doc, "stragglers"), 0);
    T_EQ(json_array_size(json_object_get(doc, "stragglers")), 1);
    T_EQ(int_of(v, "rank"), SLOW_RANK);
    T_EQ(int_of(v, "detected_ns"), detected);
    T_EQ(json_array_size(json_object_get(doc, "cleared")), 0);
    T_EQ(int_of(doc, "events_ns"), detected);
    T_CHECK(json_is_true(json_object_get(doc, "streaming")));
    json_decref(doc);
    /* since_ns at the raise: the verdict is not news */
    doc = answer(&f, detected);
    T_EQ(json_array_size(json_object_get(doc, "stragglers")), 0);
    json_decref(doc);

    /* two windows without the fault: cleared */
    t_straggler_put(f.srv.store, "job", T_NO_FAULT, SLOW_RANK, 0, 150, 210);
    s = evaluate(&f);
    T_EQ(s.cleared, 1);
    T_EQ(s.active_stragglers, 0);
    T_EQ(active(&f).n, 0);
    doc = answer(&f, 0);
    json_t *c = json_array_get(json_object_get(doc, "cleared"), 0);
    T_EQ(json_array_size(json_object_get(doc, "stragglers")), 0);
    T_EQ(json_array_size(json_object_get(doc, "cleared")), 1);
    T_EQ(int_of(c, "rank"), SLOW_RANK);
    T_EQ(int_of(c, "detected_ns"), detected);
    uint64_t cleared = int_of(c, "cleared_ns");
    T_CHECK(cleared > detected);
    T_EQ(int_of(doc, "events_ns"), cleared);
    json_decref(doc);

    /* slow again: a new entry, detected after the clear; the old one stays cleared */
    t_straggler_put(f.srv.store, "job", T_SLOW_GPU, SLOW_RANK, 210, 210, 270);
    s = evaluate(&f);
    T_EQ(s.raised, 2);
    T_EQ(s.cleared, 1);
    a = active(&f);
    T_CHECK(a.n == 1 && a.detected_ns > cleared);
    doc = answer(&f, 0);
    v = json_array_get(json_object_get(doc, "stragglers"), 0);
    T_EQ(int_of(v, "detected_ns"), a.detected_ns);
    T_EQ(json_array_size(json_object_get(doc, "cleared")), 1);
    T_EQ(int_of(doc, "events_ns"), a.detected_ns);
    json_decref(doc);
    /* since the clear: the new verdict, and no clear */
    doc = answer(&f, cleared);
    T_EQ(json_array_size(json_object_get(doc, "stragglers")), 1);
    T_EQ(json_array_size(json_object_get(doc, "cleared")), 0);
    json_decref(doc);

    /* a deleted job's history is forgotten */
    rs_evaluator_forget(f.e, "job");
    doc = answer(&f, 0);
    v = json_array_get(json_object_get(doc, "stragglers"), 0);
    T_CHECK(json_is_null(json_object_get(v, "detected_ns")));
    T_EQ(json_array_size(json_object_get(doc, "cleared")), 0);
    json_decref(doc);
    fixture_stop(&f);
}

/* Without an evaluator (NULL): the answer says so, and has no history. */
static void
no_evaluator(void)
{
    struct rs_straggler_verdict v = {.rank = 1, .since_ns = 5};
    struct rs_straggler_report rep = {
        .job = (char *)"job", .steps_source = "markers", .verdicts = &v, .n_verdicts = 1};
    json_t *doc = rs_straggler_report_json(&rep);

    T_CHECK(doc != NULL);
    T_EQ(rs_evaluator_annotate(NULL, "job", 0, &rep, doc), 0);
    T_CHECK(json_is_null(
        json_object_get(json_array_get(json_object_get(doc, "stragglers"), 0), "detected_ns")));
    T_CHECK(json_is_false(json_object_get(doc, "streaming")));
    T_CHECK(json_is_null(json_object_get(doc, "events_ns")));
    /* since_ns filters by the data time when no evaluation has seen the verdict */
    T_EQ(rs_evaluator_annotate(NULL, "job", 5, &rep, doc), 0);
    T_EQ(json_array_size(json_object_get(doc, "stragglers")), 0);
    json_decref(doc);
}

/* Rank 0's agent delivered 300 steps further than the others' (0 .. 419 against 0 .. 119, rank 2
 * slow throughout): the evaluation reads 120 steps per rank, rank 0's from its own newest back
 * (300 .. 419), and must still judge the windows all ranks have — before, it raised nothing
 * ("not enough data") until the others caught up. */
static void
rank_ahead(void)
{
    struct fixture f;
    struct rs_evaluator_stats s;

    fixture_start(&f);
    t_straggler_put(f.srv.store, "job", T_SLOW_GPU, SLOW_RANK, 0, 0, 120);
    t_straggler_put_ranks(f.srv.store, "job", T_SLOW_GPU, SLOW_RANK, 0, 120, 420, 0, 1);
    s = evaluate(&f);
    T_EQ(s.raised, 1);
    T_EQ(active(&f).rank, SLOW_RANK);
    fixture_stop(&f);
}

int
main(void)
{
    T_RUN(history);
    T_RUN(no_evaluator);
    T_RUN(rank_ahead);
    return T_DONE("server/evaluator");
}
