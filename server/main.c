/* rankscope-server: parses configuration and runs the server (server/server.h). */
#include "common/config.h"
#include "server/server.h"

#include <stddef.h>
#include <string.h>

#define OPT(...) RS_CONFIG_OPT(struct rs_server_config, __VA_ARGS__)

static const struct rs_config_option options[] = {
    OPT("data", RS_CONFIG_STRING, "./rankscope-data", data, "store directory (created if absent)",
        0, 0),
    OPT("http", RS_CONFIG_STRING, "127.0.0.1:7070", http, "REST API address HOST:PORT (0 = any)", 0,
        0),
    OPT("listen", RS_CONFIG_STRING, "tcp://127.0.0.1:7071", listen,
        "NNG URL agents connect to (port 0 = any)", 0, 0),
    OPT("ready-file", RS_CONFIG_STRING, "", ready_file,
        "write pid, http and listen addresses here once serving", 0, 0),
    OPT("log-level", RS_CONFIG_STRING, "info", log_level, "error, warn, info or debug", 0, 0),
    OPT("ingest-contexts", RS_CONFIG_INT, "256", ingest_contexts,
        "agent requests handled concurrently", 1, 1024),
    OPT("max-batch-mb", RS_CONFIG_INT, "17", max_batch_mb, "largest agent request accepted, MiB", 1,
        1024),
    OPT("writer-queue", RS_CONFIG_INT, "1024", writer_queue,
        "batches waiting for commit before agents are told to retry", 1, 1000000),
    OPT("map-size-gb", RS_CONFIG_DOUBLE, "256", map_size_gb,
        "largest store size, GiB (address space, not disk; when full, the oldest job is deleted)",
        0.001, 1 << 20),
    OPT("disk-budget-gb", RS_CONFIG_DOUBLE, "0", disk_budget_gb,
        "delete the jobs that received data least recently while the store's data exceeds this, "
        "GiB (0 = no budget: only a full map does)",
        0, 1 << 20),
    OPT("sync-metadata", RS_CONFIG_BOOL, "false", sync_metadata,
        "fsync metadata on every commit (see docs/storage.md)", 0, 0),
    OPT("http-max-header-bytes", RS_CONFIG_INT, "16384", http_max_header_bytes,
        "request line + headers limit (431 beyond)", 1024, 1 << 20),
    OPT("http-max-body-bytes", RS_CONFIG_INT, "16777216", http_max_body_bytes,
        "request body limit (413 beyond); POST /v1/import needs the largest AgentBatch, 16 MiB", 0,
        1 << 30),
    OPT("http-request-timeout-ms", RS_CONFIG_INT, "10000", http_request_timeout_ms,
        "time to receive a whole request (408 beyond)", 10, 3600000),
    OPT("http-idle-timeout-ms", RS_CONFIG_INT, "30000", http_idle_timeout_ms,
        "keep-alive connection idle limit", 10, 3600000),
    OPT("http-max-connections", RS_CONFIG_INT, "1024", http_max_connections,
        "concurrent HTTP connections", 1, 100000),
    OPT("retention-s", RS_CONFIG_INT, "2592000", retention_s,
        "delete jobs with no new data for this many seconds (30 days; 0 = keep forever)", 0, 1e10),
    OPT("maintenance-s", RS_CONFIG_INT, "600", maintenance_s,
        "run retention, rollups and stale-reader checks this often, seconds", 1, 86400),
    OPT("raw-retention-s", RS_CONFIG_INT, "21600", raw_retention_s,
        "keep each rank's newest kernel records raw this long (6 h), roll older ones up into "
        "per-kernel totals per window; a job idle this long is rolled up whole (0 = keep every "
        "record)",
        0, 1e10),
    OPT("rollup-window-s", RS_CONFIG_INT, "60", rollup_window_s,
        "window of the kernel rollups, seconds (the time resolution of old data)", 1, 86400),
    OPT("evaluate-ms", RS_CONFIG_INT, "2000", evaluate_ms,
        "re-evaluate running jobs for stragglers this often, ms (0 = only on request)", 0, 3600000),
    OPT("active-s", RS_CONFIG_INT, "120", active_s,
        "a job is running (evaluated continuously) while data arrived this recently, s", 1, 604800),
    OPT("heatmap-warm-s", RS_CONFIG_INT, "3600", heatmap_warm_s,
        "after a start, read the whole-job heatmap of jobs with data this recent into the cache "
        "in the background (and a job's after an import into it), s (0 = only on request)",
        0, 31536000),
    OPT("heatmap-warm-every-s", RS_CONFIG_INT, "60", heatmap_warm_every_s,
        "while the server runs, read what arrived for running jobs into the heatmap cache this "
        "often, so that a live job's first overview reads at most this many seconds of steps, s "
        "(0 = never)",
        0, 86400),
    /* resources (issue 23 §3; docs/configuration.md) */
    OPT("query-threads", RS_CONFIG_INT, "2", query_threads,
        "threads that run REST queries (agents' batches are decoded on their own threads)", 1, 64),
    OPT("query-max", RS_CONFIG_INT, "64", query_max,
        "REST queries running or waiting at once; beyond: 503 with Retry-After", 1, 100000),
    OPT("query-max-per-client", RS_CONFIG_INT, "8", query_max_per_client,
        "of them from one client IP address; beyond: 429 with Retry-After", 1, 100000),
    OPT("query-timeout-ms", RS_CONFIG_INT, "30000", query_timeout_ms,
        "a REST query's deadline; beyond: 504", 10, 3600000),
    OPT("query-nice", RS_CONFIG_INT, "10", query_nice,
        "niceness added to the query threads, so that ingest wins a busy CPU (0 = none)", 0, 19),
    /* issue 23, queries at 10,000 ranks (docs/configuration.md) */
    OPT("query-light-threads", RS_CONFIG_INT, "1", query_light_threads,
        "threads of their own for cheap REST reads (the jobs' list, a job's ranks, one rank's "
        "views), so they never wait behind scans of every rank (0 = they share the query threads)",
        0, 64),
    OPT("answer-cache-mb", RS_CONFIG_INT, "64", answer_cache_mb,
        "MiB of REST answers kept until the data changes, and shared by identical requests "
        "in flight (0 = none kept)", 0, 65536),
    OPT("answer-cache-max-age-ms", RS_CONFIG_INT, "10000", answer_cache_max_age_ms,
        "a kept answer is served at most this long after its scan began, ms", 0, 3600000),
    OPT("answer-budget-mb", RS_CONFIG_INT, "256", answer_budget_mb,
        "MiB of REST answers being built and written to clients at once; beyond: 503 with "
        "Retry-After (0 = no bound)", 0, 65536),
    OPT("ingest-threads", RS_CONFIG_INT, "2", ingest_threads, "threads that decode agents' batches",
        1, 64),
    OPT("http-max-connections-per-peer", RS_CONFIG_INT, "256", http_max_connections_per_peer,
        "concurrent HTTP connections from one IP address; beyond: 429 and closed", 1, 100000),
    OPT("http-max-body-total-mb", RS_CONFIG_INT, "256", http_max_body_total_mb,
        "request bodies held in memory at once, all connections together, MiB; beyond: 503", 1,
        1 << 20),
    OPT("agent-max-connections-per-peer", RS_CONFIG_INT, "1024", agent_max_connections_per_peer,
        "agent (NNG) connections from one IP address; beyond: closed at once", 1, 1000000),
    OPT("agent-max-connections", RS_CONFIG_INT, "16384", agent_max_connections,
        "agent (NNG) connections in total; beyond: closed at once", 1, 1000000),
    OPT("agent-idle-timeout-s", RS_CONFIG_INT, "300", agent_idle_timeout_s,
        "close an agent connection that delivered no whole request for this long (a stalled "
        "partial message frees its buffer; agents redial)",
        1, 86400),
    OPT("agent-handshake-timeout-s", RS_CONFIG_INT, "10", agent_handshake_timeout_s,
        "close a tls+tcp:// agent connection that has not finished its TLS and SP handshakes in "
        "this long (0 = never; NNG 1.5.2 itself never ends a stalled TLS handshake)",
        0, 3600),
    OPT("writer-max-group-records", RS_CONFIG_INT, "131072", writer_max_group_records,
        "records per storage transaction: LMDB keeps the largest transaction's pages cached, so "
        "this bounds the server's heap (0 = no bound; fewer means more commits)",
        0, 1e12),
    OPT("writer-queue-mb", RS_CONFIG_INT, "256", writer_queue_mb,
        "request bytes waiting for commit before agents are told to retry, MiB: the bound of the "
        "server's memory when ingest falls behind (0 = only --writer-queue counts)",
        0, 1 << 20),
    OPT("hang-check-ms", RS_CONFIG_INT, "1000", hang_check_ms,
        "look for hang verdicts (NCCL operations collectors report in flight) in running jobs "
        "this often, ms, logging each once (0 = only on request: GET /v1/jobs/{job}/hangs)",
        0, 3600000),
    OPT("token-file", RS_CONFIG_STRING, "", token_file,
        "file of principals and their token hashes, \"NAME ROLE sha256:HEX\" per line (not "
        "writable by group or others; read again on SIGHUP). Without one a server reachable "
        "beyond loopback refuses to start",
        0, 0),
    OPT("insecure", RS_CONFIG_BOOL, "false", insecure,
        "serve beyond loopback without a token file: anyone who reaches the ports may read, "
        "import and delete every job (said in the start log and /healthz)",
        0, 0),
    OPT("new-token", RS_CONFIG_STRING, "", new_token,
        "print a new token for this principal name and its --token-file line, and exit", 0, 0),
    OPT("role", RS_CONFIG_STRING, "read", role,
        "--new-token's role: read (queries, /metrics), ingest (agents, imports) or admin "
        "(everything, DELETE included)",
        0, 0),
    OPT("check", RS_CONFIG_BOOL, "false", check,
        "check the store in --data for consistency, print a report, and exit (0 = consistent)", 0,
        0),
    OPT("compact-to", RS_CONFIG_STRING, "", compact_to,
        "write a compacted copy of the store in --data to this new directory, and exit", 0, 0),
    OPT("tls-cert", RS_CONFIG_STRING, "", tls_cert,
        "PEM certificate (then its intermediates): serve HTTPS on --http (with --tls-key); "
        "reloaded on SIGHUP",
        0, 0),
    OPT("tls-key", RS_CONFIG_STRING, "", tls_key, "PEM private key of --tls-cert", 0, 0),
    OPT("agent-tls-cert", RS_CONFIG_STRING, "", agent_tls_cert,
        "PEM certificate for a tls+tcp:// --listen (default: --tls-cert)", 0, 0),
    OPT("agent-tls-key", RS_CONFIG_STRING, "", agent_tls_key,
        "PEM private key of --agent-tls-cert (default: --tls-key)", 0, 0),
    OPT("agent-tls-ca", RS_CONFIG_STRING, "", agent_tls_ca,
        "PEM CA file: agents on tls+tcp:// must present a certificate it signed (default: none "
        "asked)",
        0, 0),
    /* captures on demand (issue 25 item 4; server/captures.h, docs/collector.md "Captures") */
    OPT("capture-per-job-per-min", RS_CONFIG_INT, "8", capture_per_job_per_min,
        "rank captures one job may be asked for per minute, by REST and the evaluator together "
        "(POST /v1/jobs/{job}/capture beyond it: 429)",
        1, 4096),
    OPT("capture-timeout-s", RS_CONFIG_INT, "30", capture_timeout_s,
        "a capture whose collector gives no word this long (not started after it was requested, "
        "not ended this long after its seconds) expires",
        2, 3600),
    OPT("auto-capture", RS_CONFIG_BOOL, "true", auto_capture,
        "the evaluator asks for a capture of the suspect rank and a healthy peer when it raises a "
        "straggler, suspect or hang verdict without recent per-kernel evidence",
        0, 0),
    OPT("auto-capture-s", RS_CONFIG_INT, "5", auto_capture_s,
        "seconds an evaluator-triggered capture traces", 1, 60),
    OPT("auto-capture-every-s", RS_CONFIG_INT, "600", auto_capture_every_s,
        "at most one evaluator-triggered capture per job this often, s", 10, 86400),
    /* h-soak: glibc's heap (server/heap.h) */
    OPT("malloc-arena-max", RS_CONFIG_INT, "4", malloc_arena_max,
        "malloc arenas (glibc) the server's threads share: each keeps what its threads freed "
        "(0 = glibc's default, 8 per core)",
        0, 1024),
    OPT("malloc-mmap-threshold-kb", RS_CONFIG_INT, "1024", malloc_mmap_threshold_kb,
        "allocations from this size up get their own pages, returned when freed, and arenas give "
        "back free tops over 8 MiB, KiB (0 = glibc's default: thresholds that rise up to 32 MiB "
        "as large blocks are freed)",
        0, 32768),
    OPT("fault-exit-after-commits", RS_CONFIG_INT, "0", fault_exit_after_commits,
        "testing only: exit abruptly right after this many commits, before replying (0 = off)", 0,
        1000000),
    OPT("fault-query-delay-ms", RS_CONFIG_INT, "0", fault_query_delay_ms,
        "testing only: each REST query spends this long after its scans (CPU work after them, as "
        "a large answer's encoding) (0 = off)",
        0, 3600000),
};

static const struct rs_config_spec spec = {
    "rankscope-server",
    "rankscope-server [--data DIR] [--http HOST:PORT] [--listen URL] [--ready-file F] [options]",
    "Stores per-job, per-rank GPU profiles sent by rankscope-agent and answers queries over a\n"
    "REST API (docs/openapi.yaml). Stops cleanly on SIGINT/SIGTERM; SIGHUP reloads the token\n"
    "file, the TLS files and the retention settings (retention-s, raw-retention-s,\n"
    "rollup-window-s, disk-budget-gb).",
    options,
    sizeof options / sizeof options[0],
    false,
    "RANKSCOPE_SERVER_",
};

/* The command line, read again with the config file and the environment on SIGHUP
 * (rs_server_config.reread: the retention settings). */
static int saved_argc;
static char **saved_argv;

static int
reread(struct rs_server_config *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    return rs_config_parse(&spec, out, saved_argc, saved_argv, NULL, 0, NULL, err, err_len);
}

static void
reread_free(struct rs_server_config *c)
{
    rs_config_free(&spec, c);
}

static int
run(void *arg)
{
    struct rs_server_config *cfg = arg;

    cfg->reread = reread;
    cfg->reread_free = reread_free;
    return cfg->new_token[0]    ? rs_server_new_token(cfg)
           : cfg->check         ? rs_server_check(cfg)
           : cfg->compact_to[0] ? rs_server_compact(cfg)
                                : rs_server_run(cfg);
}

int
main(int argc, char **argv)
{
    struct rs_server_config cfg = {0};

    saved_argc = argc;
    saved_argv = argv;
    return rs_config_run(&spec, &cfg, argc, argv, run);
}
