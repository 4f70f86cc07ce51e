/* Agent batches for tests, built with designated initialisers so that a field added to the wire
 * structs (proto/wire.h) cannot shift a fixture's values silently: t_agent_batch wraps rank
 * batches as agent `agent`'s batch number `seq` (boot id 1, host "h"). */
#ifndef RS_TESTS_T_BATCH_H
#define RS_TESTS_T_BATCH_H

#include "proto/wire.h"

#include <stdint.h>

static inline struct rs_agent_batch
t_agent_batch(uint64_t agent, uint64_t seq, const struct rs_rank_batch *rb, uint32_t n)
{
    return (struct rs_agent_batch){
        .agent_id = agent,
        .boot_id = 1,
        .batch_seq = seq,
        .hello = {.agent_id = agent, .boot_id = 1, .host = "h", .agent_version = "v"},
        .ranks = rb,
        .n_ranks = n,
    };
}

#endif
