/* The CLI's commands as one table: name, arguments, the options that apply, a one-line summary and
 * the text of `rankscope COMMAND --help`. main.c dispatches through it and builds the global help
 * from it. Internal to cli/. */
#ifndef RS_CLI_COMMAND_TABLE_H
#define RS_CLI_COMMAND_TABLE_H

#include "common/config.h"
#include "cli/commands.h"

#include <stddef.h>

struct rs_cli_command {
    const char *name;
    int (*run)(const struct rs_cli_options *o, int argc, char **argv);
    const char *args;    /* "JOB [JOB_B]" */
    const char *options; /* the option keys that apply, space-separated ("rank limit since") */
    const char *summary; /* one line for the global help */
    const char *details; /* the command's own help: what it prints, how to read it */
};

extern const struct rs_cli_command rs_cli_commands[];
extern const size_t rs_cli_n_commands;

/* The command named `name`, or NULL. */
const struct rs_cli_command *rs_cli_command_find(const char *name);

/* Prints "rankscope: unknown command 'X'" with a "did you mean" when one is near, on stderr. */
void rs_cli_command_unknown(const char *name);

/* Writes the global help's command list ("Commands:\n  jobs  ...") into out. */
void rs_cli_command_list(char *out, size_t len);

/* Prints `rankscope COMMAND --help` on stdout: usage, details, the command's options from `spec`
 * (with their environment variables and defaults), the global options and the exit codes. */
void rs_cli_command_help(const struct rs_cli_command *c, const struct rs_config_spec *spec);

/* The exit codes, as the help texts state them. */
#define RS_CLI_EXIT_CODES                                                                          \
    "Exit status: 0 ok, 1 server or API error, 2 usage error, 3 not found (a job or a rank),\n"    \
    "4 not enough data for an answer yet, 5 not authorized (no token, a token the server does\n"   \
    "not take, or one whose role does not allow the request)."

#endif
