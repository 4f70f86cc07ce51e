/* Agent assembly and lifecycle (see agent.h): collector socket -> aggregation -> forwarder, on one
 * libuv loop; a flush timer; graceful drain on SIGINT/SIGTERM. */
#include "node-agent/agent.h"

#include "common/auth_token.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "node-agent/aggregate.h"
#include "node-agent/forward.h"
#include "node-agent/gpu_sampler.h"
#include "node-agent/listener.h"
#include "proto/wire.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#define EARLY_FLUSH_BYTES (4u << 20) /* well under the server's request limit */
#define TICK_MS 50
/* Telemetry batches remembered, to tell a refused one from a refused profile batch. */
#define GPU_SEQS 64
/* GPU samples held between two telemetry batches: an hour of 64 GPUs at 1 Hz. */
#define GPU_MAX_SAMPLES (64u * 3600u)

struct agent {
    const struct rs_agent_config *cfg;
    uv_loop_t loop;
    uv_timer_t tick;
    uv_signal_t sigint, sigterm;
    rs_listener *listener;
    struct rs_listener_stats listener_final; /* its counters when it closed (drain, exit) */
    rs_aggregate *agg;
    rs_demangler *demangler; /* NULL with --demangle=false */
    rs_forward *fwd;
    struct rs_spool spool;
    bool has_spool;
    char host[256];
    uint64_t agent_id, boot_id, next_seq;
    uint64_t last_flush_ns, drain_deadline_ns, last_metrics_ns;
    uint64_t dropped; /* records this agent dropped (encode failures) */
    bool draining;
    rs_gpu_sampler *gpus; /* NULL with --gpu-telemetry=false */
    uint64_t last_gpu_flush_ns;
    uint64_t gpu_seqs[GPU_SEQS]; /* sequence numbers of the latest telemetry batches */
    unsigned gpu_seq_next;
    bool gpus_refused; /* the server refused telemetry (an older server): stop */
    uint64_t gpu_samples_sent, gpu_samples_lost;
    /* captures on demand: orders handed to collectors, orders for a rank with no collector here,
     * and the empty batches sent so that replies can carry orders */
    uint64_t capture_orders_sent, capture_orders_unroutable, polls;
};

/* The next batch's envelope (its sequence number reserved in the spool first). */
static void
envelope(struct agent *a, struct rs_agent_batch *env)
{
    int rc;

    if (a->has_spool && (rc = rs_spool_reserve(&a->spool, a->next_seq)) != 0)
        rs_log_limited(30, RS_LOG_ERROR, "RS-AGENT-SPOOL", "cannot reserve sequence numbers: %s",
                       rs_strerror(rc));
    env->agent_id = a->agent_id;
    env->boot_id = a->boot_id;
    env->batch_seq = a->next_seq;
    env->hello = (struct rs_agent_hello){a->agent_id,
                                         a->boot_id,
                                         a->host,
                                         RS_VERSION,
                                         {rs_clock_realtime_ns(), rs_clock_realtime_ns()}};
    env->agent_dropped = a->dropped;
}

static void
flush(struct agent *a)
{
    struct rs_agent_batch env = {0};
    uint8_t *data;
    size_t len;
    uint64_t lost;
    int rc;

    a->last_flush_ns = rs_clock_mono_ns();
    envelope(a, &env);
    rc = rs_aggregate_flush(a->agg, &env, &data, &len, &lost);
    if (rc == RS_E_NOT_FOUND)
        return;
    if (rc != 0) {
        a->dropped += lost;
        rs_log_limited(10, RS_LOG_ERROR, "RS-AGENT-ENCODE", "dropped %llu records: %s",
                       (unsigned long long)lost, rs_strerror(rc));
        return;
    }
    a->next_seq++;
    rs_forward_push(a->fwd, env.batch_seq, data, len, 0);
}

/* Sends the GPU samples held in a batch of their own (schema version 5): an older server refuses
 * it, and then loses no profile data (on_rejected stops telemetry). */
static void
flush_gpus(struct agent *a)
{
    struct rs_agent_batch env = {0};
    struct rs_gpu_sample *v;
    uint8_t *data;
    size_t len, n;
    int rc;

    a->last_gpu_flush_ns = rs_clock_mono_ns();
    if (!a->gpus || (n = rs_gpu_sampler_take(a->gpus, &v)) == 0)
        return;
    if (a->gpus_refused) {
        rs_gpu_samples_free(v);
        return;
    }
    envelope(a, &env);
    env.gpus = v;
    env.n_gpus = n > RS_WIRE_MAX_GPUS_PER_BATCH ? RS_WIRE_MAX_GPUS_PER_BATCH : (uint32_t)n;
    rc = rs_wire_agent_batch_encode(&env, &data, &len);
    rs_gpu_samples_free(v);
    if (rc != 0) {
        a->gpu_samples_lost += n;
        rs_log_limited(30, RS_LOG_ERROR, "RS-AGENT-ENCODE", "dropped %zu GPU samples: %s", n,
                       rs_strerror(rc));
        return;
    }
    a->gpu_samples_lost += n - env.n_gpus;
    a->gpu_samples_sent += env.n_gpus;
    a->gpu_seqs[a->gpu_seq_next++ % GPU_SEQS] = a->next_seq;
    a->next_seq++;
    rs_forward_push(a->fwd, env.batch_seq, data, len, 0);
}

/* A batch the server refused for good: when it was telemetry, the server does not take it (an
 * older server: schema version 5 is new to it), and sending more would only be refused again. */
static void
on_rejected(void *arg, uint64_t seq, const char *error)
{
    struct agent *a = arg;

    for (unsigned i = 0; i < GPU_SEQS && !a->gpus_refused; i++)
        if (a->gpu_seqs[i] == seq && seq != 0) {
            a->gpus_refused = true;
            rs_log(RS_LOG_WARN, "RS-AGENT-NVML",
                   "the server refused GPU telemetry (%s): not sending it any more (an older "
                   "server? profiles are not affected)",
                   error);
        }
}

/* Capture orders from a reply: each goes, as a control frame, to the collector of its rank. An
 * order comes again in every reply until the collector reports it started; the collector ignores
 * ids it has seen. */
static void
on_captures(void *arg, const struct rs_capture_order *orders, uint32_t n)
{
    struct agent *a = arg;
    uint8_t buf[RS_CAPTURE_MAX_CONTROL_BYTES];
    size_t len;

    for (uint32_t i = 0; i < n && a->listener; i++) {
        if (rs_capture_control_encode(&orders[i], 1, buf, sizeof buf, &len) != 0)
            continue; /* cannot happen: the reply decoder validated the order */
        if (rs_listener_send_control(a->listener, orders[i].job, orders[i].rank, buf, len) > 0) {
            a->capture_orders_sent++;
            rs_log(RS_LOG_DEBUG, "RS-AGENT-CAPTURE", "capture %llu handed to rank %u of %s",
                   (unsigned long long)orders[i].id, orders[i].rank, orders[i].job);
        } else {
            a->capture_orders_unroutable++;
            rs_log_limited(30, RS_LOG_INFO, "RS-AGENT-CAPTURE",
                           "capture %llu is for rank %u of %s, which has no collector connected "
                           "here (the server expires it)",
                           (unsigned long long)orders[i].id, orders[i].rank, orders[i].job);
        }
    }
}

/* With collectors connected, nothing queued and nothing sent for --control-poll-ms: an empty
 * batch (no ranks), so that the server has a reply to carry capture orders in — a job whose
 * collectors are idle or hung sends nothing of its own. Not spooled: it holds no data. */
static void
poll_server(struct agent *a, const struct rs_forward_stats *fs, uint64_t now)
{
    struct rs_agent_batch env = {0};
    struct rs_listener_stats ls;
    uint8_t *data;
    size_t len;

    if (a->cfg->control_poll_ms <= 0 || !a->listener || fs->queued_batches ||
        now - fs->last_send_ns < (uint64_t)a->cfg->control_poll_ms * 1000000ull)
        return;
    rs_listener_get_stats(a->listener, &ls);
    if (ls.collectors_now == 0)
        return;
    envelope(a, &env);
    if (rs_wire_agent_batch_encode(&env, &data, &len) != 0)
        return;
    a->next_seq++;
    a->polls++;
    rs_forward_push(a->fwd, env.batch_seq, data, len, 1 /* not spooled */);
}

static void
on_frame(void *arg, const struct rs_rank_batch *b)
{
    struct agent *a = arg;

    if (rs_aggregate_add(a->agg, b) != 0) {
        a->dropped +=
            (uint64_t)b->n_kernels + b->n_memcpys + b->n_collectives + b->n_steps + b->n_stalls;
        return;
    }
    if (rs_aggregate_pending_bytes(a->agg) >= EARLY_FLUSH_BYTES)
        flush(a);
}

static void
get_stats(struct agent *a, struct rs_forward_stats *fs, struct rs_listener_stats *ls)
{
    rs_forward_get_stats(a->fwd, fs);
    if (a->listener)
        rs_listener_get_stats(a->listener, ls);
    else
        *ls = a->listener_final; /* the exit line read zeros here once: the listener was gone */
}

/* --metrics-file: the counters as Prometheus text (the textfile collector's format). */
static void
write_metrics(struct agent *a)
{
    struct rs_forward_stats fs;
    struct rs_listener_stats ls;
    struct rs_gpu_sampler_stats gs;
    char text[8192];
    size_t n = 0;
    int rc;

    get_stats(a, &fs, &ls);
    rs_gpu_sampler_get_stats(a->gpus, &gs);
    const struct {
        const char *name, *type, *help;
        double v;
    } m[] = {
        {"rankscope_agent_collectors", "gauge", "Collectors connected now.", ls.collectors_now},
        {"rankscope_agent_collectors_total", "counter", "Collector connections accepted.",
         ls.collectors_total},
        {"rankscope_agent_collectors_refused_total", "counter",
         "Collector connections refused (over --max-collectors).", ls.collectors_refused},
        {"rankscope_agent_collectors_denied_total", "counter",
         "Collector connections refused: uid not in --allow-uids.", ls.collectors_denied},
        {"rankscope_agent_frames_total", "counter", "Frames received from collectors.", ls.frames},
        {"rankscope_agent_frames_refused_total", "counter",
         "Frames a refused or denied collector had sent before it was closed: counted, dropped.",
         ls.frames_refused},
        {"rankscope_agent_frames_rejected_total", "counter",
         "Frames refused as malformed, truncated or oversized.", ls.frames_rejected},
        {"rankscope_agent_frames_gap_total", "counter",
         "Frames collectors sent that this agent never received (skipped frame numbers).",
         rs_aggregate_frame_gaps(a->agg)},
        {"rankscope_agent_records_dropped_total", "counter",
         "Records the agent could not put into a batch.", a->dropped},
        {"rankscope_agent_batches_sent_total", "counter", "Batch sends to the server.", fs.sent},
        {"rankscope_agent_batches_acked_total", "counter", "Batches the server acknowledged.",
         fs.acked},
        {"rankscope_agent_batches_duplicate_total", "counter", "Batches the server already had.",
         fs.duplicates},
        {"rankscope_agent_batches_rejected_total", "counter", "Batches the server refused.",
         fs.rejected},
        {"rankscope_agent_batches_unauthorized_total", "counter",
         "Answers that the agent's token was missing, unknown or without the ingest role (the "
         "batch is kept and resent).",
         fs.unauthorized},
        {"rankscope_agent_batches_dropped_total", "counter",
         "Batches dropped unsent (queue over --max-queue-mb).", fs.dropped_batches},
        {"rankscope_agent_queued_batches", "gauge", "Batches not yet acknowledged.",
         fs.queued_batches},
        {"rankscope_agent_queued_bytes", "gauge", "Bytes of the batches not yet acknowledged.",
         fs.queued_bytes},
        {"rankscope_agent_capture_orders_total", "counter",
         "Capture orders received in the server's replies (an order repeats until started).",
         fs.capture_orders},
        {"rankscope_agent_capture_orders_sent_total", "counter",
         "Capture orders handed to a collector.", a->capture_orders_sent},
        {"rankscope_agent_capture_orders_unroutable_total", "counter",
         "Capture orders for a rank with no collector connected to this agent.",
         a->capture_orders_unroutable},
        {"rankscope_agent_control_frames_dropped_total", "counter",
         "Control frames not sent: the collector's socket was full or gone.", ls.control_dropped},
        {"rankscope_agent_polls_total", "counter",
         "Empty batches sent while idle so that replies can carry capture orders.", a->polls},
        {"rankscope_agent_gpus", "gauge", "GPUs sampled through NVML (0: no telemetry).", gs.gpus},
        {"rankscope_agent_gpu_samples_total", "counter", "GPU readings taken through NVML.",
         gs.samples},
        {"rankscope_agent_gpu_samples_sent_total", "counter",
         "GPU readings put into telemetry batches.", a->gpu_samples_sent},
        {"rankscope_agent_gpu_samples_dropped_total", "counter",
         "GPU readings dropped unsent (held over the bound, or not encodable).",
         gs.dropped + a->gpu_samples_lost},
        {"rankscope_agent_nvml_errors_total", "counter",
         "NVML queries that failed (fields left out of a reading).", gs.field_errors},
        {"rankscope_agent_nvml_unsupported_total", "counter",
         "NVML queries the GPU does not support.", gs.unsupported},
        {"rankscope_agent_nvml_missing_functions", "gauge",
         "NVML functions the loaded library does not export.", gs.missing_functions},
        {"rankscope_agent_gpu_xids_total", "counter", "XID events NVML reported.", gs.xids},
        {"rankscope_agent_gpu_sampling_cpu_seconds_total", "counter",
         "CPU time of the GPU sampling thread.", (double)gs.cpu_ns / 1e9},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0] && n < sizeof text; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n",
                              m[i].name, m[i].help, m[i].name, m[i].type, m[i].name, m[i].v);
    if (n >= sizeof text)
        n = sizeof text - 1;
    if ((rc = rs_fs_write_atomic(a->cfg->metrics_file, text, n)) != 0)
        rs_log_limited(60, RS_LOG_WARN, "RS-AGENT-METRICS", "cannot write %s: %s",
                       a->cfg->metrics_file, rs_strerror(rc));
    a->last_metrics_ns = rs_clock_mono_ns();
}

static void
log_stats(struct agent *a, int level, const char *id)
{
    struct rs_forward_stats fs;
    struct rs_listener_stats ls;

    get_stats(a, &fs, &ls);
    rs_log(level, id,
           "collectors %llu, frames %llu (rejected %llu), frame gaps %llu, "
           "batches sent %llu acked %llu duplicate %llu rejected %llu dropped %llu, "
           "queued %llu (%llu bytes)",
           (unsigned long long)ls.collectors_now, (unsigned long long)ls.frames,
           (unsigned long long)ls.frames_rejected,
           (unsigned long long)rs_aggregate_frame_gaps(a->agg), (unsigned long long)fs.sent,
           (unsigned long long)fs.acked, (unsigned long long)fs.duplicates,
           (unsigned long long)fs.rejected, (unsigned long long)fs.dropped_batches,
           (unsigned long long)fs.queued_batches, (unsigned long long)fs.queued_bytes);
}

static void
stop_loop(struct agent *a)
{
    uv_timer_stop(&a->tick);
    uv_close((uv_handle_t *)&a->tick, NULL);
    uv_close((uv_handle_t *)&a->sigint, NULL);
    uv_close((uv_handle_t *)&a->sigterm, NULL);
    rs_forward_close(a->fwd);
}

static void
on_tick(uv_timer_t *t)
{
    struct agent *a = t->data;
    uint64_t now = rs_clock_mono_ns(), interval_ms = (uint64_t)a->cfg->flush_ms;
    struct rs_forward_stats fs;

    rs_forward_get_stats(a->fwd, &fs);
    if (fs.server_min_flush_ms > interval_ms) /* the server asked us to slow down */
        interval_ms = fs.server_min_flush_ms;
    if (!a->draining && now - a->last_flush_ns >= interval_ms * 1000000ull)
        flush(a);
    if (!a->draining && now - a->last_gpu_flush_ns >= (uint64_t)a->cfg->gpu_send_s * 1000000000ull)
        flush_gpus(a);
    if (!a->draining) {
        rs_forward_get_stats(a->fwd, &fs);
        poll_server(a, &fs, now);
    }
    rs_forward_pump(a->fwd);
    if (a->cfg->metrics_file[0] &&
        now - a->last_metrics_ns >= (uint64_t)a->cfg->metrics_s * 1000000000ull)
        write_metrics(a);
    if (!a->draining)
        return;
    if (fs.queued_batches == 0 || now >= a->drain_deadline_ns) {
        if (fs.queued_batches)
            rs_log(RS_LOG_WARN, "RS-AGENT-DRAIN", "%llu batches not delivered%s",
                   (unsigned long long)fs.queued_batches,
                   a->has_spool ? " (kept in the spool for the next start)" : " (lost)");
        stop_loop(a);
    }
}

static void
on_signal(uv_signal_t *h, int signum)
{
    struct agent *a = h->data;

    if (a->draining)
        return;
    rs_log(RS_LOG_INFO, "RS-AGENT-STOP", "signal %d: flushing and draining (up to %lld ms)", signum,
           (long long)a->cfg->drain_timeout_ms);
    a->draining = true;
    rs_listener_get_stats(a->listener, &a->listener_final);
    rs_listener_close(a->listener);
    a->listener = NULL;
    rs_aggregate_close_windows(a->agg); /* nothing more comes: summarize what is open */
    flush(a);
    flush_gpus(a);
    a->drain_deadline_ns = rs_clock_mono_ns() + (uint64_t)a->cfg->drain_timeout_ms * 1000000ull;
}

static void
load_spooled(void *arg, uint64_t seq, uint8_t *data, size_t len)
{
    rs_forward_push(arg, seq, data, len, 1);
}

/* Parses --allow-uids into uids (at most max). Returns the count, or -1 (a bad entry). */
static int
parse_uids(const char *text, uint32_t *uids, int max)
{
    int n = 0;

    for (const char *p = text; *p;) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || errno || v > UINT32_MAX || n == max || (*end && *end != ','))
            return -1;
        uids[n++] = (uint32_t)v;
        p = *end ? end + 1 : end;
    }
    return n;
}

/* The socket's directory: created (0755) when missing; refused when others may replace what is in
 * it (writable by group or others without the sticky bit). Returns 0, or -errno with why. */
static int
prepare_socket_dir(const char *socket_path, char *why, size_t why_len)
{
    char dir[PATH_MAX];
    struct stat st;
    int rc;

    snprintf(dir, sizeof dir, "%s", socket_path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (stat(dir, &st) != 0 && (rc = rs_fs_mkdir_p(dir)) != 0) {
        snprintf(why, why_len,
                 "cannot create %s: %s (run the agent as root, or give --socket "
                 "PATH and the same RANKSCOPE_AGENT_SOCKET to the jobs)",
                 dir, rs_strerror(rc));
        return rc;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, why_len, "%s is not a directory", dir);
        return -ENOTDIR;
    }
    if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
        snprintf(why, why_len,
                 "%s is writable by other users (mode %03o, no sticky bit): one could replace the "
                 "socket and receive the jobs' data; use a directory only root (or this user) "
                 "may write",
                 dir, (unsigned)(st.st_mode & 0777));
        return -EPERM;
    }
    return 0;
}

static int
write_ready_file(const struct agent *a)
{
    char text[512];
    int n = snprintf(text, sizeof text, "pid=%d\nsocket=%s\nagent_id=%016llx\n", (int)getpid(),
                     a->cfg->socket, (unsigned long long)a->agent_id);
    return rs_fs_write_atomic(a->cfg->ready_file, text, (size_t)n);
}

int
rs_agent_run(const struct rs_agent_config *cfg)
{
    struct agent a;
    struct rs_forward_options fopts;
    int rc, status = 1;

    memset(&a, 0, sizeof a);
    a.cfg = cfg;
    signal(SIGPIPE, SIG_IGN);
    gethostname(a.host, sizeof a.host - 1);
    a.boot_id = rs_random_u64();
    a.agent_id = rs_random_u64();
    a.next_seq = 1;
    char token[RS_AUTH_TOKEN_MAX + 1] = "", err[512];
    if (cfg->token_file[0] &&
        rs_auth_token_read_file(cfg->token_file, token, sizeof token, err, sizeof err) != 0) {
        rs_log(RS_LOG_ERROR, "RS-AGENT-TOKEN", "%s", err);
        return 1;
    }
    if (cfg->spool[0]) {
        if ((rc = rs_spool_open(&a.spool, cfg->spool, &a.agent_id, &a.next_seq)) != 0) {
            rs_log(RS_LOG_ERROR, "RS-AGENT-SPOOL", "cannot open spool %s: %s", cfg->spool,
                   rs_strerror(rc));
            return 1;
        }
        a.has_spool = true;
    }
    uv_loop_init(&a.loop);
    fopts = (struct rs_forward_options){.server_url = cfg->server,
                                        .window = (unsigned)cfg->window,
                                        .max_queue_bytes = (uint64_t)cfg->max_queue_mb << 20,
                                        .reply_timeout_ms = (unsigned)cfg->reply_timeout_ms,
                                        .spool = a.has_spool ? &a.spool : NULL,
                                        .token = token,
                                        .on_rejected = on_rejected,
                                        .on_rejected_arg = &a,
                                        .on_captures = on_captures,
                                        .on_captures_arg = &a,
                                        .tls_ca = cfg->tls_ca,
                                        .tls_server_name = cfg->tls_server_name,
                                        .tls_cert = cfg->tls_cert,
                                        .tls_key = cfg->tls_key};
    if ((rc = rs_aggregate_new(&a.agg)) != 0 ||
        (cfg->demangle && (rc = rs_demangler_new(&a.demangler)) != 0) ||
        (rc = rs_forward_start(&a.loop, &fopts, &a.fwd)) != 0)
        goto out;
    rs_aggregate_set_demangler(a.agg, a.demangler);
    if (cfg->summarize)
        rs_aggregate_set_summary(a.agg, (uint64_t)cfg->summary_window_s * 1000000000ull);
    if (cfg->gpu_telemetry) {
        struct rs_gpu_sampler_options go = {cfg->nvml_library, (uint64_t)cfg->gpu_interval_ms,
                                            GPU_MAX_SAMPLES};
        if ((rc = rs_gpu_sampler_start(&go, &a.gpus)) != 0)
            rs_log(RS_LOG_WARN, "RS-AGENT-NVML", "no GPU telemetry: cannot start its thread: %s",
                   rs_strerror(rc));
    }
    a.last_gpu_flush_ns = rs_clock_mono_ns();
    if (a.has_spool) {
        struct rs_spool_load_stats ls = {0};
        rs_spool_load(&a.spool, load_spooled, a.fwd, &ls);
        if (ls.next_seq > a.next_seq) {
            rs_log(RS_LOG_WARN, "RS-AGENT-SPOOL-SEQ",
                   "%s/agent.seq is behind the spooled batches (next %llu, spooled up to %llu): "
                   "new batches continue after them",
                   cfg->spool, (unsigned long long)a.next_seq,
                   (unsigned long long)(ls.next_seq - 1));
            a.next_seq = ls.next_seq;
        }
        struct rs_forward_stats fs;
        rs_forward_get_stats(a.fwd, &fs);
        if (ls.quarantined)
            rs_log(RS_LOG_WARN, "RS-AGENT-SPOOL-QUARANTINE",
                   "%u spooled batches are not batches of this agent (corrupt, or another "
                   "agent's): moved to %s/%s, not sent",
                   ls.quarantined, cfg->spool, RS_SPOOL_QUARANTINE_DIR);
        if (fs.queued_batches || ls.unreadable)
            rs_log(RS_LOG_INFO, "RS-AGENT-SPOOL", "resending %llu spooled batches (%u unreadable)",
                   (unsigned long long)fs.queued_batches, ls.unreadable);
    }
    uint32_t uids[256];
    int n_uids = parse_uids(cfg->allow_uids, uids, 256);
    char why[PATH_MAX + 256] = "";
    if (n_uids < 0) {
        rs_log(RS_LOG_ERROR, "RS-AGENT-SOCKET",
               "--allow-uids '%s' is not a list of uids (1000,1001)", cfg->allow_uids);
        rs_forward_close(a.fwd);
        goto out;
    }
    struct rs_listener_options lopts = {(unsigned)cfg->max_collectors, n_uids ? uids : NULL,
                                        (size_t)n_uids};
    if ((rc = prepare_socket_dir(cfg->socket, why, sizeof why)) != 0 ||
        (rc = rs_listener_start(&a.loop, cfg->socket, &lopts, on_frame, &a, &a.listener)) != 0) {
        if (!why[0] && rc == -EADDRINUSE)
            snprintf(why, sizeof why,
                     "another process listens there (another agent, or a "
                     "squatter waiting for the jobs' data): stop it or choose another --socket");
        else if (!why[0] && rc == -EEXIST)
            snprintf(why, sizeof why, "a file that is not a socket is there");
        rs_log(RS_LOG_ERROR, "RS-AGENT-SOCKET", "cannot listen on %s: %s", cfg->socket,
               why[0] ? why : rs_strerror(rc));
        rs_forward_close(a.fwd);
        goto out;
    }
    uv_timer_init(&a.loop, &a.tick);
    a.tick.data = &a;
    uv_timer_start(&a.tick, on_tick, TICK_MS, TICK_MS);
    uv_signal_init(&a.loop, &a.sigint);
    uv_signal_init(&a.loop, &a.sigterm);
    a.sigint.data = a.sigterm.data = &a;
    uv_signal_start(&a.sigint, on_signal, SIGINT);
    uv_signal_start(&a.sigterm, on_signal, SIGTERM);
    a.last_flush_ns = rs_clock_mono_ns();
    if (cfg->ready_file[0] && (rc = write_ready_file(&a)) != 0)
        rs_log(RS_LOG_ERROR, "RS-AGENT-READY", "cannot write %s: %s", cfg->ready_file,
               rs_strerror(rc));
    rs_log(RS_LOG_INFO, "RS-AGENT-START",
           "rankscope-agent %s: collectors on %s, server %s, agent id %016llx, spool %s",
           RS_VERSION, cfg->socket, cfg->server, (unsigned long long)a.agent_id,
           a.has_spool ? cfg->spool : "(memory only)");
    uv_run(&a.loop, UV_RUN_DEFAULT);
    log_stats(&a, RS_LOG_INFO, "RS-AGENT-EXIT");
    if (cfg->metrics_file[0])
        write_metrics(&a);
    status = 0;
out:
    uv_run(&a.loop, UV_RUN_DEFAULT);
    rs_gpu_sampler_stop(a.gpus);
    rs_forward_free(a.fwd);
    rs_aggregate_free(a.agg);
    rs_demangler_free(a.demangler);
    uv_loop_close(&a.loop);
    if (a.has_spool)
        rs_spool_close(&a.spool);
    if (cfg->ready_file[0])
        unlink(cfg->ready_file);
    return status;
}
