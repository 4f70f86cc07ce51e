/* The table of server counters (see counters.h). */
#include "server/counters.h"

#include <stddef.h>

/* Counters are rankscope_<name>_total in /metrics, gauges rankscope_<name>; durations, counted in
 * ns, are seconds there, named in full. */
#define C(field, name, help)                                                                       \
    {                                                                                              \
        name, name "_total", help, offsetof(struct rs_counters, field), 1, false                   \
    }
#define G(field, name, help)                                                                       \
    {                                                                                              \
        name, name, help, offsetof(struct rs_counters, field), 1, true                             \
    }
#define C_NS(field, name, metric, help)                                                            \
    {                                                                                              \
        name, metric, help, offsetof(struct rs_counters, field), 1e9, false                        \
    }

const struct rs_counter_info rs_counter_infos[] = {
    C(batches_received, "batches_received", "Agent batches received (NNG and POST /v1/import)."),
    C(batches_committed, "batches_committed", "New batches committed to storage."),
    C(batches_duplicate, "batches_duplicate", "Resent batches acknowledged without a write."),
    C(batches_rejected, "batches_rejected", "Malformed or unsupported batches refused."),
    C(batches_retry, "batches_retry", "Batches the server could not commit then (resent)."),
    C(rank_batches, "rank_batches", "Per-rank batches inside committed batches."),
    C(commits, "commits", "Storage write transactions committed."),
    C(commit_errors, "commit_errors", "Storage commits that failed."),
    C(replies_failed, "replies_failed", "Replies that could not be sent (the agent resends)."),
    C(http_requests, "http_requests", "HTTP requests served."),
    C(http_errors, "http_errors", "HTTP responses with status >= 400."),
    C(http_timeouts, "http_timeouts", "HTTP connections closed by a header or idle timeout."),
    G(http_connections_now, "http_connections", "Open HTTP connections."),
    G(writer_queue_now, "writer_queue", "Batches waiting for the storage writer."),
    C_NS(writer_batches_ns, "writer_batches_ns", "writer_batches_seconds_total",
         "Seconds the storage writer spent writing and committing batches."),
    C_NS(writer_tasks_ns, "writer_tasks_ns", "writer_tasks_seconds_total",
         "Seconds the storage writer spent on tasks (retention, rollups, step summaries)."),
    C(jobs_expired, "jobs_expired", "Jobs deleted by retention by age."),
    C(reader_slots_freed, "reader_slots_freed", "Reader slots of dead processes cleared."),
    C(step_summaries, "step_summaries_stored", "Settled step summaries stored by the evaluator."),
    C(storage_full, "storage_full", "Commits refused because the store was full."),
    C(jobs_deleted_for_space, "jobs_deleted_for_space", "Jobs deleted by retention by space."),
    C(records_rolled_up, "records_rolled_up",
      "Raw kernel and memcpy records rolled up into window totals."),
    C(agent_windows_coarsened, "agent_windows_coarsened",
      "Windows sent by summarizing agents, coarsened into rollup windows."),
    C(queries_refused, "queries_refused",
      "REST queries refused (429/503) over query-max or query-max-per-client."),
    C(queries_timed_out, "queries_timed_out", "REST queries stopped at query-timeout-ms (504)."),
    C(http_refused_peer, "http_refused_peer",
      "HTTP connections refused over http-max-connections-per-peer."),
    C(http_evicted, "http_evicted",
      "Idle or slow HTTP connections closed to admit a new one at http-max-connections."),
    C(http_accept_errors, "http_accept_errors",
      "HTTP connections refused or lost for lack of file descriptors (EMFILE, ENFILE, or in "
      "the last 5% of the limit)."),
    C(http_body_budget_full, "http_body_budget_full",
      "HTTP requests refused (503) while request bodies filled http-max-body-total-mb."),
    C(agent_pipes_refused, "agent_pipes_refused",
      "Agent connections closed over agent-max-connections(-per-peer)."),
    C(agent_pipes_idle_closed, "agent_pipes_idle_closed",
      "Agent connections closed after agent-idle-timeout-s without a whole request."),
    G(agent_pipes_now, "agent_connections", "Open agent (NNG) connections."),
    G(writer_queue_bytes_now, "writer_queue_bytes",
      "Request bytes of the batches waiting for the storage writer (bounded by writer-queue-mb)."),
    C(batches_unauthorized, "batches_unauthorized",
      "Agent batches refused for want of a valid ingest token (kept and resent by the agent)."),
    C(http_unauthorized, "http_unauthorized",
      "HTTP requests refused for want of a valid token (401) or of its role (403)."),
    C(http_tls_handshakes, "http_tls_handshakes", "HTTPS handshakes completed."),
    C(http_tls_failures, "http_tls_failures",
      "HTTPS handshakes or records that failed (bad client hello, unknown CA, garbage)."),
    C(http_tls_plaintext, "http_tls_plaintext", "Plain HTTP requests sent to the HTTPS port."),
    C(http_tls_timeouts, "http_tls_timeouts",
      "HTTPS connections closed because their handshake stalled past the request timeout."),
    C(tls_reloads, "tls_reloads", "Reloads of the TLS certificates and keys (SIGHUP)."),
    C(tls_reload_failures, "tls_reload_failures",
      "Reloads refused (a file that does not parse, a key that is not the certificate's): the "
      "previous files stay in use."),
    C(batch_decoded_bytes, "batch_decoded_bytes",
      "Bytes of agent batches decoded in full (a batch's token is checked before: a batch "
      "without a valid ingest token is not decoded)."),
    C(agent_pipes_evicted, "agent_pipes_evicted",
      "Idle agent connections closed at agent-max-connections to admit a new one."),
    C(top_from_totals, "top_from_totals",
      "Whole-job top answers read from the job's running totals (docs/storage.md job_top)."),
    C(top_from_records, "top_from_records",
      "Top answers built from the job's records (a rank, a range, or a job without totals)."),
    C(answers_over_budget, "answers_over_budget",
      "REST answers refused (503) while answers being built and written held answer-budget-mb."),
    G(answer_bytes_now, "answer_bytes",
      "Bytes of REST answers being built (reserved) and written to clients (at most "
      "answer-budget-mb)."),
    C(agent_handshakes_timed_out, "agent_handshakes_timed_out",
      "Agent connections closed because they had not finished their handshake (TLS) within "
      "agent-handshake-timeout-s."),
};

const size_t rs_counter_info_count = sizeof rs_counter_infos / sizeof rs_counter_infos[0];

uint64_t
rs_counter_value(const struct rs_counters *c, const struct rs_counter_info *info)
{
    _Atomic uint64_t *v = (_Atomic uint64_t *)((char *)(uintptr_t)c + info->offset);
    return atomic_load_explicit(v, memory_order_relaxed);
}

_Static_assert(sizeof rs_counter_infos / sizeof rs_counter_infos[0] ==
                   sizeof(struct rs_counters) / sizeof(_Atomic uint64_t),
               "every field of struct rs_counters has a table entry");
