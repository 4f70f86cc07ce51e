/* Unit tests of process identity from the environment: torchrun, Slurm, Open MPI, nothing. */
#include "node-agent/collector/identity.h"
#include "tests/t.h"

#include <string.h>

static const char *const *fake_env;

static const char *
fake_getenv(const char *name)
{
    for (const char *const *e = fake_env; e && *e; e += 2)
        if (strcmp(e[0], name) == 0)
            return e[1];
    return NULL;
}

static void
identify(const char *const *vars, struct rs_env_identity *id)
{
    fake_env = vars;
    rs_identity_from_env(fake_getenv, "node7", 4242, id);
}

static void
launchers(void)
{
    struct rs_env_identity id;
    static const char *const torchrun[] = {"RANK",        "3", "LOCAL_RANK",          "1",
                                           "WORLD_SIZE",  "8", "TORCHELASTIC_RUN_ID", "run 42",
                                           "MASTER_ADDR", "h", "MASTER_PORT",         "29500",
                                           NULL};
    static const char *const slurm[] = {
        "SLURM_JOB_ID", "123456", "SLURM_PROCID", "17", "SLURM_LOCALID", "1", "SLURM_NTASKS",
        "32",           NULL};
    static const char *const mpi[] = {"OMPI_COMM_WORLD_RANK",
                                      "2",
                                      "OMPI_COMM_WORLD_SIZE",
                                      "4",
                                      "OMPI_COMM_WORLD_LOCAL_RANK",
                                      "2",
                                      "RANKSCOPE_JOB_ID",
                                      "llama-pretrain",
                                      NULL};
    static const char *const bare_torchrun[] = {
        "RANK",      "0",           "WORLD_SIZE", "2", "TORCHELASTIC_RUN_ID", "none", "MASTER_ADDR",
        "127.0.0.1", "MASTER_PORT", "29500",      NULL};
    static const char *const nothing[] = {NULL};

    identify(torchrun, &id);
    T_CHECK(strcmp(id.job, "run_42") == 0); /* sanitized */
    T_EQ(id.rank, 3);
    T_EQ(id.local_rank, 1);
    T_EQ(id.world_size, 8);
    T_CHECK(id.rank_known);
    identify(slurm, &id);
    T_CHECK(strcmp(id.job, "123456") == 0);
    T_EQ(id.rank, 17);
    T_EQ(id.world_size, 32);
    identify(mpi, &id);
    T_CHECK(strcmp(id.job, "llama-pretrain") == 0); /* RANKSCOPE_JOB_ID wins */
    T_EQ(id.rank, 2);
    T_EQ(id.local_rank, 2);
    identify(bare_torchrun, &id);
    T_CHECK(strncmp(id.job, "job-", 4) == 0); /* from MASTER_ADDR:MASTER_PORT: same on all ranks */
    T_CHECK(strcmp(id.job_source, "MASTER_ADDR:MASTER_PORT") == 0);
    identify(nothing, &id);
    T_CHECK(strcmp(id.job, "unknown-node7-4242") == 0);
    T_EQ(id.rank, 0);
    T_EQ(id.world_size, 1);
    T_CHECK(!id.rank_known);
    T_CHECK(rs_wire_job_valid(id.job));
}

static void
bad_values(void)
{
    struct rs_env_identity id;
    static const char *const bad[] = {"RANK", "-1", "WORLD_SIZE", "x", NULL};
    static const char *const outside[] = {"RANK", "9", "WORLD_SIZE", "4", NULL};

    identify(bad, &id);
    T_CHECK(!id.rank_known);
    T_EQ(id.rank, 0);
    identify(outside, &id);
    T_EQ(id.rank, 9);
    T_EQ(id.world_size, 0); /* inconsistent: unknown, so the wire still accepts the rank */
}

int
main(void)
{
    T_RUN(launchers);
    T_RUN(bad_values);
    return T_DONE("collector/identity");
}
