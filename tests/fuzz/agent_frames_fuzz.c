/* libFuzzer target for what a collector sends to the agent's socket (node-agent/listener.c,
 * aggregate.c): the input is a run of frames, each a 2-byte little-endian length and that many
 * bytes (one SOCK_SEQPACKET message each). Every frame is decoded as the listener does; those it
 * accepts are merged as the agent merges them (records as sent, and summarized per 1 ms window),
 * and every flush must encode an AgentBatch the server's decoder accepts — an agent must never
 * forward what it let in in a form the server refuses. Build: make fuzz-agent_frames. */
#include "node-agent/aggregate.h"
#include "proto/wire.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
flush_and_check(rs_aggregate *agg, uint64_t seq)
{
    struct rs_agent_batch env = {.agent_id = 7, .boot_id = 1, .batch_seq = seq,
                                 .hello = {.agent_id = 7, .boot_id = 1, .host = "fuzz",
                                           .agent_version = "v"}};
    uint8_t *out = NULL;
    size_t len = 0;
    uint64_t lost = 0;
    int rc = rs_aggregate_flush(agg, &env, &out, &len, &lost);

    if (rc == 0) {
        rs_wire_agent_batch *b = NULL;
        if (rs_wire_agent_batch_decode(out, len, &b) != 0)
            __builtin_trap(); /* the agent made a batch the server would reject */
        rs_wire_agent_batch_free(b);
    }
    free(out);
}

static void
run(const uint8_t *data, size_t size, uint64_t summary_ns)
{
    rs_aggregate *agg = NULL;
    uint64_t seq = 1;

    if (rs_aggregate_new(&agg) != 0)
        return;
    if (summary_ns)
        rs_aggregate_set_summary(agg, summary_ns);
    while (size >= 2) {
        size_t n = (size_t)data[0] | (size_t)data[1] << 8;
        data += 2;
        size -= 2;
        n = n < size ? n : size;
        rs_wire_rank_frame *f = NULL;
        if (rs_wire_rank_frame_decode(data, n, RS_WIRE_MAX_FRAME_BYTES, &f) == 0) {
            struct rs_rank_batch b = *rs_wire_rank_frame_batch(f);
            b.identity.pid = 42; /* the listener puts the kernel's word here */
            rs_aggregate_add(agg, &b);
            rs_wire_rank_frame_free(f);
        }
        data += n;
        size -= n;
        if (rs_aggregate_pending_bytes(agg) > (4u << 20))
            flush_and_check(agg, seq++);
    }
    flush_and_check(agg, seq++);
    rs_aggregate_close_windows(agg);
    flush_and_check(agg, seq++);
    rs_aggregate_free(agg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size, 0);
    run(data, size, 1000000);
    return 0;
}
