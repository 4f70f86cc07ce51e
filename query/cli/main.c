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
    int64_t rank, with_rank, limit, since_ns, until_ns, with_since_ns, with_until_ns;
    double interval_s;
    int64_t iterations, until_step, window;
    char *job, *data, *format, *out;
};

#define OPT(key, type, def, field, help, lo, hi)                                                   \
    {                                                                                              \
        key, type, def, offsetof(struct cli_config, field), help, lo, hi                           \
    }

static const struct rs_config_option options[] = {
    {"server", RS_CONFIG_STRING, "http://127.0.0.1:7070", offsetof(struct cli_config, server),
     "rankscope-server REST API base URL", 0, 0},
    {"json", RS_CONFIG_BOOL, "false", offsetof(struct cli_config, json),
     "print the API's JSON instead of tables", 0, 0},
    OPT("rank", RS_CONFIG_INT, "-1", rank,
        "top, stalls, compare, export pprof: one rank (-1 = all ranks); analyze, import: the rank "
        "of a single trace file that does not say it",
        -1, 16777215),
    OPT("with-rank", RS_CONFIG_INT, "-1", with_rank,
        "compare: side B's rank (-1 = the same as --rank)", -1, 16777215),
    OPT("since-ns", RS_CONFIG_INT, "-1", since_ns,
        "top, stalls, compare: records from this time on (ns since the epoch; -1 = all)", -1,
        9.2e18),
    OPT("until-ns", RS_CONFIG_INT, "-1", until_ns, "... and before this time (-1 = all)", -1,
        9.2e18),
    OPT("with-since-ns", RS_CONFIG_INT, "-1", with_since_ns,
        "compare: side B's --since-ns (-1 = the same as side A's)", -1, 9.2e18),
    OPT("with-until-ns", RS_CONFIG_INT, "-1", with_until_ns,
        "compare: side B's --until-ns (-1 = the same as side A's)", -1, 9.2e18),
    OPT("limit", RS_CONFIG_INT, "-1", limit,
        "top, stalls, compare: rows (-1 = the server's default)", -1, 100000),
    OPT("interval-s", RS_CONFIG_DOUBLE, "2", interval_s, "watch: refresh period, seconds", 0.2,
        3600),
    OPT("window", RS_CONFIG_INT, "0", window,
        "stragglers: steps per window (0 = the server's 30 steps or 60 s; short imported traces "
        "need fewer)",
        0, 100000),
    OPT("until-step", RS_CONFIG_INT, "-1", until_step,
        "stragglers: the verdict as of this step (-1 = the newest)", -1, 9.2e18),
    OPT("iterations", RS_CONFIG_INT, "0", iterations,
        "watch: refresh this many times, then exit (0 = until Ctrl-C)", 0, 1000000000),
    {"job", RS_CONFIG_STRING, "", offsetof(struct cli_config, job),
     "analyze, import: job name of the traces (default: their file names without the rank)", 0, 0},
    {"data", RS_CONFIG_STRING, "", offsetof(struct cli_config, data),
     "analyze: keep the imported data in this store directory (default: a temporary one); "
     "export: read this store (a server's --data-dir, or analyze's --data) instead of the "
     "server",
     0, 0},
    {"format", RS_CONFIG_STRING, "perfetto", offsetof(struct cli_config, format),
     "export: perfetto (Chrome trace JSON, one file per rank), pprof (stall reasons when the "
     "window has PC samples, else GPU time per kernel), pprof-stalls or pprof-time",
     0, 0},
    {"out", RS_CONFIG_STRING, "", offsetof(struct cli_config, out),
     "export: perfetto: directory for the files (created when absent); pprof: the file, or a "
     "directory for JOB.pb.gz (default: JOB.pb.gz here)",
     0, 0},
};

static const struct rs_config_spec spec = {
    "rankscope",
    "rankscope [--server URL] <command> [args] [--json]",
    "Commands:\n"
    "  jobs          list the jobs the server knows\n"
    "  ranks JOB     per-rank summary of a job: host, GPU, steps, kernel and NCCL time per step\n"
    "  stragglers JOB  which rank slows the job, by how much, since when, and why\n"
    "                [--until-step N: as of a past step]\n"
    "  steps JOB     per-rank step time, compute, NCCL, exposed NCCL, idle and host gap\n"
    "  skew JOB      NCCL wait skew: who arrives last at collectives, how long the others wait\n"
    "  top JOB       kernels and NCCL ops by GPU time per step [--rank R] [--limit N]\n"
    "  stalls JOB    PC-sampling stall reasons per kernel, and the straggler (or --rank R)\n"
    "                against its peers\n"
    "  compare JOB [JOB_B]  what changed, per kernel and NCCL op, per step: two jobs, two ranks\n"
    "                (--rank R --with-rank R2) or two windows (--since-ns/--until-ns and\n"
    "                --with-since-ns/--with-until-ns)\n"
    "  analyze FILE...  import PyTorch profiler traces (one per rank; .json or .json.gz, "
    "directories,\n"
    "                globs) into an embedded store and print ranks, steps, top kernels, NCCL\n"
    "                skew and stragglers; no server needed [--job NAME] [--data DIR]\n"
    "  import FILE...   the same traces into the server (--server), so that imported and live\n"
    "                jobs can be compared [--job NAME]\n"
    "  export JOB    a window (--since-ns/--until-ns) as Perfetto/Chrome trace files, one per\n"
    "                rank, aligned, with distributedInfo (HTA reads the directory)\n"
    "                --out DIR [--format perfetto]; from the server, or a store with --data\n"
    "                --format pprof: a pprof profile (go tool pprof): stall reasons, rank ->\n"
    "                kernel -> pc -> reason, or GPU time per kernel without PC samples;\n"
    "                from the server, or a store with --data [--rank R] [--out FILE]\n"
    "  watch JOB     live view: straggler verdict, NCCL skew, top kernels, every --interval-s\n"
    "  delete JOB    delete everything stored about a job\n"
    "Exit status: 0 ok, 1 server or API error, 2 usage error, 3 not found.",
    options,
    sizeof options / sizeof options[0],
    true,
    "RANKSCOPE_CLI_",
};

struct command {
    const char *name;
    int (*run)(const struct rs_cli_options *o, int argc, char **argv);
};

static const struct command commands[] = {
    {"jobs", rs_cli_jobs},     {"ranks", rs_cli_ranks},     {"stragglers", rs_cli_stragglers},
    {"steps", rs_cli_steps},   {"skew", rs_cli_skew},       {"delete", rs_cli_delete},
    {"top", rs_cli_top},       {"stalls", rs_cli_stalls},   {"compare", rs_cli_compare},
    {"watch", rs_cli_watch},   {"analyze", rs_cli_analyze}, {"import", rs_cli_import},
    {"export", rs_cli_export},
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
        struct rs_cli_options o = {
            cfg.server,     cfg.json,       cfg.rank,          cfg.with_rank,     cfg.limit,
            cfg.since_ns,   cfg.until_ns,   cfg.with_since_ns, cfg.with_until_ns, cfg.interval_s,
            cfg.iterations, cfg.until_step, cfg.window,        cfg.job,           cfg.data,
            cfg.format,     cfg.out};
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
