/* Acknowledged, windowed, resending agent -> server forwarding over NNG req (see forward.h). */
#include "node-agent/forward.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "proto/wire.h"

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/util/platform.h>
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
    struct item *head, *tail; /* sequence order */
    struct rs_forward_stats stats;
};

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

    if (nng_msg_alloc(&m, it->len) != 0)
        return;
    memcpy(nng_msg_body(m), it->data, it->len);
    it->in_flight = true;
    c->item = it;
    c->busy = true;
    c->state = CTX_SEND;
    c->f->stats.sent++;
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

int
rs_forward_start(uv_loop_t *loop, const struct rs_forward_options *opts, rs_forward **out)
{
    rs_forward *f = calloc(1, sizeof *f);
    int rv;

    if (!f)
        return -ENOMEM;
    f->loop = loop;
    f->opts = *opts;
    if (f->opts.window == 0)
        f->opts.window = 4;
    if ((rv = nng_mtx_alloc(&f->lock)) || (rv = nng_req0_open(&f->sock)))
        goto fail;
    /* Resend a request whose reply is lost (server restarted): requests are idempotent. */
    nng_socket_set_ms(f->sock, NNG_OPT_REQ_RESENDTIME, 5000);
    if ((rv = nng_dialer_create(&f->dialer, f->sock, opts->server_url)))
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
    free(f->ctxs);
    nng_mtx_free(f->lock);
    free(f);
}
