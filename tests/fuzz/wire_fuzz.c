/* libFuzzer target for the wire decoders (AgentBatch requests, RankBatch frames, replies).
 * Build with `make fuzz-wire`; `make test` replays tests/fuzz/corpus/wire/ with replay_main.c. */
#include "proto/wire.h"
#include "proto/wire_head.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_wire_agent_batch *b = NULL;
    rs_wire_rank_frame *f = NULL;
    struct rs_server_reply r;
    uint64_t a, s;
    char err[64];

    if (rs_wire_agent_batch_decode(data, size, &b) == 0) {
        /* A decoded batch must re-encode: the decoder only accepts what we would send. */
        uint8_t *out = NULL;
        size_t len;
        if (rs_wire_agent_batch_encode(rs_wire_agent_batch_get(b), &out, &len) != 0)
            __builtin_trap();
        __builtin_free(out);
    }
    /* What decodes has a head the walk reads alike (the server checks tokens on the head). */
    struct rs_wire_batch_head h;
    if (b && (rs_wire_agent_batch_head(data, size, &h) != 0 ||
              h.batch_seq != rs_wire_agent_batch_get(b)->batch_seq ||
              h.agent_id != rs_wire_agent_batch_get(b)->agent_id ||
              __builtin_strcmp(h.token, rs_wire_agent_batch_get(b)->auth_token) != 0))
        __builtin_trap();
    rs_wire_agent_batch_free(b);
    rs_wire_agent_batch_peek_seq(data, size, &a, &s);
    if (rs_wire_rank_frame_decode(data, size, RS_WIRE_MAX_FRAME_BYTES, &f) == 0 &&
        rs_wire_rank_batch_size(rs_wire_rank_frame_batch(f)) == 0)
        __builtin_trap();
    rs_wire_rank_frame_free(f);
    rs_wire_reply_decode(data, size, &r, err, sizeof err);
    return 0;
}
