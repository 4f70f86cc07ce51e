/* Trace files on disk: opening one (plain or gzip, told apart by content), reading it through the
 * Kineto importer with progress reports, the header pre-scan when a writer put the header after
 * the events, the rank in a file name, and expanding command-line arguments (files, directories,
 * globs) into trace files. Used by `rankscope analyze` and `rankscope import`.
 */
#ifndef RS_IMPORT_TRACE_FILE_H
#define RS_IMPORT_TRACE_FILE_H

#include "import/kineto.h"

#include <stddef.h>
#include <stdint.h>

/* Called now and then while a file is read: bytes of the file consumed so far and its size. */
typedef void (*rs_trace_progress_fn)(void *arg, uint64_t done, uint64_t total);

/* Imports one trace file (see rs_kineto_import for what is accepted, returned and counted). The
 * rank comes from o->rank, else distributedInfo, else the file name (rs_trace_rank_from_name),
 * else — with o->lone_rank0 — it is rank 0 of a one-rank job (stats->rank_assumed).
 * err gets "PATH: what, at byte N" on failure. */
int rs_trace_import_file(const char *path, const struct rs_kineto_options *o,
                         rs_kineto_sink_fn sink, void *sink_arg, rs_trace_progress_fn progress,
                         void *progress_arg, struct rs_kineto_stats *stats, char *err,
                         size_t err_len);

/* The rank a file name states ("trace_rank3.json.gz", "worker-rank_12.pt.trace.json"): the number
 * after the last "rank" (any case, optional '_' or '-'); -1 when none. */
int64_t rs_trace_rank_from_name(const char *path);

/* Expands arguments into a sorted, de-duplicated list of files: a file as is; a directory gives its
 * *.json and *.json.gz files (not recursive); anything else is a glob(3) pattern that must match.
 * *paths is malloc'd (free with rs_trace_paths_free). Returns 0, RS_E_NOT_FOUND (err names the
 * argument), or -ENOMEM. */
int rs_trace_expand(char *const *args, size_t n_args, char ***paths, size_t *n_paths, char *err,
                    size_t err_len);
void rs_trace_paths_free(char **paths, size_t n);

#endif
