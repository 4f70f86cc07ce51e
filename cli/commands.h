/* The CLI's commands: each fetches one REST resource and prints it as a table for people or as
 * the API's JSON (--json) for scripts. Exit codes: 0 ok, 1 server/API error, 2 usage error,
 * 3 not found, 5 not authorized (401/403), 4 not enough data (`stragglers`: the answer says why,
 * "enough_data": false — too few ranks or steps for a verdict; the table or JSON is printed all the
 * same). */
#ifndef RS_CLI_COMMANDS_H
#define RS_CLI_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

#define RS_CLI_EXIT_NOT_ENOUGH_DATA 4
/* The server refused the request: no token or one it does not take (HTTP 401), or a token whose
 * role does not allow it (403). */
#define RS_CLI_EXIT_UNAUTHORIZED 5

struct rs_cli_options {
    const char *server; /* base URL */
    bool json;
    /* scope options of top, stalls, compare (-1 = not given) */
    int64_t rank, with_rank, limit;
    int64_t since_ns, until_ns, with_since_ns, with_until_ns;
    double interval_s;    /* watch */
    int64_t iterations;   /* watch: refreshes before exiting; 0 = until interrupted */
    int64_t until_step;   /* stragglers: as of this step (-1 = the newest) */
    int64_t window;       /* stragglers: steps per window (0 = the server's default) */
    const char *job;      /* analyze, import: the job name of the imported traces ("" = derived) */
    const char *data_dir; /* analyze: keep the store here ("" = a temporary one); export: read it */
    const char *format;   /* export: "perfetto", "pprof", "pprof-stalls", "pprof-time" */
    const char *out;      /* export: perfetto: a directory; pprof: a file or directory */
};

int rs_cli_jobs(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_ranks(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_hangs(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_delete(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_skew(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_steps(const struct rs_cli_options *o, int argc, char **argv);
/* Exit 4 when the answer has too little data for a verdict ("enough_data": false). */
int rs_cli_stragglers(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_top(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_stalls(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_compare(const struct rs_cli_options *o, int argc, char **argv);
/* Refreshes the straggler verdict, skew and top kernels of a job every interval_s until
 * interrupted (or once with --json). */
/* Imports trace files into an embedded store and prints the cross-rank report (no server). */
int rs_cli_analyze(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_advise(const struct rs_cli_options *o, int argc, char **argv);
/* Writes a window of a job as Chrome/Perfetto trace files, one per rank, or as a pprof profile. */
int rs_cli_export(const struct rs_cli_options *o, int argc, char **argv);
/* Imports trace files into the server (POST /v1/import). */
int rs_cli_import(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_watch(const struct rs_cli_options *o, int argc, char **argv);
/* Each rank's GPU telemetry (GET /v1/jobs/{job}/gpus; cli/gpus.c). */
int rs_cli_gpus(const struct rs_cli_options *o, int argc, char **argv);
/* GPUs (or hosts) ranked by how often they were the straggler (GET /v1/gpus, /v1/hosts). */
int rs_cli_fleet(const struct rs_cli_options *o, int argc, char **argv);

#endif
