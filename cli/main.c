/* rankscope: the command-line client of the REST API. Parses global options and dispatches to a
 * command (cli/commands.h). */
#include "common/auth_token.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/time_arg.h"
#include "cli/command_table.h"
#include "cli/http.h"
#include "cli/output.h"

#include <curl/curl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cli_config {
    char *server;
    char *ca_file; /* https:// servers: the CA that signed their certificate (cli/http.h) */
    bool json;
    int64_t rank, with_rank, limit, since_ns, until_ns, with_since_ns, with_until_ns;
    double interval_s;
    int64_t iterations, until_step, window;
    char *job, *data, *format, *out;
    char *since, *until, *with_since, *with_until, *last;
    char *token_file, *token;
};

#define OPT(...) RS_CONFIG_OPT(struct cli_config, __VA_ARGS__)

static const struct rs_config_option options[] = {
    {"server", RS_CONFIG_STRING, "http://127.0.0.1:7070", offsetof(struct cli_config, server),
     "rankscope-server REST API base URL (https://... for a server with --tls-cert)", 0, 0},
    {"ca-file", RS_CONFIG_STRING, "", offsetof(struct cli_config, ca_file),
     "PEM CA file to verify an https:// --server with (\"\" = the system's CAs)", 0, 0},
    {"json", RS_CONFIG_BOOL, "false", offsetof(struct cli_config, json),
     "print the API's JSON instead of tables", 0, 0},
    {"token-file", RS_CONFIG_STRING, "", offsetof(struct cli_config, token_file),
     "file whose first line is the token sent to the server (mode 0600 or 0640; read: queries, "
     "ingest: import, admin: delete)",
     0, 0},
    {"token", RS_CONFIG_STRING, "", offsetof(struct cli_config, token),
     "the token itself, best from the environment (a --token argument is visible to other "
     "users of the machine); --token-file wins when both are set",
     0, 0},
    OPT("rank", RS_CONFIG_INT, "-1", rank,
        "top, stalls, compare, export pprof, advise: one rank (-1 = all ranks); analyze, import: "
        "the rank "
        "of a single trace file that does not say it",
        -1, 16777215),
    OPT("with-rank", RS_CONFIG_INT, "-1", with_rank,
        "compare: side B's rank (-1 = the same as --rank)", -1, 16777215),
    {"since", RS_CONFIG_STRING, "", offsetof(struct cli_config, since),
     "records from this time on: a duration before now (10m, 2h), a UTC date and time "
     "(2026-11-24T08:00Z, 2026-11-24 08:00:30; +01:00 names a zone), or ns since the epoch",
     0, 0},
    {"until", RS_CONFIG_STRING, "", offsetof(struct cli_config, until),
     "... and before this time (the same forms)", 0, 0},
    {"last", RS_CONFIG_STRING, "", offsetof(struct cli_config, last),
     "the last part of the job's data up to now: --last 300s is --since 300s", 0, 0},
    {"with-since", RS_CONFIG_STRING, "", offsetof(struct cli_config, with_since),
     "compare: side B's --since (default: side A's)", 0, 0},
    {"with-until", RS_CONFIG_STRING, "", offsetof(struct cli_config, with_until),
     "compare: side B's --until (default: side A's)", 0, 0},
    OPT("since-ns", RS_CONFIG_INT, "-1", since_ns,
        "--since for scripts: ns since the epoch (-1 = all)", -1, 9.2e18),
    OPT("until-ns", RS_CONFIG_INT, "-1", until_ns, "--until for scripts: ns (-1 = all)", -1,
        9.2e18),
    OPT("with-since-ns", RS_CONFIG_INT, "-1", with_since_ns,
        "compare: side B's --since in ns (-1 = the same as side A's)", -1, 9.2e18),
    OPT("with-until-ns", RS_CONFIG_INT, "-1", with_until_ns,
        "compare: side B's --until in ns (-1 = the same as side A's)", -1, 9.2e18),
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
     "export: read this store (a server's --data directory, or analyze's --data) instead of "
     "the server",
     0, 0},
    {"format", RS_CONFIG_STRING, "perfetto", offsetof(struct cli_config, format),
     "export: perfetto (Chrome trace JSON, one file per rank), pprof (stall reasons when the "
     "window has PC samples, else GPU time per kernel), pprof-stalls or pprof-time",
     0, 0},
    {"out", RS_CONFIG_STRING, "", offsetof(struct cli_config, out),
     "export: perfetto: directory for the files (created when absent); pprof: the file, or a "
     "directory for JOB.pb.gz (default: JOB.pb.gz in the current directory, which an "
     "existing file there stops: --out replaces)",
     0, 0},
};

static struct rs_config_spec spec = {
    "rankscope", "rankscope [--server URL] <command> [args] [--json]",
    "", /* the command list, from the command table (main) */
    options,     sizeof options / sizeof options[0],
    true,        "RANKSCOPE_CLI_",
};

/* `rankscope COMMAND --help`, `rankscope help [COMMAND]`: prints and returns true when asked. */
static bool
command_help(int argc, char **argv, int *rc)
{
    int at = rs_config_first_positional(&spec, argc, argv);
    bool asked = false;

    if (at >= argc)
        return false;
    if (strcmp(argv[at], "help") == 0) {
        if (at + 1 >= argc) {
            rs_config_print_help(&spec);
            *rc = 0;
            return true;
        }
        at++;
        asked = true;
    }
    for (int i = 1; i < argc && !asked; i++)
        asked = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
    if (!asked)
        return false;
    const struct rs_cli_command *c = rs_cli_command_find(argv[at]);
    if (!c) {
        rs_cli_command_unknown(argv[at]);
        *rc = 2;
        return true;
    }
    rs_cli_command_help(c, &spec);
    *rc = 0;
    return true;
}

/* --since/--until/--last (and side B's) into the ns fields; refuses two forms of one bound. */
static int
resolve_times(struct cli_config *cfg)
{
    struct {
        const char *flag, *text;
        int64_t *ns;
    } bounds[] = {
        {"since", cfg->since, &cfg->since_ns},
        {"until", cfg->until, &cfg->until_ns},
        {"with-since", cfg->with_since, &cfg->with_since_ns},
        {"with-until", cfg->with_until, &cfg->with_until_ns},
    };
    int64_t now = (int64_t)rs_clock_realtime_ns(), ago;
    char err[256];

    if (*cfg->last) {
        if (*cfg->since || cfg->since_ns >= 0) {
            fprintf(stderr, "rankscope: --last and --since both set the start; give one\n");
            return 2;
        }
        if (rs_time_arg_duration(cfg->last, &ago, err, sizeof err) != 0) {
            fprintf(stderr, "rankscope: --last: %s\n", err);
            return 2;
        }
        cfg->since_ns = now - ago;
    }
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        if (!*bounds[i].text)
            continue;
        if (*bounds[i].ns >= 0) {
            fprintf(stderr, "rankscope: --%s and --%s-ns set the same bound; give one\n",
                    bounds[i].flag, bounds[i].flag);
            return 2;
        }
        if (rs_time_arg_parse(bounds[i].text, now, bounds[i].ns, err, sizeof err) != 0) {
            fprintf(stderr, "rankscope: --%s: %s\n", bounds[i].flag, err);
            return 2;
        }
    }
    return 0;
}

/* Whether `key` is one of the space-separated words of `list`. */
static bool
listed(const char *list, const char *key, size_t n)
{
    for (const char *p = list; (p = strstr(p, key)) != NULL; p++)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* Refuses, on the command line, options the command does not use (they were ignored silently),
 * an empty time range and --limit 0 (the environment's RANKSCOPE_CLI_* settings may hold options
 * for other commands). Returns 0 or 2. */
static int
options_apply(const struct rs_cli_command *c, const struct cli_config *cfg, int argc, char **argv)
{
    static const char global[] = "server json config help token-file token ca-file";

    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) != 0)
            continue;
        const char *key = argv[i] + 2;
        size_t n = strcspn(key, "=");
        if (listed(global, key, n) || listed(c->options, key, n))
            continue;
        /* the ns forms go with their option */
        if (n > 3 && strncmp(key + n - 3, "-ns", 3) == 0 && listed(c->options, key, n - 3))
            continue;
        fprintf(stderr, "rankscope: --%.*s does not apply to '%s' (rankscope %s --help)\n", (int)n,
                key, c->name, c->name);
        return 2;
    }
    if (cfg->since_ns >= 0 && cfg->until_ns >= 0 && cfg->since_ns >= cfg->until_ns) {
        fprintf(stderr, "rankscope: the time range is empty: --since is not before --until\n");
        return 2;
    }
    if (cfg->limit == 0) {
        fprintf(stderr, "rankscope: --limit 0 shows nothing: give 1 or more (-1: the default)\n");
        return 2;
    }
    return 0;
}

/* The token from --token-file, else --token / RANKSCOPE_CLI_TOKEN, for every request. Returns 0
 * or 2 (a token file that cannot be used, a malformed token). */
static int
use_token(const struct cli_config *cfg)
{
    char token[RS_AUTH_TOKEN_MAX + 1], err[512];

    if (cfg->token_file[0]) {
        if (rs_auth_token_read_file(cfg->token_file, token, sizeof token, err, sizeof err) != 0) {
            fprintf(stderr, "rankscope: %s\n", rs__cli_escaped(err));
            return 2;
        }
        rs_cli_http_set_token(token);
        memset(token, 0, sizeof token);
    } else if (cfg->token[0]) {
        if (!rs_auth_token_valid(cfg->token)) {
            fprintf(stderr,
                    "rankscope: --token (RANKSCOPE_CLI_TOKEN) is not a token (%d to %d "
                    "characters of letters, digits and -._~+/=)\n",
                    RS_AUTH_TOKEN_MIN, RS_AUTH_TOKEN_MAX);
            return 2;
        }
        rs_cli_http_set_token(cfg->token);
    }
    return 0;
}

int
main(int argc, char **argv)
{
    struct cli_config cfg = {0};
    char command_list[4096];
    char **pos = calloc((size_t)argc + 1, sizeof *pos);
    int npos = 0, rc;

    rs_cli_command_list(command_list, sizeof command_list);
    spec.summary = command_list;
    if (!pos) {
        fprintf(stderr, "rankscope: out of memory\n");
        return 1;
    }
    if (command_help(argc, argv, &rc)) {
        free(pos);
        return rc;
    }
    if ((rc = rs_config_main(&spec, &cfg, argc, argv, pos, argc, &npos)) >= 0) {
        free(pos);
        return rc;
    }
    if (npos == 0) {
        fprintf(stderr, "rankscope: no command given (rankscope --help lists the commands)\n");
        rc = 2;
        goto done;
    }
    const struct rs_cli_command *c = rs_cli_command_find(pos[0]);
    if (!c) {
        rs_cli_command_unknown(pos[0]);
        rc = 2;
        goto done;
    }
    if ((rc = resolve_times(&cfg)) != 0 || (rc = options_apply(c, &cfg, argc, argv)) != 0)
        goto done;
    struct rs_cli_options o = {
        cfg.server,     cfg.json,       cfg.rank,          cfg.with_rank,     cfg.limit,
        cfg.since_ns,   cfg.until_ns,   cfg.with_since_ns, cfg.with_until_ns, cfg.interval_s,
        cfg.iterations, cfg.until_step, cfg.window,        cfg.job,           cfg.data,
        cfg.format,     cfg.out};
    size_t n = strlen(o.server);
    while (n > 0 && cfg.server[n - 1] == '/') /* "http://host:7070/" works too */
        cfg.server[--n] = '\0';
    if ((rc = use_token(&cfg)) != 0)
        goto done;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    rs_cli_http_set_ca_file(cfg.ca_file);
    rc = c->run(&o, npos - 1, pos + 1);
    curl_global_cleanup();
done:
    rs_config_free(&spec, &cfg);
    free(pos);
    return rc;
}
