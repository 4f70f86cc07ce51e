/* Acknowledged, windowed, resending agent -> server forwarding over NNG req (see forward.h). */
#include "node-agent/forward.h"

#include "common/auth_token.h"
#include "node-agent/tls_probe.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "proto/nng_tls.h"
#include "proto/wire.h"

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>
#include <nng/supplemental/util/platform.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct item {
    struct item *prev, *next;
    uint64_t seq;
    uint8_t *data;
    size_t len;
    bool in_flight;
    uint64_t not_before_ns; /* back-off after a failure */
    unsigned attempts;
};

enum ctx_state { CTX_IDLE, CTX_SEND, CTX_RECV, CTX_DONE };

struct fwd_ctx {
    rs_forward *f;
    nng_ctx ctx;
    nng_aio *aio;
    /* The loop's view: true from send_item until finish. The loop never reads `state`, which the
     * NNG thread moves along while the request is out (that read was a data race, found by
     * make tsan); the two threads hand a context over through `done`, under the lock. */
    bool busy;
    enum ctx_state state;
    struct item *item;
    int result;     /* NNG result of the failed or final step */
    nng_msg *reply; /* on success */
    struct fwd_ctx *next_done;
};

struct rs_forward {
    uv_loop_t *loop;
    uv_async_t async;
    struct rs_forward_options opts;
    nng_socket sock;
    nng_dialer dialer;
    struct fwd_ctx *ctxs;
    nng_mtx *lock;
    struct fwd_ctx *done; /* under lock */
    atomic_bool closing;
    atomic_bool connected_once; /* a connection (a TLS session for tls+tcp://) was made */
    nng_tls_config *tls;        /* tls+tcp://: the dialer's configuration, held for probes */
    nng_tls_config *tls_any;    /* the same client certificate, any server's (probes only) */
    char tls_name[256];         /* the name the server's certificate is checked against */
    rs_tls_probe *probe;        /* the latest diagnostic connection (tls_probe.h) */
    uint64_t probe_ns;          /* when it started */
    struct item *head, *tail; /* sequence order */
    struct rs_forward_stats stats;
    uint8_t token_field[RS_AUTH_TOKEN_MAX + 8]; /* AgentBatch.auth_token, appended to each send */
    size_t token_field_len;
};

static void probe(rs_forward *f);

static void
unlink_item(rs_forward *f, struct item *it)
{
    if (it->prev)
        it->prev->next = it->next;
    else
        f->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        f->tail = it->prev;
    f->stats.queued_batches--;
    f->stats.queued_bytes -= it->len;
}

static void
drop_item(rs_forward *f, struct item *it, bool keep_spooled)
{
    unlink_item(f, it);
    if (f->opts.spool && !keep_spooled)
        rs_spool_remove(f->opts.spool, it->seq);
    free(it->data);
    free(it);
}

/* NNG task-queue thread. */
static void
ctx_callback(void *p)
{
    struct fwd_ctx *c = p;
    rs_forward *f = c->f;
    int rv = nng_aio_result(c->aio);

    if (c->state == CTX_SEND && rv == 0) {
        c->state = CTX_RECV;
        nng_ctx_recv(c->ctx, c->aio);
        return;
    }
    if (c->state == CTX_SEND)
        nng_msg_free(nng_aio_get_msg(c->aio)); /* not sent: still ours */
    c->result = rv;
    c->reply = rv == 0 ? nng_aio_get_msg(c->aio) : NULL;
    c->state = CTX_DONE;
    nng_mtx_lock(f->lock);
    c->next_done = f->done;
    f->done = c;
    nng_mtx_unlock(f->lock);
    uv_async_send(&f->async);
}

static void
retry_later(rs_forward *f, struct item *it, unsigned delay_ms)
{
    it->in_flight = false;
    it->attempts++;
    it->not_before_ns = rs_clock_mono_ns() + (uint64_t)delay_ms * 1000000ull;
    f->stats.retried++;
}

static void
finish(rs_forward *f, struct fwd_ctx *c)
{
    struct item *it = c->item;
    struct rs_server_reply r;
    char err[512];
    int rc;

    c->item = NULL;
    c->state = CTX_IDLE;
    c->busy = false;
    if (c->result != 0 && !atomic_load(&f->connected_once) &&
        strncmp(f->opts.server_url, "tls+", 4) == 0) {
        /* NNG redials without saying why a handshake failed: a connection of our own says */
        rs_log_limited(30, RS_LOG_WARN, "RS-AGENT-TLS",
                       "no TLS session with %s yet (batch %llu: %s); a test connection says why",
                       f->opts.server_url, (unsigned long long)it->seq, nng_strerror(c->result));
        probe(f);
        retry_later(f, it, it->attempts < 5 ? 200u << it->attempts : 5000);
        return;
    }
    if (c->result != 0) {
        rs_log_limited(30, RS_LOG_WARN, "RS-AGENT-SEND", "batch %llu not delivered: %s",
                       (unsigned long long)it->seq, nng_strerror(c->result));
        retry_later(f, it, it->attempts < 5 ? 200u << it->attempts : 5000);
        return;
    }
    rc = rs_wire_reply_decode(nng_msg_body(c->reply), nng_msg_len(c->reply), &r, err, sizeof err);
    nng_msg_free(c->reply);
    c->reply = NULL;
    if (rc != 0 || r.batch_seq != it->seq) {
        rs_log_limited(30, RS_LOG_WARN, "RS-AGENT-REPLY", "bad reply for batch %llu: %s",
                       (unsigned long long)it->seq, rc ? rs_strerror(rc) : "sequence mismatch");
        retry_later(f, it, 1000);
        return;
    }
    f->stats.server_min_flush_ms = r.control.min_flush_ms;
    if (r.control.n_captures) {
        f->stats.capture_orders += r.control.n_captures;
        if (f->opts.on_captures)
            f->opts.on_captures(f->opts.on_captures_arg, r.control.captures, r.control.n_captures);
    }
    switch (r.status) {
    case RS_REPLY_ACK:
        f->stats.acked++;
        drop_item(f, it, false);
        break;
    case RS_REPLY_DUPLICATE:
        f->stats.duplicates++;
        drop_item(f, it, false);
        break;
    case RS_REPLY_REJECTED:
        f->stats.rejected++;
        rs_log(RS_LOG_ERROR, "RS-AGENT-REJECTED", "server refused batch %llu: %s",
               (unsigned long long)it->seq, err);
        if (f->opts.on_rejected)
            f->opts.on_rejected(f->opts.on_rejected_arg, it->seq, err);
        drop_item(f, it, false);
        break;
    case RS_REPLY_UNAUTHORIZED:
        f->stats.unauthorized++;
        rs_log_limited(30, RS_LOG_ERROR, "RS-AGENT-UNAUTHORIZED",
                       "server refused batch %llu, kept to resend: %s (the agent's --token-file "
                       "must hold a token with the ingest role)",
                       (unsigned long long)it->seq, err);
        retry_later(f, it, r.retry_after_ms ? r.retry_after_ms : 10000);
        break;
    default: /* RETRY */
        retry_later(f, it, r.retry_after_ms ? r.retry_after_ms : 1000);
        break;
    }
}

static void
on_async(uv_async_t *h)
{
    rs_forward *f = h->data;
    struct fwd_ctx *list;

    nng_mtx_lock(f->lock);
    list = f->done;
    f->done = NULL;
    nng_mtx_unlock(f->lock);
    while (list) {
        struct fwd_ctx *next = list->next_done;
        finish(f, list);
        list = next;
    }
    rs_forward_pump(f);
}

static void
send_item(struct fwd_ctx *c, struct item *it)
{
    nng_msg *m;

    if (nng_msg_alloc(&m, it->len + c->f->token_field_len) != 0)
        return;
    memcpy(nng_msg_body(m), it->data, it->len);
    /* protobuf merges concatenated messages: the token travels without being spooled */
    memcpy((uint8_t *)nng_msg_body(m) + it->len, c->f->token_field, c->f->token_field_len);
    it->in_flight = true;
    c->item = it;
    c->busy = true;
    c->state = CTX_SEND;
    c->f->stats.sent++;
    c->f->stats.last_send_ns = rs_clock_mono_ns();
    nng_aio_set_msg(c->aio, m);
    nng_ctx_send(c->ctx, c->aio);
}

void
rs_forward_pump(rs_forward *f)
{
    uint64_t now = rs_clock_mono_ns();
    struct item *it = f->head;

    if (atomic_load(&f->closing))
        return;
    for (unsigned i = 0; i < f->opts.window; i++) {
        struct fwd_ctx *c = &f->ctxs[i];
        if (c->busy)
            continue;
        while (it && (it->in_flight || it->not_before_ns > now))
            it = it->next;
        if (!it)
            return;
        send_item(c, it);
    }
}

int
rs_forward_push(rs_forward *f, uint64_t seq, uint8_t *data, size_t len, int from_spool)
{
    struct item *it = calloc(1, sizeof *it);
    int rc;

    if (!it) {
        free(data);
        f->stats.dropped_batches++;
        return -ENOMEM;
    }
    if (f->opts.spool && !from_spool && (rc = rs_spool_put(f->opts.spool, seq, data, len))) {
        rs_log_limited(30, RS_LOG_ERROR, "RS-AGENT-SPOOL", "cannot spool batch %llu: %s",
                       (unsigned long long)seq, rs_strerror(rc));
    }
    *it = (struct item){.seq = seq, .data = data, .len = len, .prev = f->tail};
    if (f->tail)
        f->tail->next = it;
    else
        f->head = it;
    f->tail = it;
    f->stats.queued_batches++;
    f->stats.queued_bytes += len;
    /* Over budget: drop the oldest batches not in flight (counted, logged). */
    for (struct item *old = f->head; f->stats.queued_bytes > f->opts.max_queue_bytes && old;) {
        struct item *next = old->next;
        if (!old->in_flight && old != it) {
            rs_log_limited(
                10, RS_LOG_WARN, "RS-AGENT-QUEUE-FULL", "queue over %llu bytes: dropped batch %llu",
                (unsigned long long)f->opts.max_queue_bytes, (unsigned long long)old->seq);
            f->stats.dropped_batches++;
            drop_item(f, old, false);
        }
        old = next;
    }
    rs_forward_pump(f);
    return 0;
}

/* A diagnostic connection (tls_probe.h), at most one every 30 s. */
static void
probe(rs_forward *f)
{
    uint64_t now = rs_clock_mono_ns();

    if (!f->tls || (f->probe && !rs_tls_probe_done(f->probe)) ||
        (f->probe && now - f->probe_ns < 30000000000ull))
        return;
    rs_tls_probe_free(f->probe);
    f->probe = NULL;
    f->probe_ns = now;
    if (rs_tls_probe_start(f->opts.server_url, f->tls, f->tls_any, f->tls_name, &f->probe) != 0)
        f->probe = NULL;
}

static void
on_pipe_added(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    rs_forward *f = arg;
    atomic_store(&f->connected_once, true);
}

/* A tls+tcp:// server: the CA to verify it, the name it must carry (by default the URL's host),
 * this agent's certificate if any. Refuses TLS settings for a plain URL. Returns an NNG code. */
static int
set_tls(rs_forward *f)
{
    const struct rs_forward_options *o = &f->opts;
    bool tls = strncmp(o->server_url, "tls+", 4) == 0;
    struct rs_nng_tls_files files = {o->tls_cert, o->tls_key, o->tls_ca, o->tls_server_name,
                                     false};
    nng_tls_config *conf = NULL;
    nng_url *url = NULL;
    char err[512];
    int rv;

    if (!tls) {
        if ((o->tls_ca && o->tls_ca[0]) || (o->tls_cert && o->tls_cert[0])) {
            rs_log(RS_LOG_ERROR, "RS-AGENT-TLS",
                   "--tls-ca and --tls-cert need a tls+tcp:// --server, and it is %s",
                   o->server_url);
            return NNG_EINVAL;
        }
        return 0;
    }
    if (!(o->tls_server_name && o->tls_server_name[0])) {
        struct in6_addr ip;
        if ((rv = nng_url_parse(&url, o->server_url)) != 0)
            return rv;
        files.server_name = url->u_hostname;
        if (inet_pton(AF_INET, url->u_hostname, &ip) == 1 ||
            inet_pton(AF_INET6, url->u_hostname, &ip) == 1) {
            /* measured: a certificate carrying IP:127.0.0.1 fails for tls+tcp://127.0.0.1 */
            rs_log(RS_LOG_ERROR, "RS-AGENT-TLS",
                   "%s: the TLS library here (mbedTLS 2.28, Debian 12's NNG) checks a server's "
                   "certificate against DNS names only, not IP addresses: give --tls-server-name, "
                   "a DNS name its certificate carries",
                   o->server_url);
            nng_url_free(url);
            return NNG_EINVAL;
        }
    }
    rv = rs_nng_tls_config_new(false, &files, &conf, NULL, err, sizeof err);
    snprintf(f->tls_name, sizeof f->tls_name, "%s", files.server_name);
    if (rv == 0) { /* for tls_probe.c: tells whose certificate a failed handshake refused */
        struct rs_nng_tls_files any = {o->tls_cert, o->tls_key, NULL, NULL, true};
        if ((rv = rs_nng_tls_config_new(false, &any, &f->tls_any, NULL, err, sizeof err)) != 0)
            nng_tls_config_free(conf);
    }
    if (url)
        nng_url_free(url);
    if (rv != 0) {
        rs_log(RS_LOG_ERROR, "RS-AGENT-TLS", "%s: %s", o->server_url, err);
        return rv == -ENOMEM ? NNG_ENOMEM : NNG_EINVAL;
    }
    if ((rv = nng_dialer_set_ptr(f->dialer, NNG_OPT_TLS_CONFIG, conf)) != 0) {
        nng_tls_config_free(conf);
        return rv;
    }
    f->tls = conf; /* the dialer holds it too */
    return 0;
}

int
rs_forward_start(uv_loop_t *loop, const struct rs_forward_options *opts, rs_forward **out)
{
    rs_forward *f = calloc(1, sizeof *f);
    int rv;

    if (!f)
        return -ENOMEM;
    f->loop = loop;
    f->opts = *opts;
    if (opts->token && opts->token[0] &&
        rs_wire_auth_token_field(opts->token, f->token_field, sizeof f->token_field,
                                 &f->token_field_len) != 0) {
        free(f);
        return RS_E_CONFIG;
    }
    f->opts.token = NULL; /* the caller's memory; only the encoded field is kept */
    if (f->opts.window == 0)
        f->opts.window = 4;
    if ((rv = nng_mtx_alloc(&f->lock)) || (rv = nng_req0_open(&f->sock)))
        goto fail;
    /* Resend a request whose reply is lost (server restarted): requests are idempotent. */
    nng_socket_set_ms(f->sock, NNG_OPT_REQ_RESENDTIME, 5000);
    if ((rv = nng_dialer_create(&f->dialer, f->sock, opts->server_url)))
        goto fail;
    if ((rv = set_tls(f)) != 0 ||
        (rv = nng_pipe_notify(f->sock, NNG_PIPE_EV_ADD_POST, on_pipe_added, f)) != 0)
        goto fail;
    nng_dialer_set_ms(f->dialer, NNG_OPT_RECONNMINT, 100);
    nng_dialer_set_ms(f->dialer, NNG_OPT_RECONNMAXT, 2000);
    nng_dialer_set_size(f->dialer, NNG_OPT_RECVMAXSZ, RS_WIRE_MAX_REPLY_BYTES);
    /* Non-blocking: the server may not be up yet; NNG keeps redialing. */
    if ((rv = nng_dialer_start(f->dialer, NNG_FLAG_NONBLOCK)))
        goto fail;
    if (!(f->ctxs = calloc(f->opts.window, sizeof *f->ctxs))) {
        rv = NNG_ENOMEM;
        goto fail;
    }
    for (unsigned i = 0; i < f->opts.window; i++) {
        struct fwd_ctx *c = &f->ctxs[i];
        c->f = f;
        if ((rv = nng_aio_alloc(&c->aio, ctx_callback, c)) || (rv = nng_ctx_open(&c->ctx, f->sock)))
            goto fail;
        nng_aio_set_timeout(c->aio, (nng_duration)opts->reply_timeout_ms);
    }
    uv_async_init(loop, &f->async, on_async);
    f->async.data = f;
    *out = f;
    return 0;
fail:
    rs_log(RS_LOG_ERROR, "RS-AGENT-DIAL", "cannot set up %s: %s", opts->server_url,
           nng_strerror(rv));
    nng_close(f->sock);
    for (unsigned i = 0; f->ctxs && i < f->opts.window; i++)
        if (f->ctxs[i].aio)
            nng_aio_free(f->ctxs[i].aio);
    free(f->ctxs);
    if (f->lock)
        nng_mtx_free(f->lock);
    if (f->tls)
        nng_tls_config_free(f->tls);
    if (f->tls_any)
        nng_tls_config_free(f->tls_any);
    free(f);
    return RS_E_CONFIG;
}

void
rs_forward_get_stats(const rs_forward *f, struct rs_forward_stats *out)
{
    *out = f->stats;
}

void
rs_forward_close(rs_forward *f)
{
    if (!f)
        return;
    atomic_store(&f->closing, true);
    for (unsigned i = 0; i < f->opts.window; i++)
        nng_aio_stop(f->ctxs[i].aio);
    nng_close(f->sock);
    uv_close((uv_handle_t *)&f->async, NULL);
}

void
rs_forward_free(rs_forward *f)
{
    if (!f)
        return;
    for (unsigned i = 0; i < f->opts.window; i++) {
        if (f->ctxs[i].reply) /* a completion that raced with close */
            nng_msg_free(f->ctxs[i].reply);
        nng_aio_free(f->ctxs[i].aio);
    }
    while (f->head)
        drop_item(f, f->head, true); /* spooled batches stay on disk for the next start */
    rs_tls_probe_free(f->probe);
    if (f->tls)
        nng_tls_config_free(f->tls);
    if (f->tls_any)
        nng_tls_config_free(f->tls_any);
    free(f->ctxs);
    nng_mtx_free(f->lock);
    free(f);
}
