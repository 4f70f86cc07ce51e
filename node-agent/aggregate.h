/* The agent's per-rank aggregation: RankBatch frames from many collectors are merged per
 * (job, rank) until the next flush, which turns everything pending into one encoded AgentBatch.
 * Not thread-safe: the agent's loop owns it. */
#ifndef RS_NODE_AGENT_AGGREGATE_H
#define RS_NODE_AGENT_AGGREGATE_H

#include "node-agent/demangle.h"
#include "proto/wire.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rs_aggregate rs_aggregate;

int rs_aggregate_new(rs_aggregate **out);

/* Names (kernels, PC-sampling functions) of frames added from now on go through `d` (demangle.h;
 * borrowed, must outlive `a`; NULL: names stay as they came). */
void rs_aggregate_set_demangler(rs_aggregate *a, rs_demangler *d);
/* With window_ns > 0, ranks' kernels and copies are sent as per-window totals and their steps with
 * metrics measured here (summary.h) instead of one record each; set before the first frame. */
void rs_aggregate_set_summary(rs_aggregate *a, uint64_t window_ns);

/* The next flush emits every summary still open (the agent is stopping). */
void rs_aggregate_close_windows(rs_aggregate *a);

void rs_aggregate_free(rs_aggregate *a);

/* Merges one decoded frame (copied). Returns 0 or -ENOMEM. */
int rs_aggregate_add(rs_aggregate *a, const struct rs_rank_batch *b);

/* Approximate encoded bytes pending (to flush early before the request limit). */
size_t rs_aggregate_pending_bytes(const rs_aggregate *a);

/* Records pending (0 = nothing to send). */
uint64_t rs_aggregate_pending_records(const rs_aggregate *a);

/* Frames of collectors that this agent never received, by the gaps in their numbers
 * (RankBatch.frame_seq) between frames it did receive; frames lost before this agent started
 * (a predecessor killed) are counted by the server, which sees every agent's batches. */
uint64_t rs_aggregate_frame_gaps(const rs_aggregate *a);

/* Encodes everything pending as one AgentBatch with the given envelope (its ranks/n_ranks are
 * filled here) into a new buffer (*out, caller frees), then empties the aggregation.
 * Returns 0, RS_E_NOT_FOUND when nothing is pending, or an encoder error (the pending records
 * are then dropped and *dropped_records says how many). */
int rs_aggregate_flush(rs_aggregate *a, struct rs_agent_batch *envelope, uint8_t **out,
                       size_t *out_len, uint64_t *dropped_records);

#endif
