/* Server counters: one struct of atomics, written by the loop, NNG and writer threads, read by
 * /healthz and /metrics through one table (names, help, kind). Monotonic since server start
 * unless named *_now. */
#ifndef RS_SERVER_COUNTERS_H
#define RS_SERVER_COUNTERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rs_counters {
    _Atomic uint64_t batches_received;  /* requests taken off the NNG socket */
    _Atomic uint64_t batches_committed; /* new batches committed to storage */
    _Atomic uint64_t batches_duplicate; /* resent batches acknowledged without a write */
    _Atomic uint64_t batches_rejected;  /* malformed / unsupported: refused with an error */
    _Atomic uint64_t batches_retry;     /* could not commit now (storage full, queue full) */
    _Atomic uint64_t rank_batches;      /* rank batches inside committed batches */
    _Atomic uint64_t commits;           /* LMDB write transactions committed */
    _Atomic uint64_t commit_errors;
    _Atomic uint64_t replies_failed; /* reply could not be sent (agent gone): it will resend */
    _Atomic uint64_t http_requests;
    _Atomic uint64_t http_errors;   /* responses with status >= 400 */
    _Atomic uint64_t http_timeouts; /* connections closed by a header/idle timeout */
    _Atomic uint64_t http_connections_now;
    _Atomic uint64_t writer_queue_now;
    /* Wall time the writer thread spent on batches (building, committing and syncing their
     * transactions) and on tasks (writer.h): their sum's growth per second is how busy the store's
     * one writer is — near 1 s/s it is the bottleneck, and whatever else it does (tasks) makes
     * ingest fall behind. */
    _Atomic uint64_t writer_batches_ns;
    _Atomic uint64_t writer_tasks_ns;
    _Atomic uint64_t jobs_expired;            /* deleted by retention */
    _Atomic uint64_t reader_slots_freed;      /* left by dead processes, cleared */
    _Atomic uint64_t step_summaries;          /* settled step metrics stored by the evaluator */
    _Atomic uint64_t storage_full;            /* commits refused because the map was full */
    _Atomic uint64_t jobs_deleted_for_space;  /* by retention when full or over the budget */
    _Atomic uint64_t records_rolled_up;       /* raw kernel/memcpy records, now window totals */
    _Atomic uint64_t agent_windows_coarsened; /* agent windows merged into rollup windows */
    /* resources (issue 23 §3) */
    _Atomic uint64_t queries_refused;       /* 429/503: over query-max(-per-client) */
    _Atomic uint64_t queries_timed_out;     /* 504: past query-timeout-ms */
    _Atomic uint64_t http_refused_peer;     /* connections over http-max-connections-per-peer */
    _Atomic uint64_t http_evicted;          /* idle or slow connections closed for a new one */
    _Atomic uint64_t http_accept_errors;    /* out of descriptors (EMFILE, near the limit) */
    _Atomic uint64_t http_body_budget_full; /* requests refused: bodies over the total budget */
    _Atomic uint64_t agent_pipes_refused;   /* NNG pipes closed over the per-peer/total caps */
    _Atomic uint64_t agent_pipes_idle_closed; /* NNG pipes closed by agent-idle-timeout-s */
    _Atomic uint64_t agent_pipes_now;
    _Atomic uint64_t writer_queue_bytes_now; /* request bytes of the batches in writer_queue */
    _Atomic uint64_t batches_unauthorized;    /* agent batches without a valid ingest token */
    _Atomic uint64_t http_unauthorized;       /* HTTP requests refused 401 or 403 by auth.c */
    /* HTTPS (tls_stream.h): handshakes completed; failed (bad client hello, unknown CA, wrong
     * version, garbage); plain HTTP sent to the HTTPS port; handshakes that stalled past the
     * request timeout. Reloads of the TLS files (tls_reload.h), failed ones kept the old files. */
    _Atomic uint64_t http_tls_handshakes;
    _Atomic uint64_t http_tls_failures;
    _Atomic uint64_t http_tls_plaintext;
    _Atomic uint64_t http_tls_timeouts;
    _Atomic uint64_t tls_reloads;
    _Atomic uint64_t tls_reload_failures;
    /* bytes of agent requests decoded in full: only after their token was accepted (ingest.c) */
    _Atomic uint64_t batch_decoded_bytes;
    _Atomic uint64_t agent_pipes_evicted; /* idle NNG pipes closed for a new one at the bound */
    /* answers whose cost does not grow with job age (issue 23, h-service) */
    _Atomic uint64_t top_from_totals; /* whole-job top answered from the job's running totals */
    _Atomic uint64_t top_from_records; /* top answered by a scan of records */
    _Atomic uint64_t answers_over_budget; /* 503: answer-budget-mb of answers in flight */
    _Atomic uint64_t answer_bytes_now;    /* answers being built (reserved) and written */
    /* agent connections past agent-handshake-timeout-s without becoming pipes (h-nng) */
    _Atomic uint64_t agent_handshakes_timed_out;
};

/* One counter as /healthz ("counters": {name: value}, the count itself: nanoseconds where the
 * name ends in _ns, like every *_ns of the JSON API) and /metrics (rankscope_<metric>, named and
 * scaled by Prometheus's conventions: base units, so seconds, and "_total" for counters) show it.
 * Every field of struct rs_counters has an entry. */
struct rs_counter_info {
    const char *name, *metric, *help; /* help: of the /metrics value */
    size_t offset;                    /* in struct rs_counters */
    double divisor;                   /* /metrics value = count / divisor (1e9: ns to seconds) */
    bool gauge;                       /* a level (*_now), not a monotonic count */
};
extern const struct rs_counter_info rs_counter_infos[];
extern const size_t rs_counter_info_count;

uint64_t rs_counter_value(const struct rs_counters *c, const struct rs_counter_info *info);

#define RS_COUNT(c, field) atomic_fetch_add_explicit(&(c)->field, 1, memory_order_relaxed)
#define RS_COUNT_ADD(c, field, n) atomic_fetch_add_explicit(&(c)->field, (n), memory_order_relaxed)
#define RS_COUNT_SUB(c, field, n) atomic_fetch_sub_explicit(&(c)->field, (n), memory_order_relaxed)
#define RS_COUNT_GET(c, field) atomic_load_explicit(&(c)->field, memory_order_relaxed)

#endif
