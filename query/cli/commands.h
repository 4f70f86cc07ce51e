/* The CLI's commands: each fetches one REST resource and prints it as a table for people or as
 * the API's JSON (--json) for scripts. Exit codes: 0 ok, 1 server/API error, 2 usage error,
 * 3 not found. */
#ifndef RS_QUERY_CLI_COMMANDS_H
#define RS_QUERY_CLI_COMMANDS_H

#include <stdbool.h>

struct rs_cli_options {
    const char *server; /* base URL */
    bool json;
};

int rs_cli_jobs(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_ranks(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_delete(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_skew(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_steps(const struct rs_cli_options *o, int argc, char **argv);
int rs_cli_stragglers(const struct rs_cli_options *o, int argc, char **argv);

#endif
