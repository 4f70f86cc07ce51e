/* The agent's forwarder: a queue of encoded AgentBatch requests sent to the server over NNG req
 * with N contexts (a window of N unacknowledged batches). A batch leaves the queue only when the
 * server acknowledges it (ACK or DUPLICATE) or refuses it for good (REJECTED, counted); on errors,
 * timeouts, RETRY and UNAUTHORIZED (a token the server does not take) it is resent later. Dialing
 * is non-blocking, so the agent may start before the server. With a spool, every queued batch is
 * also on disk until acknowledged. The queue is bounded: past the budget the oldest unsent batches
 * are dropped and counted. Runs on the agent's libuv loop; NNG completions reach it through
 * uv_async_send. */
#ifndef RS_NODE_AGENT_FORWARD_H
#define RS_NODE_AGENT_FORWARD_H

#include "node-agent/spool.h"
#include "proto/capture.h"

#include <stdint.h>
#include <uv.h>

typedef struct rs_forward rs_forward;

struct rs_forward_options {
    const char *server_url;
    unsigned window;          /* NNG contexts = batches in flight */
    uint64_t max_queue_bytes; /* memory (and spool) budget */
    unsigned reply_timeout_ms;
    struct rs_spool *spool; /* NULL: memory only */
    /* Called on the loop when the server refuses a batch for good (REJECTED), with its reason;
     * NULL: only counted and logged. */
    void (*on_rejected)(void *arg, uint64_t seq, const char *error);
    void *on_rejected_arg;
    /* Called on the loop with the capture orders a reply carried (proto/capture.h; each valid;
     * a reply lost or repeated may carry an order again); NULL: ignored. */
    void (*on_captures)(void *arg, const struct rs_capture_order *orders, uint32_t n);
    void *on_captures_arg;
    /* The bearer token sent with every batch (appended when sent, never spooled: a new token
     * applies to spooled batches too); NULL or "" = none. Must be rs_auth_token_valid. */
    const char *token;
    /* a tls+tcp:// server_url: CA file, server name ("" = the URL's host), own cert and key */
    const char *tls_ca, *tls_server_name, *tls_cert, *tls_key;
};

struct rs_forward_stats {
    uint64_t queued_batches, queued_bytes; /* now */
    uint32_t server_min_flush_ms;          /* the server's latest request (0 = none) */
    uint64_t sent, acked, duplicates, rejected, retried, dropped_batches;
    uint64_t unauthorized; /* answers RS_REPLY_UNAUTHORIZED (the batch is kept and resent) */
    uint64_t capture_orders; /* capture orders received in replies (repeats included) */
    uint64_t last_send_ns;   /* CLOCK_MONOTONIC of the latest request sent (0: none yet) */
};

int rs_forward_start(uv_loop_t *loop, const struct rs_forward_options *opts, rs_forward **out);

/* Queues one encoded batch; takes ownership of `data` (malloc'd) in every case. With a spool the
 * batch is written to disk first unless `from_spool`. */
int rs_forward_push(rs_forward *f, uint64_t seq, uint8_t *data, size_t len, int from_spool);

/* Sends what the window allows; called by the agent's timer and after pushes. */
void rs_forward_pump(rs_forward *f);

void rs_forward_get_stats(const rs_forward *f, struct rs_forward_stats *out);

/* Closes the socket (on the loop thread). Queued batches stay in the spool, if any. */
void rs_forward_close(rs_forward *f);
/* After the loop ran the close callbacks. */
void rs_forward_free(rs_forward *f);

#endif
