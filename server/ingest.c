/* NNG rep ingest with contexts + aio, handed to the libuv loop (see ingest.h). */
#include "server/ingest.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "proto/wire.h"
#include "proto/wire_head.h"

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/supplemental/tls/tls.h>
#include <nng/supplemental/util/platform.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ctx_state { CTX_RECV, CTX_BUSY, CTX_SEND };

struct ingest_ctx {
    rs_ingest *ing;
    nng_ctx ctx;
    nng_aio *aio;
    enum ctx_state state;
    nng_msg *msg;         /* received, waiting for the loop */
    struct rs_work decode; /* the request decoded on ingest's threads */
    rs_wire_agent_batch *batch;
    int decode_rc;
    uint64_t agent_id, batch_seq; /* of the request being answered (its head, wire_head.h);
                                   * agent_id also says whose capture orders its reply carries */
    char principal[RS_STORE_PRINCIPAL_MAX + 1]; /* whose token it carried ("" without auth) */
    struct ingest_ctx *next; /* in the ready list */
};

struct rs_ingest {
    uv_loop_t *loop;
    uv_async_t async;
    nng_socket sock;
    nng_listener listener;
    rs_writer *writer;
    struct rs_counters *counters;
    rs_work_pool *decoders;
    rs_agent_pipes *pipes;
    struct ingest_ctx *ctxs;
    unsigned n_ctxs;
    nng_mtx *lock;
    struct ingest_ctx *ready; /* LIFO of contexts with a received message, under lock */
    atomic_bool closing;
    pthread_t closer;        /* closes the socket (close_socket), when started */
    bool closer_started;
    atomic_bool sock_closed; /* nng_close returned and every context's aio is stopped */
    uint64_t close_ns;       /* monotonic: rs_ingest_close */
    unsigned writer_queue;
    int (*authorize)(void *, const char *, const char *, char *, size_t, char *, size_t);
    void *authorize_arg;
    nng_tls_config *tls, *tls_prev; /* the configuration in use and the one before, held */
    rs_captures *captures;          /* NULL: no captures */
    char url[256];
};

static void
arm_recv(struct ingest_ctx *c)
{
    if (atomic_load(&c->ing->closing))
        return;
    c->state = CTX_RECV;
    nng_ctx_recv(c->ctx, c->aio);
}

/* Sends a reply on the context; callable from the loop or the writer thread. */
#define SLOW_DOWN_FLUSH_MS 2000
/* An agent without a valid token resends this much later: its operator may fix the token (the
 * server's file on SIGHUP, or the agent's and a restart) without data lost, and a refused agent
 * costs the server one decode per window slot per 10 s. */
#define UNAUTHORIZED_RETRY_MS 10000

static void
send_reply(struct ingest_ctx *c, uint64_t seq, enum rs_reply_status status, const char *error,
           uint32_t retry_after_ms)
{
    /* Closing: no reply (the agent resends to the next server, which deduplicates). NNG 1.5.2
     * loses a reply sent as its connection closes: rep0 hands it to a pipe whose send aio its
     * close has stopped, and frees only the receive side (LeakSanitizer in test 288). */
    if (atomic_load(&c->ing->closing))
        return;
    struct rs_server_reply r = {seq, status, error, retry_after_ms, {0}};
    uint64_t queued = RS_COUNT_GET(c->ing->counters, writer_queue_now);

    /* Backpressure: a writer queue past half full asks every agent to batch more per request. */
    if (queued * 2 > c->ing->writer_queue)
        r.control.min_flush_ms = SLOW_DOWN_FLUSH_MS;
    /* Capture orders ride on the replies to authorized batches of the agent serving the ranks */
    if (c->ing->captures && c->agent_id &&
        (status == RS_REPLY_ACK || status == RS_REPLY_DUPLICATE || status == RS_REPLY_RETRY))
        r.control.n_captures = rs_captures_orders(c->ing->captures, c->agent_id,
                                                  rs_clock_realtime_ns(), r.control.captures,
                                                  RS_CAPTURE_MAX_ORDERS);
    uint8_t buf[RS_WIRE_MAX_REPLY_BYTES];
    size_t len = 0;
    nng_msg *m = NULL;

    if (rs_wire_reply_encode(&r, buf, sizeof buf, &len) != 0 || nng_msg_alloc(&m, len) != 0) {
        RS_COUNT(c->ing->counters, replies_failed);
        arm_recv(c); /* the agent times out and resends */
        return;
    }
    memcpy(nng_msg_body(m), buf, len);
    nng_aio_set_msg(c->aio, m);
    c->state = CTX_SEND;
    nng_ctx_send(c->ctx, c->aio);
}

/* NNG task-queue thread: must not block. */
static void
ctx_callback(void *p)
{
    struct ingest_ctx *c = p;
    rs_ingest *ing = c->ing;
    int rv = nng_aio_result(c->aio);

    if (c->state == CTX_SEND) {
        if (rv != 0) {
            nng_msg_free(nng_aio_get_msg(c->aio));
            nng_aio_set_msg(c->aio, NULL);
            RS_COUNT(ing->counters, replies_failed);
        }
        arm_recv(c);
        return;
    }
    if (rv != 0) {
        if (rv != NNG_ECLOSED && rv != NNG_ECANCELED)
            arm_recv(c);
        return;
    }
    c->msg = nng_aio_get_msg(c->aio);
    nng_aio_set_msg(c->aio, NULL); /* a message on the aio is a reply not sent (rs_ingest_free) */
    rs_agent_pipes_seen(ing->pipes, c->msg);
    c->state = CTX_BUSY;
    nng_mtx_lock(ing->lock);
    c->next = ing->ready;
    ing->ready = c;
    nng_mtx_unlock(ing->lock);
    uv_async_send(&ing->async);
}

/* Writer thread: the batch is committed (or not); answer the agent. */
static void
batch_done(void *arg, enum rs_reply_status status, const char *reason)
{
    struct ingest_ctx *c = arg;
    send_reply(c, c->batch_seq, status, reason, status == RS_REPLY_RETRY ? 1000 : 0);
}

/* Ingest's threads: decoding and validating a request is the CPU-heavy part of ingest (a batch
 * may be megabytes of records and names), so it runs beside the loop, not on it — HTTP stays
 * responsive and several requests decode at once — and on threads no query can take. */
static void
decode_request(struct rs_work *w)
{
    struct ingest_ctx *c = (struct ingest_ctx *)((char *)w - offsetof(struct ingest_ctx, decode));
    c->batch = NULL;
    c->decode_rc = rs_wire_agent_batch_decode(nng_msg_body(c->msg), nng_msg_len(c->msg), &c->batch);
    RS_COUNT_ADD(c->ing->counters, batch_decoded_bytes, nng_msg_len(c->msg));
}

/* The address of the agent that sent `msg` ("IP:PORT"), "?" when NNG does not say. */
static void
peer_of(nng_msg *msg, char *out, size_t len)
{
    nng_sockaddr sa;
    char ip[64];

    snprintf(out, len, "?");
    if (nng_pipe_get_addr(nng_msg_get_pipe(msg), NNG_OPT_REMADDR, &sa) != 0)
        return;
    if (sa.s_family == NNG_AF_INET && inet_ntop(AF_INET, &sa.s_in.sa_addr, ip, sizeof ip))
        snprintf(out, len, "%s:%u", ip, ntohs(sa.s_in.sa_port));
    else if (sa.s_family == NNG_AF_INET6 && inet_ntop(AF_INET6, sa.s_in6.sa_addr, ip, sizeof ip))
        snprintf(out, len, "[%s]:%u", ip, ntohs(sa.s_in6.sa_port));
    else if (sa.s_family == NNG_AF_IPC)
        snprintf(out, len, "ipc");
}

/* Loop: answers a request that does not decode (or whose head does not), and frees it. */
static void
refuse_malformed(struct ingest_ctx *c, int rc)
{
    size_t len = nng_msg_len(c->msg);
    char why[160];

    nng_msg_free(c->msg);
    c->msg = NULL;
    RS_COUNT(c->ing->counters, batches_rejected);
    snprintf(why, sizeof why, "batch rejected: %s", rs_strerror(rc));
    rs_log_limited(10, RS_LOG_WARN, "RS-INGEST-DECODE",
                   "rejected a %zu-byte batch (agent %016llx seq %llu): %s", len,
                   (unsigned long long)c->agent_id, (unsigned long long)c->batch_seq,
                   rs_strerror(rc));
    send_reply(c, c->batch_seq, RS_REPLY_REJECTED, why, 0);
}

/* Loop: checks the token of a request from its head, before anything decodes it — a peer
 * without a valid ingest token costs the server a walk over the request's top-level fields, not
 * a decode of its megabytes. Returns true when the request may go on (c->principal is set);
 * otherwise it was answered and freed. */
static bool
authorized(struct ingest_ctx *c, const struct rs_wire_batch_head *head)
{
    rs_ingest *ing = c->ing;
    char peer[80], why[160];

    c->principal[0] = '\0';
    if (!ing->authorize)
        return true;
    peer_of(c->msg, peer, sizeof peer);
    if (ing->authorize(ing->authorize_arg, head->token, peer, c->principal, sizeof c->principal,
                       why, sizeof why) == 0)
        return true;
    RS_COUNT(ing->counters, batches_unauthorized);
    nng_msg_free(c->msg);
    c->msg = NULL;
    send_reply(c, c->batch_seq, RS_REPLY_UNAUTHORIZED, why, UNAUTHORIZED_RETRY_MS);
    return false;
}

/* Loop: queue a decoded request for the writer, or refuse it. */
static void
request_decoded(struct rs_work *w, int status)
{
    struct ingest_ctx *c = (struct ingest_ctx *)((char *)w - offsetof(struct ingest_ctx, decode));
    rs_ingest *ing = c->ing;
    int rc = status == 0 ? c->decode_rc : RS_E_CLOSED;

    if (atomic_load(&ing->closing) || rc == RS_E_CLOSED) {
        rs_wire_agent_batch_free(c->batch);
        c->batch = NULL;
        nng_msg_free(c->msg);
        c->msg = NULL;
        return;
    }
    if (rc != 0) {
        refuse_malformed(c, rc);
        return;
    }
    rs_wire_agent_batch *batch = c->batch;
    c->batch = NULL;
    c->batch_seq = rs_wire_agent_batch_get(batch)->batch_seq;
    if (ing->captures) /* authorized (handle_request): its ranks and capture reports count */
        rs_captures_ingest(ing->captures, c->agent_id, rs_wire_agent_batch_get(batch),
                           rs_clock_realtime_ns());
    size_t bytes = nng_msg_len(c->msg);
    nng_msg_free(c->msg);
    c->msg = NULL;
    rc = rs_writer_submit_as(ing->writer, batch, c->principal, bytes, batch_done, c);
    if (rc != 0) {
        rs_wire_agent_batch_free(batch);
        RS_COUNT(ing->counters, batches_retry);
        send_reply(c, c->batch_seq, RS_REPLY_RETRY,
                   rc == RS_E_FULL ? "server busy" : "server stopping", 500);
    }
}

static void
handle_request(struct ingest_ctx *c)
{
    struct rs_wire_batch_head head;
    int rc;

    RS_COUNT(c->ing->counters, batches_received);
    rc = rs_wire_agent_batch_head(nng_msg_body(c->msg), nng_msg_len(c->msg), &head);
    c->agent_id = rc == 0 ? head.agent_id : 0;
    c->batch_seq = rc == 0 ? head.batch_seq : 0;
    if (rc == 0 && head.token_state == RS_WIRE_TOKEN_INVALID)
        rc = RS_E_MALFORMED; /* the decoder refuses it too */
    if (rc != 0) {
        refuse_malformed(c, rc);
        return;
    }
    if (!authorized(c, &head))
        return;
    c->decode.work = decode_request;
    c->decode.done = request_decoded;
    c->decode.key = 0;
    if (rs_work_pool_submit(c->ing->decoders, &c->decode) != 0) { /* closing: the agent resends */
        c->decode_rc = RS_E_CLOSED; /* cannot happen with a live loop; the agent resends */
        nng_msg_free(c->msg);
        c->msg = NULL;
        arm_recv(c);
    }
}

static void
on_async(uv_async_t *h)
{
    rs_ingest *ing = h->data;
    struct ingest_ctx *list;

    nng_mtx_lock(ing->lock);
    list = ing->ready;
    ing->ready = NULL;
    nng_mtx_unlock(ing->lock);
    while (list) {
        struct ingest_ctx *next = list->next;
        if (atomic_load(&ing->closing)) {
            nng_msg_free(list->msg);
            list->msg = NULL;
        } else
            handle_request(list);
        list = next;
    }
}

static void
make_url(rs_ingest *ing, const char *configured)
{
    int port = 0;
    const char *colon = strrchr(configured, ':');

    nng_listener_get_int(ing->listener, NNG_OPT_TCP_BOUND_PORT, &port);
    if (colon && port > 0 &&
        (strncmp(configured, "tcp", 3) == 0 || strncmp(configured, "tls+tcp", 7) == 0))
        snprintf(ing->url, sizeof ing->url, "%.*s:%d", (int)(colon - configured), configured, port);
    else
        snprintf(ing->url, sizeof ing->url, "%s", configured);
}

int
rs_ingest_start(uv_loop_t *loop, const struct rs_ingest_options *opts, rs_writer *writer,
                struct rs_counters *counters, rs_ingest **out)
{
    rs_ingest *ing = calloc(1, sizeof *ing);
    int rv;

    if (!ing)
        return -ENOMEM;
    ing->loop = loop;
    ing->writer = writer;
    ing->counters = counters;
    ing->n_ctxs = opts->contexts ? opts->contexts : 16;
    ing->writer_queue = opts->writer_queue;
    ing->decoders = opts->decoders;
    ing->authorize = opts->authorize;
    ing->authorize_arg = opts->authorize_arg;
    ing->captures = opts->captures;
    if ((rv = nng_mtx_alloc(&ing->lock)) != 0 || (rv = nng_rep0_open(&ing->sock)) != 0)
        goto fail_nng;
    struct rs_agent_pipes_options popts = opts->pipes;
    if (!opts->tls) /* NNG bounds the SP handshake of plain TCP itself (10 s) */
        popts.handshake_timeout_s = 0;
    if ((rv = rs_agent_pipes_start(loop, ing->sock, &popts, counters, &ing->pipes)) != 0)
        goto fail_nng;
    if ((rv = nng_listener_create(&ing->listener, ing->sock, opts->url)) != 0)
        goto fail_nng;
    /* NNG's default receive limit is unlimited; a peer must not make us buffer 4 GiB. */
    if ((rv = nng_listener_set_size(ing->listener, NNG_OPT_RECVMAXSZ, opts->max_message)) != 0 ||
        (opts->tls && (rv = nng_listener_set_ptr(ing->listener, NNG_OPT_TLS_CONFIG, opts->tls))) ||
        (rv = nng_listener_start(ing->listener, 0)) != 0)
        goto fail_nng;
    make_url(ing, opts->url);
    int port = 0;
    if (nng_listener_get_int(ing->listener, NNG_OPT_TCP_BOUND_PORT, &port) == 0)
        rs_agent_pipes_listening(ing->pipes, port);
    if (opts->tls) {
        nng_tls_config_hold(opts->tls);
        ing->tls = opts->tls;
    }
    ing->ctxs = calloc(ing->n_ctxs, sizeof *ing->ctxs);
    if (!ing->ctxs) {
        rv = NNG_ENOMEM;
        goto fail_nng;
    }
    for (unsigned i = 0; i < ing->n_ctxs; i++) {
        struct ingest_ctx *c = &ing->ctxs[i];
        c->ing = ing;
        if ((rv = nng_aio_alloc(&c->aio, ctx_callback, c)) != 0 ||
            (rv = nng_ctx_open(&c->ctx, ing->sock)) != 0)
            goto fail_nng;
    }
    uv_async_init(loop, &ing->async, on_async);
    ing->async.data = ing;
    for (unsigned i = 0; i < ing->n_ctxs; i++)
        arm_recv(&ing->ctxs[i]);
    *out = ing;
    return 0;
fail_nng:
    rs_log(RS_LOG_ERROR, "RS-INGEST-LISTEN", "cannot listen on %s: %s", opts->url,
           nng_strerror(rv));
    atomic_store(&ing->closing, true);
    nng_close(ing->sock);
    rs_agent_pipes_release(ing->pipes);
    rs_agent_pipes_close(ing->pipes);
    for (unsigned i = 0; ing->ctxs && i < ing->n_ctxs; i++)
        if (ing->ctxs[i].aio)
            nng_aio_free(ing->ctxs[i].aio);
    free(ing->ctxs);
    if (ing->lock)
        nng_mtx_free(ing->lock);
    if (ing->tls)
        nng_tls_config_free(ing->tls);
    free(ing);
    return rv == NNG_EADDRINUSE ? -98 : RS_E_CONFIG;
}

const char *
rs_ingest_url(const rs_ingest *ing)
{
    return ing->url;
}

/* Connects to the listener's own port and hangs up at once (see rs_ingest_set_tls). */
static void
consume_stale_accept(rs_ingest *ing)
{
    nng_sockaddr sa;
    struct sockaddr_storage ss = {0};
    socklen_t len;
    int fd;

    if (nng_listener_get_addr(ing->listener, NNG_OPT_LOCADDR, &sa) != 0)
        return;
    if (sa.s_family == NNG_AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        in->sin_port = sa.s_in.sa_port;
        in->sin_addr.s_addr = sa.s_in.sa_addr ? sa.s_in.sa_addr : htonl(INADDR_LOOPBACK);
        len = sizeof *in;
    } else if (sa.s_family == NNG_AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        static const uint8_t any[16];
        in6->sin6_family = AF_INET6;
        in6->sin6_port = sa.s_in6.sa_port;
        if (memcmp(sa.s_in6.sa_addr, any, 16) == 0)
            in6->sin6_addr = in6addr_loopback;
        else
            memcpy(&in6->sin6_addr, sa.s_in6.sa_addr, 16);
        len = sizeof *in6;
    } else
        return;
    if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return;
    if (connect(fd, (struct sockaddr *)&ss, len) != 0)
        rs_log(RS_LOG_WARN, "RS-TLS-RELOAD",
               "could not reach the agents' port to retire the old certificate: %s (the next "
               "agent that connects may still get it)",
               strerror(errno));
    close(fd);
}

int
rs_ingest_set_tls(rs_ingest *ing, nng_tls_config *tls)
{
    int rv = nng_listener_set_ptr(ing->listener, NNG_OPT_TLS_CONFIG, tls);

    if (rv != 0)
        return rv == NNG_ENOTSUP ? RS_E_CONFIG : -EINVAL;
    /* NNG's listener holds `tls` now and let go of the previous one; keep that alive until the
     * next reload: the accept NNG had started with it takes its own reference only once a
     * connection arrives (consume_stale_accept's). */
    nng_tls_config_hold(tls);
    if (ing->tls_prev)
        nng_tls_config_free(ing->tls_prev);
    ing->tls_prev = ing->tls;
    ing->tls = tls;
    consume_stale_accept(ing);
    return 0;
}

/* How long rs_ingest_free waits for the socket to close, from rs_ingest_close. It closes in
 * milliseconds, except in NNG 1.5.2's race (close_socket): then never. */
#define CLOSE_WAIT_MS 3000

/* Its own thread: closes the socket, then stops every context's aio — after nng_close no
 * operation can start on a context, and nng_aio_stop waits for a callback still running — so
 * that nothing of NNG calls into the ingest or the pipe table any more.
 * Why a thread: NNG 1.5.2's nng_close can wait forever. Its TCP and TLS transports read a
 * message in two steps (length, then body) and start the second from the first one's callback
 * without checking whether the connection was closed meanwhile; when it was (nng_close closes
 * every connection), the second read is dropped without completing, and the close waits for it
 * (the pipe's reaper, in rep0's pipe stop; NNG fixed this in 1.8). Measured: SIGTERM under the
 * ingest of 6 senders hung the server in 4 of 34 runs. */
static void *
close_socket(void *arg)
{
    rs_ingest *ing = arg;

    nng_close(ing->sock);
    for (unsigned i = 0; i < ing->n_ctxs; i++)
        nng_aio_stop(ing->ctxs[i].aio);
    rs_agent_pipes_release(ing->pipes);
    atomic_store(&ing->sock_closed, true);
    return NULL;
}

void
rs_ingest_close(rs_ingest *ing)
{
    if (!ing)
        return;
    atomic_store(&ing->closing, true);
    ing->close_ns = rs_clock_mono_ns();
    if (pthread_create(&ing->closer, NULL, close_socket, ing) == 0)
        ing->closer_started = true;
    else
        close_socket(ing); /* no thread to spare: close here, and hope */
    rs_agent_pipes_close(ing->pipes);
    uv_close((uv_handle_t *)&ing->async, NULL);
}

/* Waits for close_socket until CLOSE_WAIT_MS after rs_ingest_close; true when it finished. */
static bool
socket_closed(rs_ingest *ing)
{
    uint64_t deadline = ing->close_ns + (uint64_t)CLOSE_WAIT_MS * 1000000;

    while (!atomic_load(&ing->sock_closed) && rs_clock_mono_ns() < deadline) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (!atomic_load(&ing->sock_closed))
        return false;
    if (ing->closer_started)
        pthread_join(ing->closer, NULL);
    return true;
}

bool
rs_ingest_free(rs_ingest *ing)
{
    if (!ing)
        return true;
    if (!socket_closed(ing)) {
        /* Stop the contexts' aios here (NNG has let go of every context before it waits for the
         * connections): no callback touches the loop after this. The rest stays, with the
         * thread in nng_close; the process exits without it. */
        for (unsigned i = 0; i < ing->n_ctxs; i++)
            nng_aio_stop(ing->ctxs[i].aio);
        rs_log(RS_LOG_WARN, "RS-INGEST-CLOSE",
               "the agents' socket did not close in %d ms: NNG 1.5.2 waits forever for a "
               "connection closed while a message was half read; stopping without it",
               CLOSE_WAIT_MS);
        return false;
    }
    for (unsigned i = 0; i < ing->n_ctxs; i++) {
        struct ingest_ctx *c = &ing->ctxs[i];
        if (c->msg)
            nng_msg_free(c->msg);
        if (nng_aio_get_msg(c->aio)) /* a reply whose send never started (socket closed) */
            nng_msg_free(nng_aio_get_msg(c->aio));
        nng_aio_free(c->aio);
    }
    free(ing->ctxs);
    nng_mtx_free(ing->lock);
    if (ing->tls)
        nng_tls_config_free(ing->tls);
    if (ing->tls_prev)
        nng_tls_config_free(ing->tls_prev);
    free(ing);
    return true;
}
