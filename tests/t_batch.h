/* Agent batches and rank identities for tests, built with designated initialisers so that a field
 * added to the wire structs (proto/wire.h) cannot shift a fixture's values silently:
 * t_agent_batch wraps rank batches as agent `agent`'s batch number `seq` (boot id 1, host "h");
 * T_IDENTITY is a rank's identity; T_RECORDS names a record array with its count. */
#ifndef RS_TESTS_T_BATCH_H
#define RS_TESTS_T_BATCH_H

#include "proto/wire.h"

#include <stdint.h>

/* Any rank identity, field by field in the struct's order. */
#define T_IDENTITY_OF(job_, rank_, local_, world_, host_, gpu_, pid_)                              \
    {                                                                                              \
        .job = (job_), .rank = (rank_), .local_rank = (local_), .world_size = (world_),            \
        .host = (host_), .gpu_uuid = (gpu_), .pid = (pid_)                                         \
    }

/* The identity of rank `rank` (local rank the same) of a `world`-rank job on host "h", pid 1. */
#define T_IDENTITY(job_, rank_, world_, gpu_)                                                      \
    T_IDENTITY_OF(job_, rank_, rank_, world_, "h", gpu_, 1)

/* A record array of a rank batch and its count, side by side in an initialiser:
 * `T_RECORDS(kernels, k, 4)` is `.kernels = (k), .n_kernels = (4)`. */
#define T_RECORDS(field_, array_, count_) .field_ = (array_), .n_##field_ = (count_)

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
