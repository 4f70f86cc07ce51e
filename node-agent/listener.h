/* The collector socket: an AF_UNIX SOCK_SEQPACKET listener on the agent's loop. Each datagram is
 * one RankBatch frame; it is decoded (rejecting truncated, oversized and malformed frames with a
 * counter, never trusting the peer) and handed to the callback. Collectors may come and go. */
#ifndef RS_NODE_AGENT_LISTENER_H
#define RS_NODE_AGENT_LISTENER_H

#include "proto/wire.h"

#include <stdint.h>
#include <uv.h>

typedef struct rs_listener rs_listener;

typedef void (*rs_listener_frame_fn)(void *arg, const struct rs_rank_batch *batch);

struct rs_listener_stats {
    uint64_t frames, frames_rejected, collectors_now, collectors_total, collectors_refused;
};

/* Binds `path` (replacing a stale socket file), listens, and starts polling. */
int rs_listener_start(uv_loop_t *loop, const char *path, unsigned max_collectors,
                      rs_listener_frame_fn fn, void *arg, rs_listener **out);

void rs_listener_get_stats(const rs_listener *l, struct rs_listener_stats *out);

/* Stops accepting, closes every collector connection and removes the socket file; the memory is
 * freed once the loop has run the close callbacks. */
void rs_listener_close(rs_listener *l);

#endif
