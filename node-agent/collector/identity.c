/* Process identity from launcher environment variables (see identity.h). */
#include "node-agent/collector/identity.h"

#include "common/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first of `names` that is set to a non-negative integer. */
static bool
first_uint(rs_getenv_fn env, const char *const *names, uint32_t *out)
{
    for (; *names; names++) {
        const char *v = env(*names);
        char *end;
        if (!v || !*v)
            continue;
        unsigned long n = strtoul(v, &end, 10);
        if (*end == '\0' && v[0] != '-' && n <= UINT32_MAX) {
            *out = (uint32_t)n;
            return true;
        }
    }
    return false;
}

static void
set_job(struct rs_env_identity *id, const char *text, const char *source)
{
    rs_wire_job_sanitize(text, id->job, sizeof id->job);
    id->job_source = source;
}

void
rs_identity_from_env(rs_getenv_fn env, const char *hostname, uint32_t pid,
                     struct rs_env_identity *out)
{
    static const char *const job_vars[] = {"RANKSCOPE_JOB_ID", "SLURM_JOB_ID",
                                           "TORCHELASTIC_RUN_ID", NULL};
    static const char *const rank_vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                            "SLURM_PROCID", NULL};
    static const char *const local_vars[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                             "MPI_LOCALRANKID", "SLURM_LOCALID", NULL};
    static const char *const world_vars[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                             "SLURM_NTASKS", NULL};
    const char *addr = env("MASTER_ADDR"), *port = env("MASTER_PORT");

    memset(out, 0, sizeof *out);
    snprintf(out->host, sizeof out->host, "%s", hostname && *hostname ? hostname : "unknown");
    out->pid = pid;
    out->job_source = "none";
    for (const char *const *v = job_vars; *v; v++) {
        const char *text = env(*v);
        /* torchrun's default run id "none" names nothing */
        if (text && *text && strcmp(text, "none") != 0) {
            set_job(out, text, *v);
            break;
        }
    }
    if (!out->job[0] && addr && *addr && port && *port) {
        char both[512], name[64];
        int n = snprintf(both, sizeof both, "%s:%s", addr, port);
        snprintf(name, sizeof name, "job-%016llx",
                 (unsigned long long)rs_hash_fnv1a64(both, (size_t)n));
        set_job(out, name, "MASTER_ADDR:MASTER_PORT");
    }
    if (!out->job[0]) {
        char name[300];
        snprintf(name, sizeof name, "unknown-%s-%u", out->host, pid);
        set_job(out, name, "none");
    }
    out->rank_known = first_uint(env, rank_vars, &out->rank);
    if (!first_uint(env, local_vars, &out->local_rank))
        out->local_rank = out->rank;
    if (!first_uint(env, world_vars, &out->world_size) || out->rank >= out->world_size)
        out->world_size = out->rank_known ? 0 : 1; /* 0 = unknown (the wire accepts it) */
}
