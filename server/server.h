/* rankscope-server as a library: everything main.c starts, wired together on one libuv loop —
 * NNG ingest, storage writer thread, HTTP API — with graceful shutdown on SIGINT/SIGTERM. */
#ifndef RS_SERVER_SERVER_H
#define RS_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rs_server_config {
    char *data;       /* store directory */
    char *http;       /* "127.0.0.1:7070" */
    char *listen;     /* NNG URL for agents */
    char *ready_file; /* written once both listeners are up; removed at exit */
    char *log_level;
    int64_t ingest_contexts;
    int64_t max_batch_mb;
    int64_t writer_queue;
    double map_size_gb;
    bool sync_metadata;
    int64_t http_max_header_bytes;
    int64_t http_max_body_bytes;
    int64_t http_request_timeout_ms;
    int64_t http_idle_timeout_ms;
    int64_t http_max_connections;
    int64_t fault_exit_after_commits; /* tests only: see rs_writer_options */
    int64_t fault_query_delay_ms;     /* tests only: time a query spends after its scans */
    bool check;                       /* check the store and exit instead of serving */
    char *compact_to;                 /* write a compacted copy there and exit ("" = serve) */
    int64_t retention_s;              /* jobs with no data for this long are deleted; 0 = keep */
    int64_t maintenance_s;            /* how often retention, rollups and reader checks run */
    int64_t raw_retention_s;          /* kernel records stay raw this long; 0 = no rollups */
    int64_t rollup_window_s;          /* window of the kernel rollups */
    double disk_budget_gb;            /* delete the oldest jobs while data exceeds it; 0 = none */
    int64_t evaluate_ms;              /* streaming straggler evaluation period; 0 = off */
    int64_t active_s;                 /* jobs with data this recent are evaluated */
    int64_t heatmap_warm_s; /* after a start, jobs with data this recent get their heatmap read */
    int64_t heatmap_warm_every_s; /* then jobs with new data every this often (0: never) */
    /* resources (issue 23 §3): queries cannot starve ingest, no peer takes every connection */
    int64_t query_threads;        /* threads that run REST queries */
    int64_t query_max;            /* queries running or waiting, in total; beyond: 503 */
    int64_t query_max_per_client; /* of them from one IP address; beyond: 429 */
    int64_t query_timeout_ms;     /* a query's deadline; beyond: 504 */
    int64_t query_nice;           /* niceness added to the query threads */
    int64_t query_light_threads;  /* threads of the light lane (the jobs' list, one rank); 0 = none */
    int64_t answer_cache_mb;      /* REST answers kept (answer_cache.h); 0 = none */
    int64_t answer_cache_max_age_ms; /* a kept answer is served at most this long after its scan */
    int64_t answer_budget_mb; /* answers being built and written, MiB (answer_budget.h); 0 = none */
    /* main.c: reads the configuration again from its sources (the config file, the environment,
     * the command line) into *out, for SIGHUP's retention reload; 0 or RS_E_CONFIG with err;
     * *out is freed with reread_free in both cases. NULL: not reloadable. */
    int (*reread)(struct rs_server_config *out, char *err, size_t err_len);
    void (*reread_free)(struct rs_server_config *c);
    int64_t ingest_threads;       /* threads that decode agents' batches */
    int64_t http_max_connections_per_peer; /* beyond: 429 and closed */
    int64_t http_max_body_total_mb;        /* request bodies held at once; beyond: 503 */
    int64_t agent_max_connections_per_peer; /* NNG pipes from one IP; beyond: closed */
    int64_t agent_max_connections;          /* NNG pipes in total; beyond: closed */
    int64_t agent_idle_timeout_s;           /* a pipe without a whole message this long: closed */
    int64_t agent_handshake_timeout_s;      /* tls+tcp:// connection not a pipe this long: closed */
    int64_t writer_max_group_records;       /* records per write transaction (heap bound) */
    int64_t writer_queue_mb;                /* request bytes waiting for the writer (heap bound) */
    int64_t hang_check_ms;            /* hang watch period (hang_watch.h); 0 = off */
    char *token_file; /* principals and token hashes (server/auth_file.h); "" = none */
    bool insecure;    /* serve beyond loopback without a token file */
    char *new_token;  /* print a new token for this name and exit ("" = serve) */
    char *role;       /* --new-token's role */
    /* TLS (tls_reload.h): HTTPS on --http when tls_cert is set; tls+tcp:// agents with the agent
     * pair (default: the same); agents must show a certificate signed by agent_tls_ca when set. */
    char *tls_cert, *tls_key;
    char *agent_tls_cert, *agent_tls_key, *agent_tls_ca;
    /* captures on demand (captures.h) */
    int64_t capture_per_job_per_min, capture_timeout_s;
    bool auto_capture;                          /* evaluator-triggered captures */
    int64_t auto_capture_s, auto_capture_every_s;
    /* glibc's heap (heap.h): arenas (0 = glibc's default), mmap threshold KiB (0 = dynamic) */
    int64_t malloc_arena_max, malloc_mmap_threshold_kb;
};

/* Runs until SIGINT/SIGTERM. Returns the process exit status (0 after a clean shutdown). */
int rs_server_run(const struct rs_server_config *cfg);

/* `--new-token NAME --role ROLE`: prints a new random token and the token-file line that grants
 * it ROLE (read, ingest or admin) on stdout; the server keeps only the line. Returns the exit
 * status: 0, 2 for a bad name or role, 1 when no random bytes could be had. */
int rs_server_new_token(const struct rs_server_config *cfg);

/* `--check`: checks the store in cfg->data (which must exist) and prints a report on stdout.
 * Returns the exit status: 0 consistent, 1 problems found or no store there. */
int rs_server_check(const struct rs_server_config *cfg);

/* `--compact-to DIR`: writes a compacted copy of the store in cfg->data to DIR and prints the
 * sizes. Returns the exit status (0 done, 1 failed). */
int rs_server_compact(const struct rs_server_config *cfg);

#endif
