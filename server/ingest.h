/* The NNG ingest listener: a rep socket with N contexts (each one outstanding request), whose
 * completions are handed to the libuv loop with uv_async_send. Each request is decoded and
 * validated on ingest's own threads (opts->decoders: no query can hold them); back on the loop, bad ones are refused (REJECTED +
 * counter) and good ones queued for the writer, whose completion sends the reply. A request is
 * acknowledged only after its commit. */
#ifndef RS_SERVER_INGEST_H
#define RS_SERVER_INGEST_H

#include "server/agent_pipes.h"
#include "server/captures.h"
#include "server/counters.h"
#include "server/work_pool.h"
#include "server/writer.h"

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

typedef struct rs_ingest rs_ingest;
struct nng_tls_config;

struct rs_ingest_options {
    const char *url;       /* "tcp://127.0.0.1:7071"; port 0 picks a free one */
    unsigned contexts;     /* concurrent requests in flight */
    size_t max_message;    /* receive size limit per request */
    unsigned writer_queue; /* the writer's queue capacity: past half of it, agents slow down */
    rs_work_pool *decoders; /* where requests are decoded (admits `contexts` items at least) */
    struct rs_agent_pipes_options pipes; /* connection caps and idle timeout (agent_pipes.h) */
    /* Decides whether a decoded batch carrying `token` ("" = none) may be stored, on the loop
     * thread (NULL: every batch, no principal). Returns 0 and writes the principal's name, the
     * batch's deduplication scope, into principal[len]; or -1 with a reason for the agent in
     * why[why_len] — the batch is answered RS_REPLY_UNAUTHORIZED and counted. `peer` is the
     * agent's address for logs. */
    int (*authorize)(void *arg, const char *token, const char *peer, char *principal, size_t len,
                     char *why, size_t why_len);
    void *authorize_arg;
    struct nng_tls_config *tls; /* a tls+tcp:// url's certificate and peer rules (NULL: NNG's
                                   default, which has no certificate); not taken over */
    /* Captures (captures.h; NULL: none): an authorized batch tells it which agent serves which
     * ranks and what became of their captures; every reply to an agent carries the capture
     * orders for its ranks. Borrowed; must outlive the ingest. */
    rs_captures *captures;
};

/* Listens and starts receiving. Must be called on the loop thread. */
int rs_ingest_start(uv_loop_t *loop, const struct rs_ingest_options *opts, rs_writer *writer,
                    struct rs_counters *counters, rs_ingest **out);

/* The URL agents should dial, with the bound port ("tcp://127.0.0.1:41234"). */
const char *rs_ingest_url(const rs_ingest *ing);

/* Agents that connect from now on get `tls` (a tls+tcp:// listener only; RS_E_CONFIG otherwise).
 * NNG keeps one connection accepted ahead with the configuration it had, so this connects once
 * to its own port and lets that connection fail: the next agent meets the new certificate.
 * Connections already open are kept. Holds `tls` until the next call or rs_ingest_free. Returns 0
 * or a negative code. Loop thread. */
int rs_ingest_set_tls(rs_ingest *ing, struct nng_tls_config *tls);

/* Stops receiving and starts closing the socket, on a thread of its own (NNG 1.5.2's nng_close
 * can wait forever: ingest.c's close_socket says when); returns at once. Requests in the writer
 * still commit, unanswered from now on (agents resend, the server deduplicates). Call on the loop
 * thread, before rs_writer_stop. */
void rs_ingest_close(rs_ingest *ing);

/* Waits for the socket to close, until 3 s after rs_ingest_close, then frees everything and
 * returns true. When the socket did not close by then, logs RS-INGEST-CLOSE, makes sure no NNG
 * callback reaches the ingest or the loop any more, leaves the rest (the closing thread, NNG's
 * socket and the ingest's memory) to the process's exit, and returns false. Call after
 * rs_writer_stop and after the loop has run the close callbacks. NULL returns true. */
bool rs_ingest_free(rs_ingest *ing);

#endif
