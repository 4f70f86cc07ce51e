/* What `analyze` and `import` share: their trace-file arguments expanded (files, directories,
 * globs), the job name (--job, or the files' common name without the rank), each file imported in
 * turn with progress and a summary line on stderr, and the files' import statistics as JSON.
 * Internal to cli/. */
#ifndef RS_CLI_TRACE_ARGS_H
#define RS_CLI_TRACE_ARGS_H

#include "import/kineto.h"
#include "cli/commands.h"

#include <jansson.h>
#include <stddef.h>

struct rs_trace_set {
    char **paths;
    size_t n_paths;
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    int64_t rank; /* --rank: the rank of the one file (-1 = from the trace or its name) */
    /* The agent id of the batches: a hash of the job and of each file's path, size and mtime, so
     * importing the same files again is deduplicated and other files never are. */
    uint64_t agent_id;
};

/* Expands argv into trace files and settles the job name. Prints usage errors; returns the exit
 * code (0, 2 usage). */
int rs__cli_trace_set_open(const struct rs_cli_options *o, const char *usage, int argc, char **argv,
                           struct rs_trace_set *set);
void rs__cli_trace_set_close(struct rs_trace_set *set);

/* Imports every file of the set into `sink`. *files gets one JSON object per file (path, rank,
 * world_size, counts, bytes, seconds). Returns 0; 1 when a file could not be imported (the reason
 * is printed: file, what, byte offset) or two files are the same rank; or the sink's negative
 * error. */
int rs__cli_trace_set_import(const struct rs_trace_set *set, rs_kineto_sink_fn sink, void *arg,
                             json_t **files);

/* The agent batch that carries one imported rank batch (what analyze stores and import posts):
 * the set's agent id, `batch_seq`, and an agent hello naming the importer. */
struct rs_agent_batch rs__cli_import_batch(uint64_t agent_id, uint64_t batch_seq,
                                           const struct rs_rank_batch *b);

#endif
