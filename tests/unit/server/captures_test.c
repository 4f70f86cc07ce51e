/* Unit tests of the capture table (server/captures.c): a capture goes requested -> delivered ->
 * running -> done from an agent's batches and replies; orders follow the rank to a restarted agent
 * (a new agent id) and stop once the collector started; unknown ranks, a second open capture of a
 * rank, the per-job rate and duplicates are refused; reports and marks from another rank are
 * ignored and counted; captures without word expire with a reason; the latest done capture is
 * found for the evaluator; a collector's report times outside [asked, now] are not believed; the
 * changes the store takes, again after a failed write; captures read back from the store (open
 * ones expired, ids above them after); a deleted job's captures and routes forgotten. */
#include "server/captures.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <errno.h>
#include <string.h>

#define S 1000000000ull
#define T0 (1700000000ull * S)

static rs_captures *
table(uint32_t rate)
{
    struct rs_captures_options o = {rate, 30 * S};
    rs_captures *cs = NULL;
    T_EQ(rs_captures_new(&o, &cs), 0);
    return cs;
}

/* Agent `agent` sends one batch of rank `rank` of `job` (3 kernels, 42 stall samples), with
 * `reports`, a mark and, when `counted` is not NULL, the agent's count of the marked frames
 * ({kernels, stall samples}). */
static void
batch_counted(rs_captures *cs, uint64_t agent, const char *job, uint32_t rank,
              const struct rs_capture_report *reports, uint32_t n, uint64_t mark, uint64_t now,
              const uint64_t *counted)
{
    static const char *const names[] = {"k"};
    static const struct rs_kernel_record k[3] = {
        {1, 2, 0, 0, 0, 0}, {3, 4, 0, 0, 0, 0}, {5, 6, 0, 0, 0, 0}};
    static const struct rs_stall_record st = {0x10, 42, 0, 0, 0};
    struct rs_rank_batch rb = {.identity = T_IDENTITY(job, rank, 8, "GPU-1"),
                               .strings = names,
                               .n_strings = 1,
                               .kernels = k,
                               .n_kernels = 3,
                               .stalls = &st,
                               .n_stalls = 1,
                               .capture_id = mark,
                               .captures = reports,
                               .n_captures = n,
                               .has_capture_count = counted != NULL,
                               .capture_kernels = counted ? counted[0] : 0,
                               .capture_stall_samples = counted ? counted[1] : 0};
    struct rs_agent_batch b = t_agent_batch(agent, 1, &rb, 1);
    rs_captures_ingest(cs, agent, &b, now);
}

/* The same without the agent's count (an older agent). */
static void
batch(rs_captures *cs, uint64_t agent, const char *job, uint32_t rank,
      const struct rs_capture_report *reports, uint32_t n, uint64_t mark, uint64_t now)
{
    batch_counted(cs, agent, job, rank, reports, n, mark, now, NULL);
}

static struct rs_capture_report
report(uint64_t id, uint32_t state, uint64_t t, const char *msg)
{
    struct rs_capture_report r = {
        .id = id, .state = state, .time_ns = t, .kinds = RS_CAPTURE_KERNELS};
    rs_capture_report_set_message(&r, msg);
    return r;
}

/* alice asks for a 5 s kernels capture of rank 2 of "job" at T0: its id. */
static uint64_t
request_rank2(rs_captures *cs)
{
    uint32_t ranks[] = {2};
    uint64_t id = 0;
    char why[256];

    int rc = rs_captures_request(cs, "job", ranks, 1, RS_CAPTURE_KERNELS, 5, "alice", "test", T0,
                                 &id, why, sizeof why);

    T_EQ(rc, 0); /* and then id stays 0, which the caller's checks catch */
    return id;
}

static void
lifecycle(void)
{
    rs_captures *cs = table(8);
    struct rs_capture_order o[RS_CAPTURE_MAX_ORDERS];
    struct rs_capture_info info;

    batch(cs, 100, "job", 2, NULL, 0, 0, T0);
    batch(cs, 200, "job", 3, NULL, 0, 0, T0);
    uint64_t id = request_rank2(cs);
    T_OK(rs_captures_get(cs, id, &info));
    T_EQ(info.state, RS_CAPTURES_REQUESTED);
    /* only the agent serving rank 2 gets the order */
    T_EQ(rs_captures_orders(cs, 200, T0 + 1, o, RS_CAPTURE_MAX_ORDERS), 0);
    T_EQ(rs_captures_orders(cs, 100, T0 + 2, o, RS_CAPTURE_MAX_ORDERS), 1);
    T_EQ(o[0].id, id);
    T_EQ(o[0].rank, 2);
    T_EQ(o[0].seconds, 5);
    T_CHECK(strcmp(o[0].job, "job") == 0);
    rs_captures_get(cs, id, &info);
    T_EQ(info.state, RS_CAPTURES_DELIVERED);
    T_EQ(info.delivered_ns, T0 + 2);
    /* a lost reply: the next reply carries the order again */
    T_EQ(rs_captures_orders(cs, 100, T0 + 3, o, RS_CAPTURE_MAX_ORDERS), 1);
    struct rs_capture_report r = report(id, RS_CAPTURE_STARTED, T0 + 5, "");
    batch(cs, 100, "job", 2, &r, 1, id, T0 + 6);
    rs_captures_get(cs, id, &info);
    T_EQ(info.state, RS_CAPTURES_RUNNING);
    T_EQ(info.started_ns, T0 + 5);
    T_EQ(info.batches, 1);
    T_EQ(info.kernels, 3);
    T_EQ(info.stalls, 42);
    T_EQ(rs_captures_orders(cs, 100, T0 + 7, o, RS_CAPTURE_MAX_ORDERS), 0); /* started: no more */
    r = report(id, RS_CAPTURE_DONE, T0 + 5 * S, "ran 5 s");
    batch(cs, 100, "job", 2, &r, 1, id, T0 + 6 * S);
    rs_captures_get(cs, id, &info);
    T_EQ(info.state, RS_CAPTURES_DONE);
    T_EQ(info.ended_ns, T0 + 5 * S);
    T_EQ(info.batches, 2);
    T_CHECK(strcmp(info.message, "ran 5 s") == 0);
    T_CHECK(strcmp(info.who, "alice") == 0);
    /* a late "failed" does not reopen or change a finished capture */
    r = report(id, RS_CAPTURE_FAILED, T0 + 7 * S, "late");
    batch(cs, 100, "job", 2, &r, 1, 0, T0 + 7 * S);
    rs_captures_get(cs, id, &info);
    T_EQ(info.state, RS_CAPTURES_DONE);
    T_OK(rs_captures_latest_done(cs, "job", 2, RS_CAPTURE_KERNELS, T0, &info));
    T_EQ(info.id, id);
    T_EQ(rs_captures_latest_done(cs, "job", 2, RS_CAPTURE_PC_SAMPLING, T0, &info), -ENOENT);
    T_EQ(rs_captures_latest_done(cs, "job", 2, RS_CAPTURE_KERNELS, T0 + 100 * S, &info), -ENOENT);
    json_t *doc = rs_captures_json(cs, "job");
    T_CHECK(doc && json_array_size(json_object_get(doc, "captures")) == 1);
    T_CHECK(strcmp(json_string_value(json_object_get(
                       json_array_get(json_object_get(doc, "captures"), 0), "state")),
                   "done") == 0);
    json_decref(doc);
    rs_captures_free(cs);
}

static void
agent_restart_gets_the_order(void)
{
    rs_captures *cs = table(8);
    struct rs_capture_order o[RS_CAPTURE_MAX_ORDERS];
    uint32_t ranks[] = {0};
    uint64_t id;
    char why[256];

    batch(cs, 100, "job", 0, NULL, 0, 0, T0);
    T_OK(rs_captures_request(cs, "job", ranks, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, &id, why,
                             sizeof why));
    T_EQ(rs_captures_orders(cs, 100, T0, o, RS_CAPTURE_MAX_ORDERS), 1);
    /* the agent restarts (new id) before the collector saw the order */
    batch(cs, 101, "job", 0, NULL, 0, 0, T0 + S);
    T_EQ(rs_captures_orders(cs, 100, T0 + S, o, RS_CAPTURE_MAX_ORDERS), 0);
    T_EQ(rs_captures_orders(cs, 101, T0 + S, o, RS_CAPTURE_MAX_ORDERS), 1);
    T_EQ(o[0].id, id);
    rs_captures_free(cs);
}

static void
refusals(void)
{
    rs_captures *cs = table(3);
    uint32_t ranks[] = {0, 1, 2, 3}, dup[] = {1, 1};
    uint64_t ids[4];
    char why[256] = "";
    struct rs_captures_stats st;

    for (uint32_t r = 0; r < 4; r++)
        batch(cs, 100, "job", r, NULL, 0, 0, T0);
    uint32_t unknown[] = {9};
    T_EQ(rs_captures_request(cs, "job", unknown, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, ids, why,
                             sizeof why),
         -ENOENT);
    T_CHECK(strstr(why, "rank 9") != NULL);
    T_EQ(rs_captures_request(cs, "other", ranks, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, ids, why,
                             sizeof why),
         -ENOENT); /* another job's rank */
    T_EQ(rs_captures_request(cs, "job", dup, 2, RS_CAPTURE_KERNELS, 5, "a", "r", T0, ids, why,
                             sizeof why),
         -EINVAL);
    T_EQ(rs_captures_request(cs, "job", ranks, 1, RS_CAPTURE_KERNELS, 61, "a", "r", T0, ids, why,
                             sizeof why),
         -EINVAL);
    T_EQ(rs_captures_request(cs, "job", ranks, 1, 4, 5, "a", "r", T0, ids, why, sizeof why),
         -EINVAL);
    T_EQ(rs_captures_request(cs, "job", ranks, RS_CAPTURES_MAX_RANKS + 1, RS_CAPTURE_KERNELS, 5,
                             "a", "r", T0, ids, why, sizeof why),
         -EINVAL);
    /* the rate: 3 a minute; 4 at once is refused whole, 2 then 1 pass, then nothing */
    T_EQ(rs_captures_request(cs, "job", ranks, 4, RS_CAPTURE_KERNELS, 5, "a", "r", T0, ids, why,
                             sizeof why),
         RS_E_FULL);
    T_OK(rs_captures_request(cs, "job", ranks, 2, RS_CAPTURE_KERNELS, 5, "a", "r", T0, ids, why,
                             sizeof why));
    /* one open capture per rank */
    T_EQ(rs_captures_request(cs, "job", ranks + 1, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, ids, why,
                             sizeof why),
         -EBUSY);
    T_OK(rs_captures_request(cs, "job", ranks + 2, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, ids, why,
                             sizeof why));
    T_EQ(rs_captures_request(cs, "job", ranks + 3, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0 + S, ids,
                             why, sizeof why),
         RS_E_FULL);
    /* a minute later the rate is back */
    T_OK(rs_captures_request(cs, "job", ranks + 3, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0 + 61 * S,
                             ids, why, sizeof why));
    rs_captures_get_stats(cs, &st);
    T_EQ(st.refused_rate, 2);
    T_EQ(st.refused_busy, 1);
    T_EQ(st.requested, 4);
    rs_captures_free(cs);
}

static void
other_ranks_reports_ignored(void)
{
    rs_captures *cs = table(8);
    uint32_t ranks[] = {0};
    uint64_t id;
    char why[256];
    struct rs_capture_info info;
    struct rs_captures_stats st;

    batch(cs, 100, "job", 0, NULL, 0, 0, T0);
    batch(cs, 100, "job", 1, NULL, 0, 0, T0);
    T_OK(rs_captures_request(cs, "job", ranks, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, &id, why,
                             sizeof why));
    struct rs_capture_report r = report(id, RS_CAPTURE_DONE, T0, "forged");
    batch(cs, 100, "job", 1, &r, 1, id, T0);  /* rank 1 speaks for rank 0's capture */
    batch(cs, 100, "job2", 0, &r, 1, id, T0); /* and another job's rank 0 */
    rs_captures_get(cs, id, &info);
    T_EQ(info.state, RS_CAPTURES_REQUESTED);
    T_EQ(info.batches, 0);
    rs_captures_get_stats(cs, &st);
    T_EQ(st.reports_ignored, 4);
    rs_captures_free(cs);
}

static void
expiry(void)
{
    rs_captures *cs = table(8);
    struct rs_capture_order o[RS_CAPTURE_MAX_ORDERS];
    uint32_t r0[] = {0}, r1[] = {1}, r2[] = {2};
    uint64_t a, b, c;
    char why[256];
    struct rs_capture_info info;

    for (uint32_t r = 0; r < 3; r++)
        batch(cs, 100, "job", r, NULL, 0, 0, T0);
    T_OK(rs_captures_request(cs, "job", r0, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, &a, why,
                             sizeof why));
    T_OK(rs_captures_request(cs, "job", r1, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, &b, why,
                             sizeof why));
    T_OK(rs_captures_request(cs, "job", r2, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, &c, why,
                             sizeof why));
    /* a and b delivered, b started; c never delivered (no reply asked for agent 100's orders) */
    rs_captures_orders(cs, 100, T0, o, 2);
    struct rs_capture_report rep = report(b, RS_CAPTURE_STARTED, T0 + S, "");
    batch(cs, 100, "job", 1, &rep, 1, 0, T0 + S);
    rs_captures_expire(cs, T0 + 30 * S); /* not yet: the timeout is 30 s */
    rs_captures_get(cs, a, &info);
    T_EQ(info.state, RS_CAPTURES_DELIVERED);
    rs_captures_expire(cs, T0 + 31 * S);
    rs_captures_get(cs, a, &info);
    T_EQ(info.state, RS_CAPTURES_EXPIRED);
    T_CHECK(strstr(info.message, "collector never started") != NULL);
    rs_captures_get(cs, c, &info);
    T_EQ(info.state, RS_CAPTURES_EXPIRED);
    T_CHECK(strstr(info.message, "sent no batch") != NULL);
    rs_captures_get(cs, b, &info);
    T_EQ(info.state, RS_CAPTURES_RUNNING); /* 5 s + 30 s after its start */
    rs_captures_expire(cs, T0 + 37 * S);
    rs_captures_get(cs, b, &info);
    T_EQ(info.state, RS_CAPTURES_EXPIRED);
    T_CHECK(strstr(info.message, "never reported the end") != NULL);
    /* expired: the rank may be captured again */
    T_OK(rs_captures_request(cs, "job", r0, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0 + 61 * S, &a,
                             why, sizeof why));
    rs_captures_free(cs);
}

/* A hostile (or broken) collector's clock: started in 1970, done before it started, failed ten
 * years on — the server's clock is taken instead, and a capture never ends before it began. */
static void
hostile_report_times(void)
{
    rs_captures *cs = table(8);
    uint32_t r0[] = {0}, r1[] = {1};
    uint64_t a, b;
    char why[256];
    struct rs_capture_info info;

    batch(cs, 100, "job", 0, NULL, 0, 0, T0);
    batch(cs, 100, "job", 1, NULL, 0, 0, T0);
    T_OK(rs_captures_request(cs, "job", r0, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, &a, why,
                             sizeof why));
    T_OK(rs_captures_request(cs, "job", r1, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0, &b, why,
                             sizeof why));
    struct rs_capture_report r = report(a, RS_CAPTURE_STARTED, 1, "");
    batch(cs, 100, "job", 0, &r, 1, 0, T0 + S);
    r = report(a, RS_CAPTURE_DONE, T0 - 100 * S, "");
    batch(cs, 100, "job", 0, &r, 1, a, T0 + 3 * S);
    T_OK(rs_captures_get(cs, a, &info));
    T_EQ(info.state, RS_CAPTURES_DONE);
    T_EQ(info.started_ns, T0 + S);
    T_EQ(info.ended_ns, T0 + 3 * S);
    r = report(b, RS_CAPTURE_STARTED, T0 + 2 * S, ""); /* believed: within [asked, now] */
    batch(cs, 100, "job", 1, &r, 1, 0, T0 + 2 * S);
    r = report(b, RS_CAPTURE_FAILED, T0 + 3650 * 86400 * S, "no");
    batch(cs, 100, "job", 1, &r, 1, 0, T0 + 4 * S);
    T_OK(rs_captures_get(cs, b, &info));
    T_EQ(info.started_ns, T0 + 2 * S);
    T_EQ(info.ended_ns, T0 + 4 * S);
    T_EQ(rs_captures_open_by(cs, "a"), 0); /* both ended */
    rs_captures_free(cs);
}

/* Takes the table's changes: `want` of them. */
static void
take(rs_captures *cs, struct rs_captures_changes *ch, size_t want)
{
    T_OK(rs_captures_changes_take(cs, ch));
    T_EQ(ch->n, want);
}

/* What the store takes: each change once, again after a failed write, nothing while a take is out;
 * read back, an open capture expires saying why, and later ids are above it; a deleted job's
 * captures and routes go. */
static void
persistence(void)
{
    rs_captures *cs = table(8);
    struct rs_captures_changes ch;
    uint32_t r0[] = {0};
    uint64_t a;
    char why[256];
    struct rs_capture_info info;

    batch(cs, 100, "job", 0, NULL, 0, 0, T0);
    take(cs, &ch, 0); /* a route is no change */
    rs_captures_changes_done(cs, &ch, true);
    T_OK(rs_captures_request(cs, "job", r0, 1, RS_CAPTURE_KERNELS, 5, "alice", "why", T0, &a, why,
                             sizeof why));
    T_EQ(rs_captures_open_by(cs, "alice"), 1); /* (the evaluator's bound counts so) */
    T_EQ(rs_captures_open_by(cs, "evaluator"), 0);
    take(cs, &ch, 1);
    T_EQ(ch.v[0].c.id, a);
    T_CHECK(!ch.v[0].gone && strcmp(ch.v[0].c.who, "alice") == 0);
    struct rs_captures_changes second;
    T_EQ(rs_captures_changes_take(cs, &second), -EBUSY);
    rs_captures_changes_done(cs, &ch, false); /* the write failed: taken again */
    take(cs, &ch, 1);
    rs_captures_changes_done(cs, &ch, true);
    take(cs, &ch, 0);
    rs_captures_changes_done(cs, &ch, true);
    rs_captures_free(cs);

    /* a new server reads it back: open, so expired now, and a change to store */
    cs = table(8);
    info = (struct rs_capture_info){.id = a,
                                    .job = "job",
                                    .rank = 0,
                                    .kinds = RS_CAPTURE_KERNELS,
                                    .seconds = 5,
                                    .state = RS_CAPTURES_RUNNING,
                                    .requested_ns = T0,
                                    .started_ns = T0 + S,
                                    .who = "alice",
                                    .reason = "why"};
    T_OK(rs_captures_restore(cs, &info, T0 + 60 * S));
    T_EQ(rs_captures_restore(cs, &info, T0 + 60 * S), -EEXIST);
    info.id = 0;
    T_EQ(rs_captures_restore(cs, &info, T0 + 60 * S), -EINVAL);
    T_OK(rs_captures_get(cs, a, &info));
    T_EQ(info.state, RS_CAPTURES_EXPIRED);
    T_EQ(info.ended_ns, T0 + 60 * S);
    T_CHECK(strstr(info.message, "server restarted while it ran") != NULL);
    T_CHECK(strcmp(info.who, "alice") == 0);
    take(cs, &ch, 1);
    rs_captures_changes_done(cs, &ch, true);
    /* its id is not given again, whatever the clock says */
    uint64_t later;
    batch(cs, 100, "job", 0, NULL, 0, 0, T0);
    T_OK(rs_captures_request(cs, "job", r0, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0 + 61 * S,
                             &later, why, sizeof why));
    T_CHECK(later > a);
    /* the job is deleted: its captures and routes go */
    rs_captures_forget_job(cs, "job");
    T_EQ(rs_captures_get(cs, a, &info), -ENOENT);
    T_EQ(rs_captures_get(cs, later, &info), -ENOENT);
    T_EQ(rs_captures_request(cs, "job", r0, 1, RS_CAPTURE_KERNELS, 5, "a", "r", T0 + 62 * S, &a,
                             why, sizeof why),
         -ENOENT);
    rs_captures_free(cs);
}

/* An agent that counted the marked frames as they came (node-agent/aggregate.c): the capture
 * takes its count, not the batch's records (with summaries, kernel totals of other seconds); a
 * batch without the count (an older agent) is counted by its records. */
static void
counts_from_the_agent(void)
{
    rs_captures *cs = table(8);
    struct rs_capture_order o[RS_CAPTURE_MAX_ORDERS];
    struct rs_capture_info info;
    const uint64_t counted[2] = {1000, 7}, none[2] = {0, 0};

    batch(cs, 100, "job", 2, NULL, 0, 0, T0);
    uint64_t id = request_rank2(cs);
    T_EQ(rs_captures_orders(cs, 100, T0 + 2, o, RS_CAPTURE_MAX_ORDERS), 1);
    struct rs_capture_report r = report(id, RS_CAPTURE_STARTED, T0 + 5, "");
    batch_counted(cs, 100, "job", 2, &r, 1, id, T0 + 6, counted);
    batch_counted(cs, 100, "job", 2, NULL, 0, id, T0 + 7, none);
    rs_captures_get(cs, id, &info);
    T_EQ(info.batches, 2);
    T_EQ(info.kernels, 1000);
    T_EQ(info.stalls, 7);
    batch(cs, 100, "job", 2, NULL, 0, id, T0 + 8);
    rs_captures_get(cs, id, &info);
    T_EQ(info.kernels, 1003);
    T_EQ(info.stalls, 49);
    rs_captures_free(cs);
}

/* What an agent claims is bounded: a count over what a whole capture could trace is refused
 * (counted; the batch still counts as the capture's), one at the bound is taken, and counts
 * never wrap: an older agent's kernel totals of 2^63 each saturate rather than sum to 0. */
static void
hostile_counts(void)
{
    rs_captures *cs = table(8);
    struct rs_capture_order o[RS_CAPTURE_MAX_ORDERS];
    struct rs_capture_info info;
    struct rs_captures_stats st;
    const uint64_t huge[2] = {UINT64_MAX, 1}, stalls[2] = {1, RS_CAPTURES_CLAIM_STALLS_MAX + 1},
                   at_bound[2] = {RS_CAPTURES_CLAIM_KERNELS_MAX, RS_CAPTURES_CLAIM_STALLS_MAX};

    batch(cs, 100, "job", 2, NULL, 0, 0, T0);
    uint64_t id = request_rank2(cs);
    T_EQ(rs_captures_orders(cs, 100, T0 + 2, o, RS_CAPTURE_MAX_ORDERS), 1);
    struct rs_capture_report r = report(id, RS_CAPTURE_STARTED, T0 + 5, "");
    batch_counted(cs, 100, "job", 2, &r, 1, id, T0 + 6, huge);
    batch_counted(cs, 100, "job", 2, NULL, 0, id, T0 + 7, stalls);
    rs_captures_get(cs, id, &info);
    T_EQ(info.batches, 2);
    T_EQ(info.kernels, 0);
    T_EQ(info.stalls, 0);
    rs_captures_get_stats(cs, &st);
    T_EQ(st.counts_refused, 2);
    batch_counted(cs, 100, "job", 2, NULL, 0, id, T0 + 8, at_bound);
    rs_captures_get(cs, id, &info);
    T_EQ(info.kernels, RS_CAPTURES_CLAIM_KERNELS_MAX);
    T_EQ(info.stalls, RS_CAPTURES_CLAIM_STALLS_MAX);

    static const char *const names[] = {"k"};
    const struct rs_kernel_total tot = {T0, S, 0, (1ull << 63), 1, 1};
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job", 2, 8, "GPU-1"),
                               .strings = names,
                               .n_strings = 1,
                               .kernel_totals = &tot,
                               .n_kernel_totals = 1,
                               .capture_id = id};
    struct rs_agent_batch b = t_agent_batch(100, 1, &rb, 1);
    rs_captures_ingest(cs, 100, &b, T0 + 9);
    rs_captures_ingest(cs, 100, &b, T0 + 10);
    rs_captures_get(cs, id, &info);
    T_EQ(info.kernels, UINT64_MAX);
    rs_captures_free(cs);
}

int
main(void)
{
    T_RUN(hostile_counts);
    T_RUN(lifecycle);
    T_RUN(counts_from_the_agent);
    T_RUN(agent_restart_gets_the_order);
    T_RUN(refusals);
    T_RUN(other_ranks_reports_ignored);
    T_RUN(expiry);
    T_RUN(hostile_report_times);
    T_RUN(persistence);
    return T_DONE("server/captures");
}
