/* rankscope-agent as a library: one per node. Accepts collectors on a Unix SOCK_SEQPACKET socket,
 * merges their frames per rank, and forwards acknowledged batches to the server (forward.h),
 * spooling them to disk when a spool directory is configured. */
#ifndef RS_NODE_AGENT_AGENT_H
#define RS_NODE_AGENT_AGENT_H

#include <stdbool.h>
#include <stdint.h>

/* Where collectors find the agent unless told (RANKSCOPE_AGENT_SOCKET); the collector's default is
 * the same (node-agent/collector/settings.c). A root-owned runtime directory: no other user can
 * take the path before the agent does. */
#define RS_AGENT_DEFAULT_SOCKET "/run/rankscope/agent.sock"

struct rs_agent_config {
    char *server;     /* NNG URL of the server */
    char *socket;     /* Unix socket path for collectors */
    char *allow_uids; /* "1000,1001": only collectors of these uids; "" = any */
    char *spool;      /* spool directory; "" = memory only */
    char *ready_file; /* written once the socket accepts collectors */
    char *metrics_file; /* counters in Prometheus text, rewritten every metrics_s; "" = none */
    int64_t metrics_s;
    char *log_level;
    int64_t flush_ms;
    int64_t window;
    int64_t max_queue_mb;
    int64_t reply_timeout_ms;
    int64_t drain_timeout_ms;
    int64_t max_collectors;
    bool demangle;            /* C++ kernel names made readable here (demangle.h) */
    bool summarize;           /* per-window totals and measured steps (summary.h) */
    int64_t summary_window_s; /* their window */
    /* GPU telemetry (gpu_sampler.h) */
    bool gpu_telemetry;      /* sample the node's GPUs through NVML */
    char *nvml_library;      /* NVML to load */
    int64_t gpu_interval_ms; /* between two readings of a GPU */
    int64_t gpu_send_s;      /* telemetry batches at most this often */
    char *token_file;         /* the bearer token sent with every batch; "" = none */
    int64_t control_poll_ms;  /* idle: an empty batch this often, for capture orders; 0 = never */
    /* tls+tcp:// to the server (proto/nng_tls.h): CA that signed the server's certificate, the
     * name it must carry ("" = the URL's host), this agent's certificate and key ("" = none) */
    char *tls_ca, *tls_server_name, *tls_cert, *tls_key;
};

/* Runs until SIGINT/SIGTERM, then flushes and tries to deliver for up to drain_timeout_ms.
 * Returns the process exit status. */
int rs_agent_run(const struct rs_agent_config *cfg);

#endif
