/* The agents' NNG connections (pipes) of the ingest socket, bounded: at most max_per_peer from
 * one IP address (a pipe beyond is closed as it arrives, counted) and max_total in all (at the
 * bound, a new pipe takes the place of the one idle longest, at least 2 s — a crowd of idle
 * sockets cannot keep a working agent out — and is refused when none is), and a
 * pipe that delivers no whole request for idle_timeout_s is closed — with it the buffer of a
 * partial message a peer stalled in (NNG 1.5.2 has no receive timeout on a pipe: 60 stalled
 * 17 MiB messages held ~1 GiB, issue 23). A TCP connection on the listener's port that has not
 * become a pipe within handshake_timeout_s is closed too (NNG 1.5.2 never ends a TLS handshake
 * its peer stalls). Agents redial on their own. The server closes TCP pipes by shutting their
 * sockets down, never with nng_pipe_close (agent_pipes.c says why). */
#ifndef RS_SERVER_AGENT_PIPES_H
#define RS_SERVER_AGENT_PIPES_H

#include "server/counters.h"

#include <nng/nng.h>
#include <uv.h>

typedef struct rs_agent_pipes rs_agent_pipes;

struct rs_agent_pipes_options {
    unsigned max_per_peer;   /* 0 = no bound */
    unsigned max_total;      /* 0 = no bound */
    unsigned idle_timeout_s; /* 0 = never closed for idleness */
    unsigned handshake_timeout_s; /* 0 = no bound on connections that are not pipes yet */
};

/* Registers the pipe callbacks on sock (before its listener starts) and the idle sweep's timer on
 * loop. Returns 0 or an NNG error (NNG_ENOMEM). Loop thread. */
int rs_agent_pipes_start(uv_loop_t *loop, nng_socket sock, const struct rs_agent_pipes_options *o,
                         struct rs_counters *counters, rs_agent_pipes **out);

/* The listener is bound to TCP port `port` (NNG_OPT_TCP_BOUND_PORT): from now on the server
 * can find its connections among its descriptors, to close pipes and to bound handshakes.
 * Before (or never, for ipc://), pipes are closed with nng_pipe_close and handshakes are not
 * bounded. Loop thread; NULL ap or a port outside 1..65535 is a no-op. */
void rs_agent_pipes_listening(rs_agent_pipes *ap, int port);

/* A whole request arrived (its pipe is active). Any thread; NULL ap is a no-op. */
void rs_agent_pipes_seen(rs_agent_pipes *ap, nng_msg *msg);

/* Stops the sweep (closes its timer and wake-up). Loop thread. The table stays for the pipe callbacks until
 * rs_agent_pipes_release too: the memory goes when both happened (and the loop ran the timer's
 * close callback), in either order. NULL is a no-op. */
void rs_agent_pipes_close(rs_agent_pipes *ap);

/* The socket is closed (nng_close returned: no pipe callback and no rs_agent_pipes_seen comes
 * any more). Any thread. Never called, the table is never freed: a socket whose nng_close does
 * not return may still call back. NULL is a no-op. */
void rs_agent_pipes_release(rs_agent_pipes *ap);

#endif
