/* The collector socket: an AF_UNIX SOCK_SEQPACKET listener on the agent's loop. Each datagram is
 * one RankBatch frame; it is decoded (rejecting truncated, oversized and malformed frames with a
 * counter, never trusting the peer) and handed to the callback. Collectors may come and go.
 * The kernel says who each collector is (SO_PEERCRED): its pid replaces the one its frames claim,
 * and with an allow-list only the listed uids are accepted. The socket file gets mode 0666 whatever
 * the umask (collectors of every job's user must reach it; the allow-list and the directory's
 * permissions say who may) and is never taken over from a live listener: a path another process
 * listens on is refused (a squatter would receive the jobs' data). */
#ifndef RS_NODE_AGENT_LISTENER_H
#define RS_NODE_AGENT_LISTENER_H

#include "proto/wire.h"

#include <stdint.h>
#include <uv.h>

typedef struct rs_listener rs_listener;

typedef void (*rs_listener_frame_fn)(void *arg, const struct rs_rank_batch *batch);

struct rs_listener_stats {
    uint64_t frames, frames_rejected, collectors_now, collectors_total, collectors_refused;
    uint64_t collectors_denied; /* uid not in the allow-list */
    uint64_t frames_refused;    /* frames a refused or denied collector had already sent: read,
                                 * counted and dropped, so that they do not vanish uncounted */
    /* control frames (capture orders) to collectors: sent, and not sent because the collector's
     * socket was full or gone */
    uint64_t control_sent, control_dropped;
};

struct rs_listener_options {
    unsigned max_collectors;
    const uint32_t *allow_uids; /* NULL: every uid */
    size_t n_allow_uids;
};

/* Binds `path` (replacing a stale socket file; a path another process listens on, or any other
 * file, is refused with -EADDRINUSE / -EEXIST), sets its mode to 0666, listens, and starts
 * polling. Returns 0 or -errno. */
int rs_listener_start(uv_loop_t *loop, const char *path, const struct rs_listener_options *opts,
                      rs_listener_frame_fn fn, void *arg, rs_listener **out);

void rs_listener_get_stats(const rs_listener *l, struct rs_listener_stats *out);

/* Sends one control frame (proto/capture.h) to the collector(s) of rank `rank` of `job` — those
 * whose latest frame named that rank — without blocking: a collector whose socket is full misses
 * it (counted; the server resends orders until the collector reports them started). Returns how
 * many collectors got it (0: none connected for that rank). Loop thread. */
int rs_listener_send_control(rs_listener *l, const char *job, uint32_t rank, const uint8_t *buf,
                             size_t len);

/* Stops accepting, closes every collector connection and removes the socket file; the memory is
 * freed once the loop has run the close callbacks. */
void rs_listener_close(rs_listener *l);

#endif
