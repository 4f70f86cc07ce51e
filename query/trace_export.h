/* Export of a job's window as Chrome trace JSON, one file per rank (<dir>/<job>_rank<R>.json), in
 * the shape PyTorch's profiler writes (docs/platform-facts.md): `distributedInfo` with the
 * rank and world size, one `baseTimeNanoseconds` shared by every rank's file so that their
 * timelines align, kernels ("kernel"), copies ("gpu_memcpy", "gpu_memset"), NCCL kernels with
 * "Collective name", "Process Group Name" and "Seq" args, and steps as `ProfilerStep#N` user
 * annotations. HTA reads the directory, Perfetto and chrome://tracing each file, and `rankscope
 * analyze`/`import` read it back. Files are written as the store is scanned: memory does not grow
 * with the window. NCCL records are keyed by instance, not by rank, so each rank's file costs one
 * range scan of the window's collectives (ranks x collectives in all).
 */
#ifndef RS_QUERY_TRACE_EXPORT_H
#define RS_QUERY_TRACE_EXPORT_H

#include "storage/store.h"

#include <stdint.h>
#include <stdio.h>

struct rs_trace_export_options {
    const char *job;
    uint64_t since_ns, until_ns; /* records that start in [since, until); 0 = open */
    const char *dir;             /* rs_trace_export: existing directory for the files */
    uint64_t max_events;         /* per rank; more is RS_E_TOO_BIG (0 = no limit) */
};

struct rs_trace_export_stats {
    uint64_t events; /* trace events written */
    uint32_t ranks;
    uint64_t kernels, collectives, memcpys, steps; /* memcpys: memcpy and memset records */
    uint64_t syncs;                                /* host synchronizations ("cuda_sync") */
};

/* Writes the files. Returns 0, RS_E_NOT_FOUND (no such job), a storage error, or -errno of a
 * file (err says which). */
int rs_trace_export(rs_store_read *r, const struct rs_trace_export_options *o,
                    struct rs_trace_export_stats *stats, char *err, size_t err_len);

/* One rank's document (what rs_trace_export writes to <job>_rank<R>.json) to `f`, with the same
 * shared base, so that documents fetched one rank at a time line up. Returns 0, RS_E_NOT_FOUND
 * (no such job or rank), RS_E_TOO_BIG (more than o->max_events events; `f` then holds a
 * truncated document), or a storage error. `o->dir` is not used. */
int rs_trace_export_rank(rs_store_read *r, const struct rs_trace_export_options *o, uint32_t rank,
                         FILE *f, struct rs_trace_export_stats *stats);

#endif
