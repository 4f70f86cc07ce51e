/* Who this training process is, from its environment (docs/analysis.md "Identity"): job from
 * RANKSCOPE_JOB_ID, else SLURM_JOB_ID, TORCHELASTIC_RUN_ID, a hash of MASTER_ADDR:MASTER_PORT,
 * else "unknown-<host>-<pid>"; rank, local rank and world size from the launcher's variables
 * (torchrun, Open MPI, PMI/MPICH, Slurm). Unknown identity is still an identity, never a reason to
 * drop data. Pure: the environment comes through a function, so tests can fake it. */
#ifndef RS_COLLECTOR_IDENTITY_H
#define RS_COLLECTOR_IDENTITY_H

#include "proto/wire.h"

#include <stdbool.h>
#include <stdint.h>

typedef const char *(*rs_getenv_fn)(const char *name);

struct rs_env_identity {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    const char *job_source; /* the variable the job came from, or "none" */
    uint32_t rank, local_rank, world_size;
    bool rank_known;
    char host[256];
    uint32_t pid;
};

void rs_identity_from_env(rs_getenv_fn env, const char *hostname, uint32_t pid,
                          struct rs_env_identity *out);

#endif
