/* REST endpoints of the server (docs/openapi.yaml): /healthz, /metrics, /v1/import, /v1/jobs,
 * /v1/jobs/{job}/{ranks,skew,steps,stragglers,top,stalls,compare,hangs,heatmap}, the downloads
 * /v1/jobs/{job}/pprof[/stalls|/time] and /v1/jobs/{job}/trace?rank=R, DELETE /v1/jobs/{job}.
 * Storage reads run in the server's query pool (work_pool.h: bounded per client and in total,
 * each with a deadline), never on the loop and never on the threads that decode agents' batches;
 * the loop thread only routes and writes. The dashboard's files (/, /assets/...) are answered by
 * dashboard.c. */
#include "common/clock.h"
#include "common/error.h"
#include "common/hash.h"
#include "proto/wire.h"
#include "query/advice.h"
#include "query/compare.h"
#include "query/hangs.h"
#include "query/heatmap.h"
#include "query/jobs.h"
#include "query/pprof_export.h"
#include "query/skew.h"
#include "query/stalls.h"
#include "query/steps.h"
#include "query/gpus.h"
#include "query/stragglers.h"
#include "query/top.h"
#include "query/trace_export.h"
#include "server/answer_cache.h"
#include "server/capture_evidence.h"
#include "server/hang_evidence.h"
#include "server/job_delete.h"
#include "server/server_int.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum query_kind {
    Q_JOBS,
    Q_RANKS,
    Q_SKEW,
    Q_STEPS,
    Q_STRAGGLERS,
    Q_TOP,
    Q_STALLS,
    Q_COMPARE,
    Q_PPROF,
    Q_PPROF_STALLS,
    Q_PPROF_TIME,
    Q_TRACE,
    Q_GPUS,
    Q_ADVICE, /* issue 27: the advisor */
    Q_HANGS, /* issue 25: hang verdicts */
    Q_HEATMAP,
    Q_CAPTURES /* issue 25 item 4: captures on demand (captures.h) */
};

/* A query refused for load (429, 503) says when to come back. */
#define QUERY_RETRY_AFTER_S 1

/* GET /v1/jobs/{job}/trace: events per answer (one rank's document is built in memory). */
#define TRACE_MAX_EVENTS 500000

#define SAME (UINT64_MAX - 1) /* compare: side B's parameter defaults to side A's */
#define ALL_RANKS RS_PROFILE_ALL_RANKS

/* Parameters of a query (see the endpoint table); unused ones stay zero. */
struct query_params {
    uint64_t limit, since_ns, until_ns, rank, until_step;
    char with[RS_WIRE_MAX_JOB_LEN + 1]; /* compare: side B */
    uint64_t with_rank, with_since_ns, with_until_ns;
    uint64_t metric, columns; /* heatmap: enum rs_heatmap_metric, at most this many columns */
    uint64_t from_step;       /* heatmap: the window's first step (until_step its last) */
};

/* An answer-cache key: the kind, the caller's role, the job and the parsed parameters (zeroed
 * before parsing, padding included, so that equal requests have equal bytes). */
#define ANSWER_KEY_MAX (2 + RS_WIRE_MAX_JOB_LEN + 1 + sizeof(struct query_params))

struct query_work {
    struct rs_work req; /* in srv->queries (work_pool.h) */
    struct rs_server *srv;
    rs_http_conn *conn;
    enum query_kind kind;
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    struct query_params p;
    json_t *result;
    /* Q_STRAGGLERS: the verdicts the result shows, for the evaluator's history */
    struct rs_straggler_report stragglers;
    char *text;     /* the result encoded (rs_http_json_text) by the worker, not the loop */
    bool gzip;      /* the client accepts gzip: the worker compresses a 200's text too */
    bool prepared;  /* pre holds the text's hash and gzip form (rs_http_json_prepare) */
    struct rs_http_json_prepared pre;
    uint8_t *bytes; /* pprof, trace: the answer's body instead of a result */
    size_t n_bytes;
    const char *content_type;
    int rc;
    uint64_t deadline_ns; /* monotonic: the store's scans stop there (-ETIMEDOUT) */
    char side;            /* compare: the side that was not found */
    /* not found: what is missing, looked up after the query ('j' the job, 'r' the rank, 0 only
     * records in the range) */
    char missing;
    /* the scan of an answer-cache key (answer_cache.h): its answer goes to the cache and to the
     * requests that joined it; klen 0 when the answer is not cached */
    uint64_t gen, started_ns;
    size_t klen;
    unsigned char key[ANSWER_KEY_MAX];
    uint64_t reserved; /* of the answer budget while the scan runs (answer_budget.h) */
};

static bool light(enum query_kind k, const struct query_params *p);

static struct rs_profile_scope
scope_a(const struct query_work *q)
{
    return (struct rs_profile_scope){q->job, q->p.rank, false, q->p.since_ns, q->p.until_ns};
}

static struct rs_profile_scope
scope_b(const struct query_work *q)
{
    struct rs_profile_scope b = scope_a(q);
    if (q->p.with[0])
        b.job = q->p.with;
    if (q->p.with_rank != SAME)
        b.rank = q->p.with_rank;
    if (q->p.with_since_ns != SAME)
        b.since_ns = q->p.with_since_ns;
    if (q->p.with_until_ns != SAME)
        b.until_ns = q->p.with_until_ns;
    return b;
}

/* One rank's Chrome trace document into q->bytes. */
static int
trace_document(rs_store_read *r, struct query_work *q)
{
    struct rs_trace_export_options o = {q->job, q->p.since_ns, q->p.until_ns, NULL,
                                        TRACE_MAX_EVENTS};
    struct rs_trace_export_stats st;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;

    if (!f)
        return -ENOMEM;
    rc = rs_trace_export_rank(r, &o, (uint32_t)q->p.rank, f, &st);
    if (fclose(f) != 0 && rc == 0)
        rc = -ENOMEM;
    if (rc != 0) {
        free(buf);
        return rc;
    }
    q->bytes = (uint8_t *)buf;
    q->n_bytes = len;
    return 0;
}

/* After RS_E_NOT_FOUND: 'j' when the job (of the side not found) is unknown, 'r' when it has no
 * such rank, 0 when both exist and only the range is empty. */
static char
what_is_missing(rs_store_read *r, const struct query_work *q)
{
    struct rs_profile_scope s = q->side == 'b' ? scope_b(q) : scope_a(q);
    struct rs_rank_info *ranks = NULL;
    size_t n = 0;
    char missing = s.rank == ALL_RANKS ? 0 : 'r';

    if (rs_store_ranks_get(r, s.job, &ranks, &n) != 0)
        return 'j';
    for (size_t i = 0; i < n; i++)
        if (ranks[i].rank == s.rank)
            missing = 0;
    free(ranks);
    return missing;
}

/* Worker, after the scans: the CPU work left (a document's encoding; a pprof answer was encoded
 * by its export) is done here, not on the loop, and the deadline is checked after it too — the
 * scans check it, but an answer that took longer to encode than the query may take is a 504
 * like one that took too long to read (the client has stopped waiting). */
static void
finish_answer(struct query_work *q)
{
    if (q->srv->cfg->fault_query_delay_ms > 0 && q->rc == 0) {
        struct timespec ts = {(time_t)(q->srv->cfg->fault_query_delay_ms / 1000),
                              (long)(q->srv->cfg->fault_query_delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    /* the stragglers' and hangs' results are annotated on the loop (query_done): encoded there */
    if (q->rc == 0 && q->result && q->kind != Q_STRAGGLERS && q->kind != Q_HANGS) {
        q->text = rs_http_json_text(q->result);
        q->result = NULL;
        if (!q->text)
            q->rc = -ENOMEM;
    }
    /* the text's hash and gzip form too (rs_http_json_prepare): a 56 MB answer's took the loop
     * from every other connection meanwhile; the stragglers' and hangs' are encoded on the loop */
    if (q->rc == 0 && q->text)
        q->prepared = rs_http_json_prepare(q->text, strlen(q->text), q->gzip, NULL,
                                           q->deadline_ns, &q->pre) == 0;
    if (q->rc == 0 && q->deadline_ns && rs_clock_mono_ns() > q->deadline_ns) {
        q->rc = -ETIMEDOUT;
        json_decref(q->result);
        q->result = NULL;
        free(q->text);
        q->text = NULL;
        free(q->bytes);
        q->bytes = NULL;
    }
}

static void
run_query(struct rs_work *req)
{
    struct query_work *q = (struct query_work *)req;
    rs_store_read *r;

    if ((q->rc = rs_store_read_begin(q->srv->store, &r)) != 0)
        return;
    rs_store_read_set_deadline(r, q->deadline_ns);
    switch (q->kind) {
    case Q_JOBS:
        q->rc = rs_query_jobs(r, (size_t)q->p.limit, &q->result);
        break;
    case Q_RANKS:
        q->rc = rs_query_ranks(r, q->job, &q->result);
        break;
    case Q_HANGS:
        q->rc = rs_query_hangs(r, q->job, rs_clock_realtime_ns(), &q->result);
        break;
    case Q_CAPTURES: /* from memory (captures.h), bounded like every read */
        if (!(q->result = rs_captures_json(q->srv->captures, q->job)))
            q->rc = -ENOMEM;
        break;
    case Q_SKEW: {
        struct rs_skew_options o = {q->p.since_ns, q->p.until_ns};
        q->rc = rs_query_skew(r, q->job, &o, &q->result);
        break;
    }
    case Q_STEPS: { /* as text, one rank's tree at a time (steps.h rs_steps_text) */
        size_t len;
        q->rc = rs_query_steps_text(r, q->job, (size_t)q->p.limit, RS_HTTP_JSON_FLAGS, &q->text,
                                    &len);
        break;
    }
    case Q_ADVICE:
        q->rc = rs_query_advice_json(r, q->job, (size_t)q->p.limit, q->p.rank, &q->result);
        break;
    case Q_STRAGGLERS: {
        struct rs_straggler_options o;
        rs_straggler_options_default(&o);
        if (q->p.limit) { /* ?window=N: exactly N steps */
            o.window_steps = (size_t)q->p.limit;
            o.window_s = 0;
        } else { /* a short job (an imported trace) gets windows fitted to its steps */
            o.fit_short = true;
        }
        o.until_step = q->p.until_step;
        q->rc = rs_stragglers_evaluate_job(r, q->job, &o, &q->stragglers);
        /* verdicts without kernel evidence take it from a capture of their rank, if one ran,
         * as the evaluator's do (a failure there leaves the others as the rule gave them) */
        struct rs_capture_cause *cc = NULL;
        size_t n_cc = 0;
        if (q->rc == 0)
            (void)rs__server_capture_causes(q->srv->captures, r, q->job, &o, &q->stragglers, &cc,
                                            &n_cc);
        if (q->rc == 0 && !(q->result = rs_straggler_report_json(&q->stragglers)))
            q->rc = -ENOMEM;
        if (q->rc == 0 && rs__server_capture_causes_json(cc, n_cc, q->result) != 0) {
            json_decref(q->result);
            q->result = NULL;
            q->rc = -ENOMEM;
        }
        free(cc);
        break;
    }
    case Q_TOP: {
        struct rs_profile_scope a = scope_a(q);
        bool totals = false;
        q->rc = rs_query_top_sourced(r, &a, (size_t)q->p.limit, &q->result, &totals);
        if (totals)
            RS_COUNT(&q->srv->counters, top_from_totals);
        else
            RS_COUNT(&q->srv->counters, top_from_records);
        break;
    }
    case Q_STALLS: {
        struct rs_profile_scope a = scope_a(q);
        q->rc = rs_query_stalls(r, &a, (size_t)q->p.limit, &q->result);
        break;
    }
    case Q_COMPARE: {
        struct rs_profile_scope a = scope_a(q), b = scope_b(q);
        q->rc = rs_query_compare(r, &a, &b, (size_t)q->p.limit, &q->side, &q->result);
        break;
    }
    case Q_PPROF:
    case Q_PPROF_STALLS:
    case Q_PPROF_TIME: {
        struct rs_pprof_export_stats st;
        struct rs_pprof_export_options o = {q->job, q->p.rank, q->p.since_ns, q->p.until_ns,
                                            q->kind == Q_PPROF_STALLS ? RS_PPROF_STALLS
                                            : q->kind == Q_PPROF_TIME ? RS_PPROF_TIME
                                                                      : RS_PPROF_AUTO,
                                            q->deadline_ns};
        q->rc = rs_pprof_export(r, &o, &q->bytes, &q->n_bytes, &st);
        q->content_type = "application/octet-stream";
        break;
    }
    case Q_TRACE:
        q->rc = trace_document(r, q);
        q->content_type = "application/json";
        break;
    case Q_GPUS: /* limit: the default window's seconds */
        q->rc =
            rs_query_gpus(r, q->job, q->p.since_ns, q->p.until_ns, (double)q->p.limit, &q->result);
        break;
    case Q_HEATMAP:
        q->rc = rs_query_heatmap(r, q->job,
                                 &(struct rs_heatmap_window){q->p.from_step, q->p.until_step,
                                                             (size_t)q->p.limit},
                                 (int)q->p.metric, (size_t)q->p.columns, q->srv->heatmaps,
                                 &q->result);
        break;
    }
    if (q->rc == RS_E_NOT_FOUND) {
        rs_store_read_set_deadline(r, 0); /* an expired deadline must not read as "no job" */
        q->missing = what_is_missing(r, q);
    }
    rs_store_read_end(r);
    finish_answer(q);
#ifdef __GLIBC__
    /* A scan of every rank of a large job allocates and frees hundreds of MB (10,000 ranks'
     * steps, the answer's tree) in this thread's malloc arena, which glibc keeps for reuse: with
     * the scans moving between threads the heap under the soak's queries swung 400-1,560 MiB
     * with rising lows (docs/BENCHMARKS.md "Soak"). Give it back, as the evaluator does; a
     * light query's few MB are not worth the walk. */
    if (!light(q->kind, &q->p))
        malloc_trim(0);
#endif
}

/* A finished query's answer as (HTTP status, JSON text): a new string, NULL when out of memory
 * (answered 500). For every outcome but a download's bytes. */
static char *
answer_text(struct query_work *q, int status, int *http)
{
    char *text;

    *http = 200;
    if (status == 0 && q->rc == 0 && q->text) {
        text = q->text;
        q->text = NULL;
        return text;
    }
    if (status == 0 && q->rc == 0) { /* annotated on the loop: encoded here */
        text = rs_http_json_text(q->result);
        q->result = NULL;
        return text;
    }
    json_decref(q->result);
    q->result = NULL;
    if (q->rc == RS_E_TOO_BIG)
        return rs_http_error_text(*http = 413,
                                  "rank %llu of job '%s' has more than %u trace events in the "
                                  "range: narrow it with since_ns/until_ns",
                                  (unsigned long long)q->p.rank, q->job, TRACE_MAX_EVENTS);
    if (status != 0)
        return rs_http_error_text(*http = 503, "the server is stopping");
    if (q->rc == -ETIMEDOUT) {
        RS_COUNT(&q->srv->counters, queries_timed_out);
        return rs_http_error_text(*http = 504,
                                  "the query took longer than the server allows "
                                  "(query-timeout-ms %lld): narrow it with since_ns/until_ns or "
                                  "rank=",
                                  (long long)q->srv->cfg->query_timeout_ms);
    }
    *http = 404;
    if (q->rc == -ENODATA)
        return rs_http_error_text(404,
                                  "job '%s' has no PC-sampling stall samples in the range (turn "
                                  "PC sampling on for the job, or use /v1/jobs/%s/pprof/time)",
                                  q->job, q->job);
    if (q->rc == RS_E_NOT_FOUND) {
        struct rs_profile_scope s = q->side == 'b' ? scope_b(q) : scope_a(q);
        if (q->missing == 'j')
            return rs_http_error_text(404, "job '%s' not found (see GET /v1/jobs)", s.job);
        if (q->missing == 'r')
            return rs_http_error_text(404, "job '%s' has no rank %llu (see GET /v1/jobs/%s/ranks)",
                                      s.job, (unsigned long long)s.rank, s.job);
        if (s.rank == ALL_RANKS)
            return rs_http_error_text(404, "job '%s' has no records in the range", s.job);
        return rs_http_error_text(404, "rank %llu of job '%s' has no records in the range",
                                  (unsigned long long)s.rank, s.job);
    }
    return rs_http_error_text(*http = 500, "storage read failed: %s", rs_strerror(q->rc));
}

/* The answer budget's view now (answer_budget.h), shown as the answer_bytes gauge. */
static uint64_t
budget_sending(struct rs_server *srv, rs_http_conn *c)
{
    uint64_t sending = rs_http_response_bytes(c);
    atomic_store_explicit(&srv->counters.answer_bytes_now,
                          rs_answer_budget_in_flight(&srv->answer_budget, sending),
                          memory_order_relaxed);
    return sending;
}

/* 503 for an answer over the budget: the client is told when to come back. */
static void
budget_refuse(struct rs_server *srv, rs_http_conn *c)
{
    RS_COUNT(&srv->counters, answers_over_budget);
    rs_http_retry_after(c, QUERY_RETRY_AFTER_S);
    rs_http_respond_error(c, 503,
                          "answers being built and sent hold %llu MiB, the server's bound "
                          "(answer-budget-mb %lld): retry in %u s",
                          (unsigned long long)(rs_answer_budget_in_flight(
                                                   &srv->answer_budget, rs_http_response_bytes(c)) >>
                                               20),
                          (long long)srv->cfg->answer_budget_mb, QUERY_RETRY_AFTER_S);
}

/* Whether an answer of len bytes may be written to c now (else c was answered 503). */
static bool
budget_admits(struct rs_server *srv, rs_http_conn *c, size_t len)
{
    if (rs_answer_budget_admits(&srv->answer_budget, budget_sending(srv, c), len))
        return true;
    budget_refuse(srv, c);
    return false;
}

static void
query_done(struct rs_work *req, int status)
{
    struct query_work *q = (struct query_work *)req;

    if (status == 0 && q->rc == 0 && q->kind == Q_STRAGGLERS &&
        rs_evaluator_annotate(q->srv->evaluator, q->job, q->p.since_ns, &q->stragglers,
                              q->result) != 0)
        q->rc = -ENOMEM;
    if (status == 0 && q->rc == 0 && q->kind == Q_HANGS && /* the watch's raised and cleared */
        (json_object_set_new(q->result, "history",
                             rs_hang_watch_history_json(q->srv->hang_watch, q->job)) != 0 ||
         rs__server_hang_captures(q->srv->captures, q->job, q->result) != 0)) { /* hang_evidence.h */
        json_decref(q->result);
        q->result = NULL;
        q->rc = -ENOMEM;
    }
    /* the scan's reservation goes back; its answer is counted as written from now on */
    rs_answer_budget_built(&q->srv->answer_budget, q->kind, q->reserved,
                           q->bytes ? q->n_bytes : q->text ? strlen(q->text) : 0);
    q->reserved = 0;
    if (status == 0 && q->rc == 0 && q->bytes) {
        rs_http_respond(q->conn, 200, q->content_type, (const char *)q->bytes, q->n_bytes);
    } else if (status == 0 && q->rc == 0 && q->text && q->prepared) {
        size_t len = strlen(q->text);
        rs_http_respond_json_prepared(q->conn, q->text, len, &q->pre);
        if (q->klen)
            rs_answer_cache_complete(q->srv->answers, q->key, q->klen, q->gen, q->started_ns, 200,
                                     q->text, len, &q->pre);
    } else {
        int http;
        char *text = answer_text(q, status, &http);
        rs_http_respond_json_text(q->conn, http, text);
        /* the requests that joined this scan get the same answer; a 200 is kept for the next */
        if (q->klen)
            rs_answer_cache_complete(q->srv->answers, q->key, q->klen, q->gen, q->started_ns,
                                     http, text, text ? strlen(text) : 0, NULL);
        free(text);
    }
    free(q->bytes);
    free(q->text);
    free(q->pre.gz);
    rs_straggler_report_fini(&q->stragglers);
    (void)budget_sending(q->srv, q->conn);
    free(q);
}

/* A request that joined a scan in flight for the same answer (answer_cache.h). */
struct joined {
    struct rs_answer_waiter w; /* first */
    rs_http_conn *conn;
    struct rs_server *srv;
};

static void
joined_done(struct rs_answer_waiter *w, int status, const char *text, size_t len,
            const void *prepared)
{
    struct joined *j = (struct joined *)w;

    /* each joiner writes a copy of its own: within the answer budget */
    if (status == 200 && text && !budget_admits(j->srv, j->conn, len)) {
        free(j);
        return;
    }
    /* the leader's hash and gzip form, when its worker made them: nothing more on the loop (a
     * joiner that accepts gzip gets the plain text when the leader's client did not ask) */
    if (status == 200 && text && prepared)
        rs_http_respond_json_prepared(j->conn, text, len, prepared);
    else
        rs_http_respond_json_text(j->conn, status, text);
    free(j);
}

/* Whether a kind's answer is kept by the answer cache: JSON answers that depend only on the
 * store and on the evaluator's and the captures' state (answers_generation). Not the hangs (the
 * hang watch's history in memory) nor the captures' list (in memory, changes without a commit),
 * nor the downloads (bytes, built per request). */
static bool
cacheable(enum query_kind k)
{
    return k != Q_HANGS && k != Q_CAPTURES && k != Q_TRACE && k != Q_PPROF &&
           k != Q_PPROF_STALLS && k != Q_PPROF_TIME;
}

/* Whether a query reads only a bounded part of a job (its list, one rank, the jobs' list) and so
 * runs in the light lane, never queued behind scans of every rank of a large job. */
static bool
light(enum query_kind k, const struct query_params *p)
{
    switch (k) {
    case Q_JOBS:
    case Q_RANKS:
    case Q_CAPTURES:
        return true;
    case Q_TOP:
    case Q_STALLS:
    case Q_PPROF:
    case Q_PPROF_STALLS:
    case Q_PPROF_TIME:
        return p->rank != ALL_RANKS;
    case Q_COMPARE: /* both sides one rank (with_rank SAME: side A's) */
        return p->rank != ALL_RANKS && p->with_rank != ALL_RANKS;
    default:
        return false;
    }
}

/* A number that changes whenever a cached answer may change: the commits that wrote the job
 * (rs_writer_job_generation: its batches and the task steps that named it, or any task step that
 * named none — commits to other jobs leave its answers valid), or for the jobs' list any commit —
 * and a step's "settled" state, which turns RS_STEP_SETTLE_NS after its last data arrived
 * without a commit: answers computed less than that after the job's last commit are keyed apart
 * from those computed later. The straggler answers also show the evaluator's verdicts
 * (annotated) and the captures' evidence: for them, the evaluator's job evaluations and verdict
 * changes and the captures' state changes count too (of every job: the evaluator's counters are
 * not per job). Loop thread. */
static uint64_t
answers_generation(struct rs_server *srv, enum query_kind kind, const char *job, uint64_t now_ns)
{
    uint64_t g, last = 0;

    if (kind == Q_JOBS) {
        g = rs_writer_generation(srv->writer);
        uint64_t batches = RS_COUNT_GET(&srv->counters, batches_committed);
        if (batches != srv->answers_batches) {
            srv->answers_batches = batches;
            srv->answers_batches_seen_ns = now_ns;
        }
        last = srv->answers_batches_seen_ns;
    } else {
        g = rs_writer_job_generation(srv->writer, job, &last);
    }
    g = g << 1 | (last <= now_ns && now_ns - last >= RS_STEP_SETTLE_NS);
    if (kind != Q_STRAGGLERS)
        return g;
    struct rs_evaluator_stats ev;
    struct rs_captures_stats cs;
    rs_evaluator_get_stats(srv->evaluator, &ev);
    rs_captures_get_stats(srv->captures, &cs);
    uint64_t parts[] = {g,         ev.jobs_evaluated, ev.raised, ev.cleared, cs.requested,
                        cs.delivered, cs.started,    cs.done,   cs.failed,  cs.expired};
    return rs_hash_fnv1a64(parts, sizeof parts);
}

/* The query's answer-cache key into q->key; 0 when not cached. */
static size_t
answer_key(struct query_work *q, enum rs_auth_role role)
{
    size_t n = strlen(q->job);

    if (!cacheable(q->kind) || !q->srv->answers)
        return 0;
    q->key[0] = (unsigned char)q->kind;
    q->key[1] = (unsigned char)role;
    memcpy(q->key + 2, q->job, n + 1);
    memcpy(q->key + 2 + n + 1, &q->p, sizeof q->p);
    return 2 + n + 1 + sizeof q->p;
}

static void
start_query(struct rs_server *srv, rs_http_conn *c, enum query_kind kind, const char *job,
            const struct query_params *p, enum rs_auth_role role)
{
    struct query_work *q = calloc(1, sizeof *q);
    struct joined *j = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = 0;

    if (!q) {
        rs_http_respond_error(c, 500, "out of memory");
        return;
    }
    q->srv = srv;
    q->conn = c;
    q->kind = kind;
    q->p = *p;
    snprintf(q->job, sizeof q->job, "%s", job ? job : "");
    q->req.work = run_query;
    q->req.done = query_done;
    q->gzip = rs_http_conn_accepts_gzip(c);
    q->started_ns = rs_clock_mono_ns();
    q->deadline_ns = q->started_ns + (uint64_t)srv->cfg->query_timeout_ms * 1000000ull;
    if ((q->klen = answer_key(q, role)) > 0) {
        q->gen = answers_generation(srv, kind, q->job, q->started_ns);
        if (!(j = malloc(sizeof *j)))
            rc = -ENOMEM;
        else {
            *j = (struct joined){{joined_done, NULL}, c, srv};
            rc = rs_answer_cache_lookup(srv->answers, q->key, q->klen, q->gen, q->started_ns,
                                        &j->w, &text, &len);
        }
        if (rc == RS_ANSWER_JOINED) { /* j answers when the scan in flight ends */
            free(q);
            return;
        }
        free(j);
        if (rc == RS_ANSWER_HIT) {
            if (budget_admits(srv, c, len))
                rs_http_respond_json_text(c, 200, text);
            free(text);
            free(q);
            return;
        }
        if (rc != RS_ANSWER_MISS) /* no memory to track it: answered uncached */
            q->klen = 0;
    }
    /* a scan of every rank reserves what its route's answers take (light ones are small) */
    if (!light(kind, p) &&
        !(q->reserved = rs_answer_budget_reserve(&srv->answer_budget, budget_sending(srv, c),
                                                 (unsigned)kind))) {
        budget_refuse(srv, c);
        if (q->klen) /* (nobody can have joined yet: loop thread) */
            rs_answer_cache_complete(srv->answers, q->key, q->klen, q->gen, q->started_ns, 503,
                                     NULL, 0, NULL);
        free(q);
        return;
    }
    rs_work_pool *pool = light(kind, p) && srv->queries_light ? srv->queries_light : srv->queries;
    if (rs__server_query_submit_to(srv, pool, c, &q->req) != 0) {
        rs_answer_budget_built(&srv->answer_budget, kind, q->reserved, 0);
        /* refused at the door and answered: nobody can have joined in between (loop thread) */
        if (q->klen)
            rs_answer_cache_complete(srv->answers, q->key, q->klen, q->gen, q->started_ns, 503,
                                     NULL, 0, NULL);
        free(q);
    }
}

int
rs__server_query_submit(struct rs_server *srv, rs_http_conn *c, struct rs_work *w)
{
    return rs__server_query_submit_to(srv, srv->queries, c, w);
}

int
rs__server_query_submit_to(struct rs_server *srv, rs_work_pool *pool, rs_http_conn *c,
                           struct rs_work *w)
{
    w->key = rs_http_conn_peer_key(c);
    int rc = rs_work_pool_submit(pool, w);
    if (rc == 0)
        return 0;
    RS_COUNT(&srv->counters, queries_refused);
    rs_http_retry_after(c, QUERY_RETRY_AFTER_S);
    if (rc == -EBUSY)
        rs_http_respond_error(c, 429,
                              "this client has %lld queries running or waiting already "
                              "(query-max-per-client): wait for their answers",
                              (long long)srv->cfg->query_max_per_client);
    else if (rc == RS_E_FULL)
        rs_http_respond_error(c, 503,
                              "the server has %lld queries running or waiting already "
                              "(query-max): retry in %u s",
                              (long long)srv->cfg->query_max, QUERY_RETRY_AFTER_S);
    else
        rs_http_respond_error(c, 503, "the server is stopping");
    return rc;
}

/* DELETE /v1/jobs/{job}: answered when the deletion (server/job_delete.h) is over; 10,000
 * entries per transaction. */
#define DELETE_CHUNK 10000

struct delete_work {
    rs_http_conn *conn;
    struct rs_auth_who who;
};

static void
job_deleted(void *arg, const char *job, int status, uint64_t entries) /* on the loop */
{
    struct delete_work *d = arg;
    rs_http_conn *c = d->conn;

    rs__server_audit(&d->who, "delete", "job=%s entries=%llu result=%s", job,
                     (unsigned long long)entries,
                     status == 0                ? "deleted"
                     : status == RS_E_NOT_FOUND ? "not-found"
                                                : "failed");
    free(d);
    if (status == 0)
        rs_http_respond_json(c, 200,
                             json_pack("{s:s, s:b, s:I}", "job", job, "deleted", 1,
                                       "entries_deleted", (json_int_t)entries));
    else if (status == RS_E_NOT_FOUND)
        rs_http_respond_error(c, 404, "job '%s' not found (see GET /v1/jobs)", job);
    else
        rs_http_respond_error(c, 503, "deleting job '%s' failed: %s (%llu entries deleted)", job,
                              rs_strerror(status), (unsigned long long)entries);
}

static void
start_delete(struct rs_server *srv, rs_http_conn *c, const char *job, const struct rs_auth_who *who)
{
    struct delete_work *d = malloc(sizeof *d);
    int rc = -ENOMEM;

    if (d) {
        *d = (struct delete_work){c, *who};
        if ((rc = rs__server_delete_job(srv, job, DELETE_CHUNK, job_deleted, d)) != 0)
            free(d);
    }
    if (rc == -ENOMEM)
        rs_http_respond_error(c, 500, "out of memory");
    else if (rc != 0)
        rs_http_respond_error(c, 503, "the server is stopping");
}

static json_t *
health_json(struct rs_server *srv)
{
    struct rs_evaluator_stats ev;
    json_t *counters = json_object(), *doc;

    for (size_t i = 0; counters && i < rs_counter_info_count; i++)
        json_object_set_new(
            counters, rs_counter_infos[i].name,
            json_integer((json_int_t)rs_counter_value(&srv->counters, &rs_counter_infos[i])));
    rs_evaluator_get_stats(srv->evaluator, &ev);
    doc = json_pack(
        "{s:s, s:s, s:f, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}}", "status", "ok",
        "version", RS_VERSION, "uptime_s", (double)(rs_clock_mono_ns() - srv->start_ns) / 1e9,
        "counters", counters, "evaluator", "evaluations", (json_int_t)ev.evaluations,
        "jobs_evaluated", (json_int_t)ev.jobs_evaluated, "stragglers_raised", (json_int_t)ev.raised,
        "stragglers_cleared", (json_int_t)ev.cleared, "stragglers_active",
        (json_int_t)ev.active_stragglers, "errors", (json_int_t)ev.errors, "last_duration_ms",
        (json_int_t)ev.last_duration_ms, "catchup_steps", (json_int_t)ev.catchup_steps);
    /* auth: "tokens", "off" (loopback, no token file) or "insecure" (beyond loopback without) */
    const char *auth = rs__server_auth_mode(srv->auth);
    json_object_set_new(doc, "auth", json_string(auth));
    json_object_set_new(doc, "insecure", json_boolean(strcmp(auth, "insecure") == 0));
    return doc;
}

static int
expect_get(rs_http_conn *c, const struct rs_http_request *req)
{
    if (strcmp(req->method, "GET") == 0)
        return 0;
    rs_http_respond_error(c, 405, "%s is not allowed on %s (use GET)", req->method, req->path);
    return -1;
}

/* Reads "{job}" from "/v1/jobs/{job}<suffix>" into name; answers 400 and returns -1 when the
 * name is invalid, returns 1 when the path is not of that form. */
static int
job_in_path(rs_http_conn *c, const char *path, const char *suffix, char *name, size_t len)
{
    static const char prefix[] = "/v1/jobs/";
    size_t plen = sizeof prefix - 1, slen = strlen(suffix), n;

    if (strncmp(path, prefix, plen) != 0 || strlen(path) < plen + slen)
        return 1;
    n = strlen(path) - plen - slen;
    if (strcmp(path + plen + n, suffix) != 0 || memchr(path + plen, '/', n))
        return 1;
    if (n == 0 || n >= len) {
        rs_http_respond_error(c, 400, "job name must be 1 to %u bytes", RS_WIRE_MAX_JOB_LEN);
        return -1;
    }
    snprintf(name, len, "%.*s", (int)n, path + plen);
    if (!rs_wire_job_valid(name)) {
        rs_http_respond_error(c, 400, "invalid job name '%s' (allowed: letters, digits, ._:@+=-)",
                              name);
        return -1;
    }
    return 0;
}

static int
expect_no_query(rs_http_conn *c, const struct rs_http_request *req)
{
    if (req->query[0] == '\0')
        return 0;
    rs_http_respond_error(c, 400, "%s takes no parameters", req->path);
    return -1;
}

/* An endpoint's query parameters: each is an unsigned integer within [min, max], a job name, or a
 * heatmap metric's name (stored as its number), at `offset` in struct query_params; `def` applies
 * when it is absent. */
enum param_type { P_UINT, P_JOB, P_METRIC };

struct param {
    const char *name;
    enum param_type type;
    size_t offset;
    uint64_t def, min, max;
};

#define MAX_PARAMS 10
#define UINT(name, field, def, min, max)                                                           \
    {                                                                                              \
        name, P_UINT, offsetof(struct query_params, field), def, min, max                          \
    }
#define JOB(name, field)                                                                           \
    {                                                                                              \
        name, P_JOB, offsetof(struct query_params, field), 0, 0, 0                                 \
    }
#define METRIC(name, field)                                                                        \
    {                                                                                              \
        name, P_METRIC, offsetof(struct query_params, field), RS_HEATMAP_STEP, 0, 0                \
    }
#define MAX_RANK 16777215u
#define RANGE(prefix)                                                                              \
    UINT(prefix "since_ns", since_ns, 0, 0, UINT64_MAX - 2),                                       \
        UINT(prefix "until_ns", until_ns, 0, 0, UINT64_MAX - 2)

/* GET /v1/jobs/{job}<suffix> (and /v1/jobs itself): endpoint -> query, table-driven. */
struct job_endpoint {
    const char *suffix;
    enum query_kind kind;
    struct param params[MAX_PARAMS]; /* ends at the first without a name */
};

static const struct job_endpoint jobs_endpoint = {"", Q_JOBS, {UINT("limit", limit, 0, 1, 100000)}};

static const struct job_endpoint job_endpoints[] = {
    {"/ranks", Q_RANKS, {{0}}},
    {"/stragglers",
     Q_STRAGGLERS,
     {UINT("window", limit, 0, 4, 10000), UINT("since_ns", since_ns, 0, 0, UINT64_MAX),
      UINT("until_step", until_step, UINT64_MAX, 0, UINT64_MAX - 1)}},
    {"/steps", Q_STEPS, {UINT("last", limit, 30, 1, 100000)}},
    {"/skew", Q_SKEW, {RANGE("")}},
    {"/top",
     Q_TOP,
     {UINT("rank", rank, ALL_RANKS, 0, MAX_RANK), RANGE(""), UINT("limit", limit, 20, 1, 100000)}},
    {"/stalls",
     Q_STALLS,
     {UINT("rank", rank, ALL_RANKS, 0, MAX_RANK), RANGE(""), UINT("limit", limit, 10, 1, 100000)}},
    {"/compare",
     Q_COMPARE,
     {UINT("rank", rank, ALL_RANKS, 0, MAX_RANK), RANGE(""), JOB("with", with),
      UINT("with_rank", with_rank, SAME, 0, MAX_RANK),
      UINT("with_since_ns", with_since_ns, SAME, 0, UINT64_MAX - 2),
      UINT("with_until_ns", with_until_ns, SAME, 0, UINT64_MAX - 2),
      UINT("limit", limit, 20, 1, 100000)}},
    {"/pprof", Q_PPROF, {UINT("rank", rank, ALL_RANKS, 0, MAX_RANK), RANGE("")}},
    {"/pprof/stalls", Q_PPROF_STALLS, {UINT("rank", rank, ALL_RANKS, 0, MAX_RANK), RANGE("")}},
    {"/pprof/time", Q_PPROF_TIME, {UINT("rank", rank, ALL_RANKS, 0, MAX_RANK), RANGE("")}},
    {"/trace", Q_TRACE, {UINT("rank", rank, ALL_RANKS, 0, MAX_RANK), RANGE("")}},
    {"/gpus", Q_GPUS, {RANGE(""), UINT("window_s", limit, 300, 1, 86400 * 365)}},
    {"/advice", Q_ADVICE,
     {UINT("last", limit, RS_ADVICE_STEPS, 1, 1000), UINT("rank", rank, ALL_RANKS, 0, MAX_RANK)}},
    {"/hangs", Q_HANGS, {{0}}},
    {"/captures", Q_CAPTURES, {{0}}},
    {"/heatmap",
     Q_HEATMAP,
     {METRIC("metric", metric), UINT("columns", columns, 200, 1, 2000),
      UINT("last", limit, 0, 1, 100000), /* absent: the whole window (query/heatmap.h) */
      UINT("from_step", from_step, 0, 0, UINT64_MAX - 1),
      UINT("to_step", until_step, UINT64_MAX, 0, UINT64_MAX - 1)}},
};

/* Parses "a=1&b=x" against e->params into *p (defaults first); answers 400 and returns -1 on an
 * unknown parameter or a bad value. */
static int
parse_params(rs_http_conn *c, const char *query, const struct job_endpoint *e,
             struct query_params *p)
{
    char buf[1024], *save = NULL, *pair;
    const struct param *d;

    for (d = e->params; d->name; d++)
        if (d->type == P_UINT || d->type == P_METRIC)
            *(uint64_t *)((char *)p + d->offset) = d->def;
    if (strlen(query) >= sizeof buf) {
        rs_http_respond_error(c, 400, "query string too long");
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", query);
    for (pair = strtok_r(buf, "&", &save); pair; pair = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(pair, '='), *end, *val = eq ? eq + 1 : "";
        if (eq)
            *eq = '\0';
        for (d = e->params; d->name && strcmp(pair, d->name) != 0; d++)
            ;
        if (!d->name) {
            rs_http_respond_error(c, 400, "unknown parameter '%s'", pair);
            return -1;
        }
        if (d->type == P_JOB) {
            if (!rs_wire_job_valid(val)) {
                rs_http_respond_error(c, 400, "%s: '%s' is not a job name", pair, val);
                return -1;
            }
            snprintf((char *)p + d->offset, RS_WIRE_MAX_JOB_LEN + 1, "%s", val);
            continue;
        }
        if (d->type == P_METRIC) {
            int m = rs_heatmap_metric_of(val);
            if (m < 0) {
                rs_http_respond_error(c, 400,
                                      "%s: '%s' is not one of step_ms, compute_ms, comm_ms, "
                                      "exposed_comm_ms, idle_ms, host_gap_ms",
                                      pair, val);
                return -1;
            }
            *(uint64_t *)((char *)p + d->offset) = (uint64_t)m;
            continue;
        }
        errno = 0;
        unsigned long long v = strtoull(val, &end, 10);
        if (val[0] == '\0' || *end != '\0' || val[0] == '-' || errno == ERANGE) {
            rs_http_respond_error(c, 400, "%s must be an unsigned integer", pair);
            return -1;
        }
        if (v < d->min || v > d->max) {
            rs_http_respond_error(c, 400, "%s must be from %llu to %llu", pair,
                                  (unsigned long long)d->min, (unsigned long long)d->max);
            return -1;
        }
        *(uint64_t *)((char *)p + d->offset) = v;
    }
    return 0;
}

static void
start_job_endpoint(struct rs_server *srv, rs_http_conn *c, const struct rs_http_request *req,
                   const struct job_endpoint *e, const char *job, enum rs_auth_role role)
{
    struct query_params p;

    memset(&p, 0, sizeof p);
    if (parse_params(c, req->query, e, &p) != 0)
        return;
    if (e->kind == Q_COMPARE && !p.with[0] && p.with_rank == SAME && p.with_since_ns == SAME &&
        p.with_until_ns == SAME) {
        rs_http_respond_error(c, 400,
                              "compare needs a second side: with=JOB, with_rank=R, or "
                              "with_since_ns=/with_until_ns= (see docs/openapi.yaml)");
        return;
    }
    if (e->kind == Q_GPUS && (p.until_ns != 0) != (p.since_ns != 0 || p.until_ns != 0)) {
        rs_http_respond_error(c, 400, "gpus: since_ns needs until_ns (or neither: window_s)");
        return;
    }
    if (e->kind == Q_GPUS && p.until_ns != 0 && p.until_ns <= p.since_ns) {
        rs_http_respond_error(c, 400, "gpus: until_ns must be after since_ns");
        return;
    }
    if (e->kind == Q_HEATMAP && p.from_step > p.until_step) {
        rs_http_respond_error(c, 400, "heatmap: from_step must not be after to_step");
        return;
    }
    if (e->kind == Q_TRACE && p.rank == ALL_RANKS) {
        rs_http_respond_error(c, 400,
                              "trace needs rank=R: one Chrome trace document per rank (see "
                              "/v1/jobs/%s/ranks)",
                              job);
        return;
    }
    start_query(srv, c, e->kind, job, &p, role);
}

void
rs__server_route(void *server, rs_http_conn *c, const struct rs_http_request *req)
{
    struct rs_server *srv = server;
    const char *path = req->path;

    struct rs_auth_who who;

    if (rs__server_browser_refused(srv, c, req) ||
        rs__server_auth_refused(srv->auth, &srv->counters, c, req, &who))
        return;
    if (rs__server_dashboard(c, req))
        return;
    if (strcmp(path, "/healthz") == 0) {
        if (expect_get(c, req) == 0 && expect_no_query(c, req) == 0)
            rs_http_respond_json(c, 200, health_json(srv));
        return;
    }
    if (strcmp(path, "/metrics") == 0) {
        if (expect_get(c, req) == 0 && expect_no_query(c, req) == 0)
            rs__server_metrics(srv, c);
        return;
    }
    if (strcmp(path, "/v1/gpus") == 0 || strcmp(path, "/v1/hosts") == 0) {
        if (expect_get(c, req) == 0 && expect_no_query(c, req) == 0)
            rs__server_fleet(srv, c, path[4] == 'h');
        return;
    }
    if (strcmp(path, "/v1/import") == 0) {
        if (expect_no_query(c, req) == 0)
            rs__server_import(srv, c, req, &who);
        return;
    }
    if (strcmp(path, "/v1/jobs") == 0) {
        if (expect_get(c, req) == 0)
            start_job_endpoint(srv, c, req, &jobs_endpoint, NULL, who.role);
        return;
    }
    char name[RS_WIRE_MAX_JOB_LEN + 1];
    int rc;
    /* captures on demand (capture_routes.c) */
    if ((rc = job_in_path(c, path, "/capture", name, sizeof name)) <= 0) {
        if (rc < 0 || expect_no_query(c, req) != 0)
            return;
        if (strcmp(req->method, "POST") != 0)
            rs_http_respond_error(c, 405, "%s is not allowed on %s (use POST)", req->method, path);
        else
            rs__server_capture_post(srv, c, req, name, &who);
        return;
    }
    for (size_t i = 0; i < sizeof job_endpoints / sizeof job_endpoints[0]; i++) {
        const struct job_endpoint *e = &job_endpoints[i];
        if ((rc = job_in_path(c, path, e->suffix, name, sizeof name)) > 0)
            continue;
        if (rc == 0 && expect_get(c, req) == 0)
            start_job_endpoint(srv, c, req, e, name, who.role);
        return;
    }
    if ((rc = job_in_path(c, path, "", name, sizeof name)) <= 0) {
        if (rc < 0)
            return;
        if (strcmp(req->method, "DELETE") != 0)
            rs_http_respond_error(c, 405, "%s is not allowed on %s (use DELETE)", req->method,
                                  path);
        else if (expect_no_query(c, req) == 0)
            start_delete(srv, c, name, &who);
        return;
    }
    rs_http_respond_error(c, 404, "no endpoint %s (see docs/openapi.yaml)", path);
}
