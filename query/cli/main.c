/* rankscope: the command-line client of the REST API. Parses global options and dispatches to a
 * command (query/cli/commands.h). */
#include "common/config.h"
#include "query/cli/commands.h"

#include <curl/curl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct cli_config {
    char *server;
    bool json;
};

static const struct rs_config_option options[] = {
    {"server", RS_CONFIG_STRING, "http://127.0.0.1:7070", offsetof(struct cli_config, server),
     "rankscope-server REST API base URL", 0, 0},
    {"json", RS_CONFIG_BOOL, "false", offsetof(struct cli_config, json),
     "print the API's JSON instead of tables", 0, 0},
};

static const struct rs_config_spec spec = {
    "rankscope",
    "rankscope [--server URL] <command> [args] [--json]",
    "Commands:\n"
    "  jobs          list the jobs the server knows\n"
    "  ranks JOB     per-rank summary of a job: host, GPU, steps, kernel and NCCL time per step\n"
    "  stragglers JOB  which rank slows the job, by how much, since when, and why\n"
    "  steps JOB     per-rank step time, compute, NCCL, exposed NCCL, idle and host gap\n"
    "  skew JOB      NCCL wait skew: who arrives last at collectives, how long the others wait\n"
    "  delete JOB    delete everything stored about a job\n"
    "Exit status: 0 ok, 1 server or API error, 2 usage error, 3 not found.",
    options,
    sizeof options / sizeof options[0],
    true,
};

struct command {
    const char *name;
    int (*run)(const struct rs_cli_options *o, int argc, char **argv);
};

static const struct command commands[] = {
    {"jobs", rs_cli_jobs},   {"ranks", rs_cli_ranks}, {"stragglers", rs_cli_stragglers},
    {"steps", rs_cli_steps}, {"skew", rs_cli_skew},   {"delete", rs_cli_delete},
};

int
main(int argc, char **argv)
{
    struct cli_config cfg = {0};
    char *pos[16];
    int npos = 0, rc = rs_config_main(&spec, &cfg, argc, argv, pos, 16, &npos);

    if (rc >= 0)
        return rc;
    if (npos == 0) {
        fprintf(stderr, "rankscope: no command given (see rankscope --help)\n");
        rc = 2;
        goto done;
    }
    rc = 2;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(pos[0], commands[i].name) != 0)
            continue;
        struct rs_cli_options o = {cfg.server, cfg.json};
        size_t n = strlen(o.server);
        while (n > 0 && cfg.server[n - 1] == '/') /* "http://host:7070/" works too */
            cfg.server[--n] = '\0';
        curl_global_init(CURL_GLOBAL_DEFAULT);
        rc = commands[i].run(&o, npos - 1, pos + 1);
        curl_global_cleanup();
        goto done;
    }
    fprintf(stderr, "rankscope: unknown command '%s' (see rankscope --help)\n", pos[0]);
done:
    rs_config_free(&spec, &cfg);
    return rc;
}
