/* What every CLI command does the same way: one REST request with API errors printed for people
 * and mapped to exit codes, --json output, time formatting, JSON field access, argument checks.
 * Internal to cli/. */
#ifndef RS_CLI_OUTPUT_H
#define RS_CLI_OUTPUT_H

#include "cli/commands.h"

#include <jansson.h>
#include <stddef.h>

/* Sends the request; prints API errors on stderr. Returns the exit code: 0 with *doc set, 1 server
 * or API error, 3 not found. */
int rs__cli_request(const struct rs_cli_options *o, const char *method, const char *path,
                    json_t **doc);

/* After a 404 for `path` (/v1/jobs/JOB/...?rank=R&with=JOB_B&with_rank=R2): asks the server which
 * job or rank is missing and says so on stderr, with a near name and the command that lists what
 * exists. Returns false when everything named exists (the server's own message then stands). */
bool rs__cli_explain_not_found(const struct rs_cli_options *o, const char *path);

/* What most commands do: `method` `path`, then the answer as is (--json) or through
 * render(job, doc); `exit_code` (NULL = none) may turn a successful answer into another exit code
 * (stragglers: 4 when there is not enough data). Returns the exit code. */
int rs__cli_show(const struct rs_cli_options *o, const char *method, const char *job,
                 const char *path, int (*render)(const char *job, json_t *doc),
                 int (*exit_code)(json_t *doc));

/* What the commands about one job's resource share: checks that argv is one job name (printing
 * `usage` otherwise), then shows /v1/jobs/JOB<suffix> — with the scope options (--rank, --since,
 * --until, --limit) when `scoped` — through rs__cli_show. Returns the exit code. */
int rs__cli_show_job(const struct rs_cli_options *o, int argc, char **argv, const char *usage,
                     const char *method, const char *suffix, bool scoped,
                     int (*render)(const char *job, json_t *doc));

/* Appends "?key=value&..." for each scope option given (compare: side B's too) to q. */
void rs__cli_scope_query(const struct rs_cli_options *o, char *q, size_t len, bool compare);

/* Prints an API error answer's message (doc may be NULL: not JSON) on stderr. Returns the exit
 * code: 3 for 404, else 1. */
int rs__cli_api_error(long status, json_t *doc);

/* Shows control characters and bytes that are not UTF-8 in every string of doc as \xNN
 * (rs_utf8_escape), in place: what tables print comes from the wire, and a kernel or host name
 * must not drive the terminal. --json output needs none of it (JSON escapes them itself). */
void rs__cli_escape_doc(json_t *doc);

/* s with control characters and bytes that are not UTF-8 shown as \xNN (rs_utf8_escape), for
 * messages that name what came from outside (a trace file's path, the importer's error): valid
 * until the 4th call after (rotating buffers; the CLI is single-threaded). */
const char *rs__cli_escaped(const char *s);

/* Prints doc indented on stdout and drops the reference. Returns the exit code. */
int rs__cli_print_json(json_t *doc);

/* "2026-11-22 09:41:19Z", or "-" for ns <= 0. */
void rs__cli_format_time(json_int_t ns, char *out, size_t len);

json_int_t rs__cli_int(json_t *o, const char *key);
double rs__cli_real(json_t *o, const char *key);

/* x with `decimals` decimals and its sign ("+1.25", "-0.40") into out — but "0.00", without a
 * sign, when it rounds to zero at that precision (no "-0.0" or "+0.00"). Returns out. */
const char *rs__cli_signed(double x, int decimals, char *out, size_t len);

/* Whether x rounds to zero with `decimals` decimals. */
bool rs__cli_rounds_to_zero(double x, int decimals);

/* Checks that argv is exactly one valid job name; prints `usage` and returns 2 otherwise. */
int rs__cli_job_arg(const char *usage, int argc, char **argv);

/* Tables for people from the API's documents (the same JSON the REST API returns; `job` names the
 * job in headings). They print on stdout, do not take `doc`, and return the exit code. Used by the
 * commands that fetch the documents and by `analyze`, which computes them in process. */
int rs__cli_render_ranks(const char *job, json_t *doc);
int rs__cli_render_steps(const char *job, json_t *doc);
int rs__cli_render_skew(const char *job, json_t *doc);
int rs__cli_render_stragglers(const char *job, json_t *doc);
/* A verdict's hardware evidence lines ("hardware" of /stragglers; nothing without telemetry). */
void rs__cli_render_hardware(json_t *verdict);
int rs__cli_render_top(const char *job, json_t *doc);
int rs__cli_render_advice(const char *job, json_t *doc); /* cli/advise.c */

#endif
