/* Server assembly and lifecycle (see server.h): open the store, start the writer, the NNG ingest
 * and HTTP on one loop, write the ready file, and on SIGINT/SIGTERM shut down in the order that
 * loses nothing acknowledged: stop intake, drain the writer, close the store. */
#include "server/server.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "proto/wire.h"
#include "server/heap.h"
#include "server/http.h"
#include "server/ingest.h"
#include "server/maintenance.h"
#include "server/capture_store.h"
#include "server/server_int.h"
#include "server/space.h"
#include "server/writer.h"

#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPACE_CHECK_MS 2000 /* how often retention by space looks at the store */
#define CAPTURE_STORE_MS 500 /* how often the capture table's changes are stored */

struct running {
    struct rs_server srv;
    rs_ingest *ingest;
    rs_http *http;
    rs_maintenance *maintenance;
    rs_space *space;
    rs_capture_store *capture_store;
    struct rs_retention_settings retention; /* in force: SIGHUP may change them */
};

static void
on_signal(uv_signal_t *h, int signum)
{
    struct running *run = h->data;

    rs_log(RS_LOG_INFO, "RS-SERVER-STOP", "signal %d: shutting down", signum);
    rs_http_close(run->http);
    rs_ingest_close(run->ingest);
    rs_work_pool_close(run->srv.queries); /* waits for running queries (bounded by their deadline) */
    run->srv.queries = NULL;
    rs_work_pool_close(run->srv.queries_light);
    run->srv.queries_light = NULL;
    rs_work_pool_close(run->srv.decoders);
    run->srv.decoders = NULL;
    rs_post_close(run->srv.post);
    rs_maintenance_close(run->maintenance);
    run->maintenance = NULL;
    rs_evaluator_close(run->srv.evaluator);
    run->srv.evaluator = NULL;
    rs_hang_watch_close(run->srv.hang_watch);
    run->srv.hang_watch = NULL;
    rs_space_close(run->space);
    run->space = NULL;
    rs__capture_store_close(run->capture_store); /* the changes of now go to the writer */
    run->capture_store = NULL;
    rs_heatmap_warm_stop(run->srv.heatmap_warm);
    uv_close((uv_handle_t *)&run->srv.sigint, NULL);
    uv_close((uv_handle_t *)&run->srv.sigterm, NULL);
    uv_close((uv_handle_t *)&run->srv.sighup, NULL);
}

/* SIGHUP: re-read what can change without a restart. */
static void
on_sighup(uv_signal_t *h, int signum)
{
    struct running *run = h->data;

    rs_log(RS_LOG_INFO, "RS-SERVER-RELOAD", "signal %d: reloading", signum);
    rs__server_auth_reload(run->srv.auth);
    rs_server_tls_reload(run->srv.tls);
    if (run->maintenance && run->space)
        rs__server_retention_reload(&run->srv, run->maintenance, run->space, &run->retention);
}

/* Splits "host:port" (IPv6 as "[::1]:7070"). */
static int
parse_host_port(const char *text, char *host, size_t host_len, int *port)
{
    const char *colon = strrchr(text, ':');
    char *end;
    long p;

    if (!colon)
        return RS_E_CONFIG;
    p = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || p < 0 || p > 65535)
        return RS_E_CONFIG;
    if (text[0] == '[' && colon > text && colon[-1] == ']')
        snprintf(host, host_len, "%.*s", (int)(colon - text - 2), text + 1);
    else
        snprintf(host, host_len, "%.*s", (int)(colon - text), text);
    *port = (int)p;
    return 0;
}

static int
write_ready_file(const char *path, int http_port, const char *http_host, const char *ingest_url)
{
    char text[512];
    int n = snprintf(text, sizeof text, "pid=%d\nhttp=%s:%d\nlisten=%s\n", (int)getpid(), http_host,
                     http_port, ingest_url);
    return rs_fs_write_atomic(path, text, (size_t)n);
}

static void
log_migration(void *arg, uint64_t done, uint64_t total)
{
    (void)arg;
    rs_log(RS_LOG_INFO, "RS-STORE-MIGRATE",
           "converting the store from format 1: %llu of %llu collective records moved",
           (unsigned long long)done, (unsigned long long)total);
}

struct rs_store_options
rs__server_store_options(const struct rs_server_config *cfg)
{
    return (struct rs_store_options){.map_size =
                                         (uint64_t)(cfg->map_size_gb * (double)(1ull << 30)),
                                     .sync_metadata = cfg->sync_metadata,
                                     .migrating = log_migration,
                                     .exclusive = true};
}

/* What holds the store, for RS-STORE-LOCKED: another server, or (say) `rankscope analyze`. */
static const char *
process_name(long pid, char *buf, size_t len)
{
    char path[64], comm[32] = "";
    FILE *f;

    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    if ((f = fopen(path, "r")) != NULL) {
        if (!fgets(comm, sizeof comm, f))
            comm[0] = '\0';
        fclose(f);
    }
    comm[strcspn(comm, "\n")] = '\0';
    if (strncmp(comm, "rankscope-serv", 14) == 0) /* comm keeps 15 characters */
        return "another rankscope-server";
    snprintf(buf, len, "another process%s%s", comm[0] ? ", " : "", comm);
    return buf;
}

/* Raises the soft limit of open files to the hard one: every agent and HTTP client is a
 * descriptor, and with the default soft limit (1,024) idle agent sockets took REST and ingest
 * down (issue 23's review; not measured here). Returns the limit in force. */
static unsigned long
raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit up = {rl.rlim_max, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl = up;
    }
    return rl.rlim_cur == RLIM_INFINITY ? ULONG_MAX : (unsigned long)rl.rlim_cur;
}

int
rs_server_run(const struct rs_server_config *cfg)
{
    struct running run;
    struct rs_server *srv = &run.srv;
    struct rs_store_options sopts = rs__server_store_options(cfg);
    struct rs_writer_options wopts = {(unsigned)cfg->writer_queue, 256,
                                      (uint64_t)cfg->writer_max_group_records,
                                      (uint64_t)cfg->writer_queue_mb << 20,
                                      (unsigned)cfg->fault_exit_after_commits};
    struct rs_ingest_options iopts = {.url = cfg->listen,
                                      .contexts = (unsigned)cfg->ingest_contexts,
                                      .max_message = (size_t)cfg->max_batch_mb << 20,
                                      .writer_queue = (unsigned)cfg->writer_queue,
                                      .pipes = {(unsigned)cfg->agent_max_connections_per_peer,
                                                (unsigned)cfg->agent_max_connections,
                                                (unsigned)cfg->agent_idle_timeout_s,
                                                (unsigned)cfg->agent_handshake_timeout_s}};
    struct rs_work_pool_options qopts = {"rs-query", (unsigned)cfg->query_threads,
                                         (unsigned)cfg->query_max,
                                         (unsigned)cfg->query_max_per_client, (int)cfg->query_nice};
    struct rs_work_pool_options lopts = {"rs-qlight", (unsigned)cfg->query_light_threads,
                                         (unsigned)cfg->query_max,
                                         (unsigned)cfg->query_max_per_client, (int)cfg->query_nice};
    struct rs_work_pool_options dopts = {"rs-decode", (unsigned)cfg->ingest_threads,
                                         (unsigned)cfg->ingest_contexts, 0, 0};
    struct rs_http_options hopts;
    char host[256];
    int rc, http_port, status = 1;

    memset(&run, 0, sizeof run);
    if (rs__server_heap_tune((unsigned)cfg->malloc_arena_max,
                             (size_t)cfg->malloc_mmap_threshold_kb << 10) != 0)
        rs_log(RS_LOG_WARN, "RS-SERVER-HEAP", "glibc refused a malloc setting (malloc-arena-max "
               "%lld, malloc-mmap-threshold-kb %lld): its defaults stay",
               (long long)cfg->malloc_arena_max, (long long)cfg->malloc_mmap_threshold_kb);
    unsigned long fds = raise_fd_limit();
    srv->cfg = cfg;
    srv->http_loopback = rs__server_http_loopback(cfg->http);
    srv->start_ns = rs_clock_mono_ns();
    signal(SIGPIPE, SIG_IGN);
    if (parse_host_port(cfg->http, host, sizeof host, &http_port) != 0) {
        rs_log(RS_LOG_ERROR, "RS-SERVER-CONFIG", "--http '%s' is not HOST:PORT", cfg->http);
        return 2;
    }
    hopts = (struct rs_http_options){host,
                                     http_port,
                                     (size_t)cfg->http_max_header_bytes,
                                     (size_t)cfg->http_max_body_bytes,
                                     (unsigned)cfg->http_request_timeout_ms,
                                     (unsigned)cfg->http_idle_timeout_ms,
                                     (unsigned)cfg->http_max_connections,
                                     (unsigned)cfg->http_max_connections_per_peer,
                                     (size_t)cfg->http_max_body_total_mb << 20,
                                     fds};
    if (rs__server_auth_new(cfg, &srv->auth) != 0)
        return 2;
    iopts.authorize = rs__server_auth_agent;
    iopts.authorize_arg = srv->auth;
    if ((rc = rs_store_open(cfg->data, &sopts, &srv->store)) != 0) {
        rs__server_auth_free(srv->auth);
        long pid = rc == RS_E_LOCKED ? rs_store_locked_by(cfg->data) : 0;
        char who[64];
        if (rc == RS_E_LOCKED && pid > 0)
            rs_log(RS_LOG_ERROR, "RS-STORE-LOCKED",
                   "the store in '%s' is in use by %s (pid %ld): stop it first, or give this one "
                   "another --data",
                   cfg->data, process_name(pid, who, sizeof who), pid);
        else if (rc == RS_E_LOCKED)
            rs_log(RS_LOG_ERROR, "RS-STORE-LOCKED",
                   "the store in '%s' is in use by another process (%s/writer.lock is locked): "
                   "stop it first, or give this one another --data",
                   cfg->data, cfg->data);
        else
            rs_log(RS_LOG_ERROR, "RS-STORE-OPEN", "cannot open store in '%s': %s", cfg->data,
                   rs_strerror(rc));
        return 1;
    }
    /* without memory for it, heatmaps read the store directly (rs_query_heatmap takes NULL) */
    srv->heatmaps = rs_heatmap_cache_new(RS_SERVER_HEATMAP_CACHE_BYTES);
    uv_loop_init(&srv->loop);
    if ((rc = rs_server_tls_new(cfg, &srv->counters, &srv->tls)) != 0) {
        status = 2; /* a configuration error, like a bad --http */
        goto out;
    }
    iopts.tls = rs_server_tls_agents(srv->tls);
    if ((rc = rs_post_new(&srv->loop, &srv->post)) != 0)
        goto out;
    if ((rc = rs_writer_start(srv->store, &wopts, &srv->counters, &srv->writer)) != 0) {
        rs_log(RS_LOG_ERROR, "RS-SERVER-WRITER", "cannot start writer: %s", rs_strerror(rc));
        goto out;
    }
    srv->answer_budget.limit = (uint64_t)cfg->answer_budget_mb << 20;
    /* without memory for it, answers are not kept (every request scans) */
    if (cfg->answer_cache_mb > 0 &&
        rs_answer_cache_new((size_t)cfg->answer_cache_mb << 20,
                            (uint64_t)cfg->answer_cache_max_age_ms * 1000000ull,
                            &srv->answers) != 0)
        srv->answers = NULL;
    if ((rc = rs_work_pool_start(&srv->loop, &qopts, &srv->queries)) != 0 ||
        (cfg->query_light_threads > 0 &&
         (rc = rs_work_pool_start(&srv->loop, &lopts, &srv->queries_light)) != 0) ||
        (rc = rs_work_pool_start(&srv->loop, &dopts, &srv->decoders)) != 0) {
        rs_log(RS_LOG_ERROR, "RS-SERVER-THREADS", "cannot start the query and ingest threads: %s",
               rs_strerror(rc));
        goto out;
    }
    iopts.decoders = srv->decoders;
    struct rs_captures_options copts = {(uint32_t)cfg->capture_per_job_per_min,
                                        (uint64_t)cfg->capture_timeout_s * 1000000000ull};
    if ((rc = rs_captures_new(&copts, &srv->captures)) != 0)
        goto out;
    /* before agents can report on them; a store whose captures cannot be read serves the rest
     * (logged; --check names the entry) */
    (void)rs__capture_store_load(srv);
    if ((rc = rs__capture_store_start(srv, CAPTURE_STORE_MS, &run.capture_store)) != 0)
        goto out;
    iopts.captures = srv->captures;
    if ((rc = rs_ingest_start(&srv->loop, &iopts, srv->writer, &srv->counters, &run.ingest)))
        goto out;
    if ((rc = rs_http_start(&srv->loop, &hopts, rs__server_route, srv, &srv->counters,
                            &run.http)) != 0) {
        rs_log(RS_LOG_ERROR, "RS-HTTP-LISTEN", "cannot listen on http %s: %s", cfg->http,
               uv_strerror(rc));
        goto out;
    }
    rs_http_set_tls(run.http, rs_server_tls_http(srv->tls));
    rs_server_tls_attach(srv->tls, run.http, run.ingest);
    struct rs_maintenance_options mo = {(uint64_t)cfg->retention_s, (uint64_t)cfg->raw_retention_s,
                                        (uint64_t)cfg->rollup_window_s,
                                        (unsigned)cfg->maintenance_s};
    if ((rc = rs_maintenance_start(srv, &mo, &run.maintenance)) != 0)
        goto out;
    struct rs_evaluator_options eopts = {(unsigned)cfg->evaluate_ms, (unsigned)cfg->active_s};
    if ((rc = rs_evaluator_start(srv, &eopts, &srv->evaluator)) != 0 ||
        (rc = rs_hang_watch_start(srv, (unsigned)cfg->hang_check_ms, (unsigned)cfg->active_s,
                                  &srv->hang_watch)) != 0 ||
        (rc = rs_space_start(srv, (uint64_t)(cfg->disk_budget_gb * (double)(1ull << 30)),
                             SPACE_CHECK_MS, &run.space)) != 0)
        goto out;
    /* the recent jobs' whole-job heatmaps read in the background, before a browser asks */
    if ((rc = rs_heatmap_warm_start(srv, (uint64_t)cfg->heatmap_warm_s,
                                    (uint64_t)cfg->heatmap_warm_every_s, &srv->heatmap_warm)) != 0)
        goto out;
    uv_signal_init(&srv->loop, &srv->sigint);
    uv_signal_init(&srv->loop, &srv->sigterm);
    srv->sigint.data = srv->sigterm.data = &run;
    uv_signal_start(&srv->sigint, on_signal, SIGINT);
    uv_signal_start(&srv->sigterm, on_signal, SIGTERM);
    uv_signal_init(&srv->loop, &srv->sighup);
    srv->sighup.data = &run;
    uv_signal_start(&srv->sighup, on_sighup, SIGHUP);
    if (cfg->ready_file[0] && (rc = write_ready_file(cfg->ready_file, rs_http_port(run.http), host,
                                                     rs_ingest_url(run.ingest))) != 0) {
        rs_log(RS_LOG_ERROR, "RS-SERVER-READY", "cannot write ready file %s: %s", cfg->ready_file,
               rs_strerror(rc));
        on_signal(&srv->sigterm, 0);
        uv_run(&srv->loop, UV_RUN_DEFAULT);
        goto out;
    }
    if ((unsigned long)cfg->http_max_connections + (unsigned long)cfg->agent_max_connections >
        fds - fds / 20)
        rs_log(RS_LOG_WARN, "RS-SERVER-FDS",
               "http-max-connections (%lld) + agent-max-connections (%lld) exceed 95%% of the "
               "open-files limit (%lu): past it, new connections are refused (HTTP 503, "
               "RS-HTTP-ACCEPT) — raise the limit (LimitNOFILE=) or lower the caps",
               (long long)cfg->http_max_connections, (long long)cfg->agent_max_connections, fds);
    /* each start records the retention settings in force; SIGHUP may change them (audited) */
    run.retention = (struct rs_retention_settings){cfg->retention_s, cfg->raw_retention_s,
                                                   cfg->rollup_window_s, cfg->disk_budget_gb};
    rs__server_audit(&rs__server_self, "retention-settings",
                     "retention_s=%lld disk_budget_gb=%g raw_retention_s=%lld map_size_gb=%g",
                     (long long)cfg->retention_s, cfg->disk_budget_gb,
                     (long long)cfg->raw_retention_s, cfg->map_size_gb);
    rs_log(RS_LOG_INFO, "RS-SERVER-START",
           "rankscope-server %s: %s %s:%d, agents %s, data %s, %lu file descriptors, auth %s%s",
           RS_VERSION, rs_server_tls_http(srv->tls) ? "https" : "http", host,
           rs_http_port(run.http), rs_ingest_url(run.ingest), cfg->data, fds,
           rs__server_auth_mode(srv->auth),
           strcmp(rs__server_auth_mode(srv->auth), "insecure") == 0
               ? " (INSECURE: no authentication beyond loopback, --insecure)"
               : "");
    uv_run(&srv->loop, UV_RUN_DEFAULT);
    status = 0;
out:
    if (status != 0) { /* startup failed: close what was started */
        rs_http_close(run.http);
        rs_ingest_close(run.ingest);
        rs_work_pool_close(srv->queries);
        rs_work_pool_close(srv->queries_light);
        rs_work_pool_close(srv->decoders);
        if (srv->post)
            rs_post_close(srv->post);
        rs_maintenance_close(run.maintenance);
        rs_evaluator_close(srv->evaluator);
        rs_hang_watch_close(srv->hang_watch);
        rs_space_close(run.space);
        rs__capture_store_close(run.capture_store);
        rs_heatmap_warm_stop(srv->heatmap_warm);
    }
    uv_run(&srv->loop, UV_RUN_DEFAULT); /* finish close callbacks and pending queries */
    rs_heatmap_warm_free(srv->heatmap_warm); /* after its reads' done callbacks */
    rs_writer_stop(srv->writer);        /* commits what was queued */
    rs_post_drain(srv->post);           /* completions that came after the loop stopped */
    rs_ingest_free(run.ingest);
    rs_captures_free(srv->captures); /* after the writer: its replies carry orders */
    rs_http_free(run.http);
    rs_server_tls_free(srv->tls);
    uv_loop_close(&srv->loop);
    rs__server_auth_free(srv->auth);
    rs_heatmap_cache_free(srv->heatmaps);
    rs_answer_cache_free(&srv->answers); /* after the pools: every scan completed */
    /* a server that did not start leaves no new store (or directory) behind — unless it
     * acknowledged a batch in the moment its listener was up (a ready file that failed) */
    if (status != 0 && RS_COUNT_GET(&srv->counters, batches_committed) == 0)
        rs_store_close_discard(srv->store);
    else
        rs_store_close(srv->store);
    if (cfg->ready_file[0])
        unlink(cfg->ready_file);
    rs_log(RS_LOG_INFO, "RS-SERVER-EXIT", "stopped (%llu batches committed)",
           (unsigned long long)RS_COUNT_GET(&srv->counters, batches_committed));
    return status;
}
