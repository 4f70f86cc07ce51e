/* The collector side of the agent's Unix socket: the C API a collector inside a training process
 * (the CUPTI collector, the simulator) uses to hand its records to the local rankscope-agent.
 *
 * Records are buffered and sent by rs_collector_flush() as RankBatch frames of at most
 * RS_WIRE_MAX_FRAME_BYTES over an AF_UNIX SOCK_SEQPACKET socket, without ever blocking: when the
 * agent is absent, slow or gone, frames are dropped and their records counted; the count rides on
 * later frames (RankBatch.dropped_records) so the server sees it. Connection attempts are retried
 * at most once per second. After fork() the child's handle is inert (every call is a no-op).
 * Not thread-safe: one thread (the collector's flush thread) owns a handle.
 */
#ifndef RS_NODE_AGENT_COLLECTOR_CLIENT_H
#define RS_NODE_AGENT_COLLECTOR_CLIENT_H

#include "proto/wire.h"

#include <stdint.h>

typedef struct rs_collector rs_collector;

struct rs_collector_options {
    const char *socket_path; /* the agent's socket, e.g. /run/rankscope/agent.sock */
    uint32_t max_pending;    /* records buffered between flushes; beyond: dropped (0 = 1M) */
};

struct rs_collector_stats {
    uint64_t kernels, memcpys, collectives, steps, stalls; /* records sent; memcpys: copies */
    uint64_t syncs;   /* host synchronizations sent (copy records of the RS_SYNC_* kinds) */
    uint64_t dropped; /* records dropped */
    uint64_t frames_sent, frames_dropped, connects;
    /* control frames from the agent (capture orders): read, and refused as malformed, oversized
     * or truncated (proto/capture.h) */
    uint64_t control_frames, control_rejected;
};

/* Creates a handle for one rank. Identity strings are copied. Never fails because the agent is
 * absent (it connects when it can). Returns 0 or -ENOMEM / RS_E_MALFORMED (invalid job name:
 * sanitize with rs_wire_job_sanitize first). */
int rs_collector_open(const struct rs_collector_options *opts, const struct rs_rank_identity *id,
                      rs_collector **out);

/* Id of a kernel/reason name for the records below; ids stay valid for the handle's life (names
 * are a bounded set: kernels, stall reasons). UINT32_MAX when out of memory: records carrying it
 * are dropped and counted. */
uint32_t rs_collector_name(rs_collector *c, const char *name);

/* Buffer one record (copied). Return 0, or RS_E_FULL when dropped (counted). */
int rs_collector_add_kernel(rs_collector *c, const struct rs_kernel_record *k);
int rs_collector_add_memcpy(rs_collector *c, const struct rs_memcpy_record *m);
int rs_collector_add_collective(rs_collector *c, const struct rs_collective_record *r);
int rs_collector_add_step(rs_collector *c, const struct rs_step_record *s);
int rs_collector_add_stall(rs_collector *c, const struct rs_stall_record *s);

/* Sets the collector's condition (enum rs_collector_flag bits and text for people), carried by
 * every later frame; a frame is sent at the next flush even with no records, so the server learns
 * about a collector that stepped aside. Returns 0 or -ENOMEM. */
int rs_collector_set_status(rs_collector *c, uint32_t flags, const char *text);

/* Replaces the GPU UUID of the identity (known only once the first GPU record arrives).
 * Returns 0 or -ENOMEM (the old one stays). */
int rs_collector_set_gpu_uuid(rs_collector *c, const char *uuid);

/* Counts `n` records lost before they reached this handle (e.g. dropped by CUPTI itself); the
 * count travels like the handle's own drops. */
void rs_collector_count_dropped(rs_collector *c, uint64_t n);

/* Sends everything buffered, with `clock` as the batch's clock pair. Returns 0 when every frame
 * was sent, otherwise the last send error (-EAGAIN, -ENOTCONN, ...): the records are then dropped
 * and counted. */
int rs_collector_flush(rs_collector *c, const struct rs_clock_pair *clock);

void rs_collector_get_stats(const rs_collector *c, struct rs_collector_stats *out);

/* --- Captures on demand (proto/capture.h; docs/collector.md "Captures") ------------------------
 * The agent sends capture orders back over the same socket, one control frame each. */

/* Reads the control frames waiting on the socket, without blocking and at most
 * RS_COLLECTOR_MAX_CONTROL_FRAMES of them per call, into out[max]; *n gets how many orders. A
 * frame that is truncated, oversized or not a valid CollectorControl is dropped and counted
 * (control_rejected). Nothing happens before the handle connected (its first flush with records).
 * Returns 0, or -ENOTCONN when the agent went away (the next flush reconnects). */
#define RS_COLLECTOR_MAX_CONTROL_FRAMES 8
int rs_collector_poll_control(rs_collector *c, struct rs_capture_order *out, uint32_t max,
                              uint32_t *n);

/* Frames sent from now on say their records were traced for capture `id` (0: none). */
void rs_collector_set_capture(rs_collector *c, uint64_t id);

/* Queues a report (copied; a valid one) for the next frame, which is sent at the next flush even
 * without records. At most RS_CAPTURE_MAX_REPORTS wait; beyond, RS_E_FULL. */
int rs_collector_report_capture(rs_collector *c, const struct rs_capture_report *r);

/* Closes the socket and frees the handle (unsent records are dropped). NULL is fine. */
void rs_collector_free(rs_collector *c);

#endif
