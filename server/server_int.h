/* State shared by the files of server/ (not a public API). */
#ifndef RS_SERVER_SERVER_INT_H
#define RS_SERVER_SERVER_INT_H

#include "query/heatmap.h"
#include "server/auth.h"
#include "server/captures.h"
#include "server/counters.h"
#include "server/evaluator.h"
#include "server/hang_watch.h"
#include "server/heatmap_warm.h"
#include "server/http.h"
#include "server/post.h"
#include "server/server.h"
#include "server/answer_budget.h"
#include "server/answer_cache.h"
#include "server/work_pool.h"
#include "server/tls_reload.h"
#include "server/writer.h"
#include "storage/store.h"

#include <uv.h>

struct rs_server {
    const struct rs_server_config *cfg;
    bool http_loopback; /* the REST API listens on loopback (browser_rules.c) */
    uv_loop_t loop;
    uv_signal_t sigint, sigterm;
    rs_store *store;
    rs_writer *writer;
    rs_post *post;             /* completions from the writer thread back onto the loop */
    rs_evaluator *evaluator;   /* streaming straggler evaluation and verdict history */
    rs_hang_watch *hang_watch; /* hang verdicts logged and counted */
    rs_server_auth *auth;      /* tokens and roles (auth.h) */
    struct rs_counters counters;
    uint64_t start_ns;
    rs_work_pool *queries;  /* REST queries (routes.c), bounded per client and in total */
    rs_work_pool *decoders; /* agents' batches decoded (ingest.c): ingest's own threads */
    rs_server_tls *tls;     /* HTTPS and tls+tcp:// files; rs_server_tls_reload on SIGHUP */
    uv_signal_t sighup;     /* reloads (server.c on_sighup) */
    rs_captures *captures;  /* captures on demand (captures.h) */
    rs_heatmap_cache *heatmaps; /* whole-job heatmaps' older steps (query/heatmap.h); NULL: none */
    rs_heatmap_warm *heatmap_warm; /* fills heatmaps in the background (heatmap_warm.h) */
    /* issue 23, queries at 10,000 ranks: the light lane (routes.c light(): the jobs' list, one
     * rank) so that cheap reads never wait behind scans of every rank; and the REST answers
     * kept and shared (answer_cache.h; NULL: none), keyed by answers_generation (routes.c) */
    rs_work_pool *queries_light;
    rs_answer_cache *answers;
    uint64_t answers_batches, answers_batches_seen_ns; /* batches committed, seen since when */
    /* the bytes of answers being built and written, bounded by answer-budget-mb (routes.c) */
    struct rs_answer_budget answer_budget;
};

/* The heatmap cache's budget: a 1,024-rank job's entry is ~12.6 MB per metric. */
#define RS_SERVER_HEATMAP_CACHE_BYTES (64u << 20)

/* Store options from the configuration (map size, durability), with the migration of an older
 * store's format logged as it goes (server.c). */
struct rs_store_options rs__server_store_options(const struct rs_server_config *cfg);

/* The retention settings in force (retention_reload.c). */
struct rs_retention_settings {
    int64_t retention_s, raw_retention_s, rollup_window_s;
    double disk_budget_gb;
};

/* SIGHUP (retention_reload.c): reads the configuration again (cfg->reread) and applies what
 * changed of *cur to m and space from their next run, with an RS-AUDIT "retention-reload" line
 * (also when nothing changed); an unreadable configuration changes nothing (logged). Loop
 * thread. */
struct rs_maintenance;
struct rs_space;
void rs__server_retention_reload(struct rs_server *srv, struct rs_maintenance *m,
                                 struct rs_space *space, struct rs_retention_settings *cur);

/* The HTTP handler: routes a request to its endpoint (routes.c). */
void rs__server_route(void *server, rs_http_conn *c, const struct rs_http_request *req);

/* The dashboard (dashboard.c): answers GET /, /index.html and /assets/... from the files built
 * into the server and returns true; false (nothing answered) for any other path. */
bool rs__server_dashboard(rs_http_conn *c, const struct rs_http_request *req);
/* Whether `path` is one of the dashboard's files (/, /index.html, /assets/...): served without a
 * token (auth.c), since they hold no data. */
bool rs__server_dashboard_path(const char *path);

/* Browser rules (browser_rules.c): what a web page could make a browser on an operator's machine
 * send. rs__server_browser_refused answers and returns true for: a Host that is not a loopback
 * name when the REST API listens on loopback (DNS rebinding), a request that changes data with an
 * Origin other than its Host (CSRF), a POST /v1/import whose Content-Type is not
 * application/x-protobuf (a form's text/plain needs no preflight) — 403, 403, 415. Requests
 * without Host or Origin (clients, scripts, HTTP/1.0) pass. rs__server_http_loopback: whether an
 * HTTP listen address ("127.0.0.1:7070") is a loopback one. */
bool rs__server_browser_refused(struct rs_server *srv, rs_http_conn *c,
                                const struct rs_http_request *req);
bool rs__server_http_loopback(const char *http_address);

/* POST /v1/import: one AgentBatch protobuf in the body, answered after its commit
 * (bulk_import.c). */
void rs__server_import(struct rs_server *srv, rs_http_conn *c, const struct rs_http_request *req,
                       const struct rs_auth_who *who);

/* GET /metrics: Prometheus text exposition (metrics.c). */
void rs__server_metrics(struct rs_server *srv, rs_http_conn *c);
/* Runs w in the query pool on behalf of the client on c (routes.c): 0, or the client has been
 * answered already (429 over its share, 503 when the pool is full or closing, with Retry-After),
 * w->done is never called and the caller frees w. Every REST read goes through here, so that no
 * query takes ingest's threads and every client's share is bounded (work_pool.h). */
int rs__server_query_submit(struct rs_server *srv, rs_http_conn *c, struct rs_work *w);
/* The same in the given pool (srv->queries or srv->queries_light). */
int rs__server_query_submit_to(struct rs_server *srv, rs_work_pool *pool, rs_http_conn *c,
                               struct rs_work *w);

/* POST /v1/jobs/{job}/capture (capture_routes.c): answered on the loop (the table is in memory;
 * GET /v1/jobs/{job}/captures is a query like the others, routes.c). */
void rs__server_capture_post(struct rs_server *srv, rs_http_conn *c,
                             const struct rs_http_request *req, const char *job,
                             const struct rs_auth_who *who);

/* GET /v1/gpus (hosts false) and /v1/hosts: the fleet view (fleet.c), in the query pool. */
void rs__server_fleet(struct rs_server *srv, rs_http_conn *c, bool hosts);

#endif
