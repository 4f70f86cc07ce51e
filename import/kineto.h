/* Kineto (PyTorch profiler) Chrome-trace JSON -> rankscope rank batches. One trace file holds one
 * rank; its GPU events become the records the collector would have sent: kernels, NCCL collectives
 * (matched across ranks by process group and sequence), memcpy/memset, and steps from
 * `ProfilerStep#N` ranges. Everything else (CPU ops, runtime calls, flows, metadata) is counted and
 * skipped. Streams: memory is bounded by one batch whatever the file size.
 *
 * Accepted conventions (docs/platform-facts.md "PyTorch profiler (Kineto) traces"): timestamps in
 * µs (3 decimals), absolute epoch µs or relative to `baseTimeNanoseconds`; current lowercase
 * categories ("kernel", "gpu_memcpy", "gpu_memset", "user_annotation", "cpu_op") and the old
 * capitalised ones ("Kernel", "Memcpy", "Memset", "Operator"); NCCL kernels recognised by name or
 * by their "Collective name" argument, communicator from "Process Group Name", sequence from "Seq"
 * when present (else counted per process group, op and stream in trace order); rank and world size
 * from `distributedInfo`.
 */
#ifndef RS_IMPORT_KINETO_H
#define RS_IMPORT_KINETO_H

#include "import/json_reader.h"
#include "proto/wire.h"

#include <stdbool.h>
#include <stdint.h>

#define RS_KINETO_BATCH_RECORDS 8192u /* records per emitted batch */

/* The document-level fields that events depend on. Kineto writes them before "traceEvents"; a
 * writer that puts them after needs rs_kineto_header_scan first (rs_kineto_import says so). */
struct rs_kineto_header {
    bool have_base, have_rank;
    uint64_t base_ns;    /* baseTimeNanoseconds */
    uint32_t rank;       /* distributedInfo.rank */
    uint32_t world_size; /* distributedInfo.world_size (0 = not given) */
    bool scanned;        /* filled by rs_kineto_header_scan: absent fields are truly absent */
};

struct rs_kineto_options {
    const char *job;  /* identity of every record; a valid job name (rs_wire_job_valid) */
    int64_t rank;     /* >= 0 overrides distributedInfo; -1 = from the trace */
    const char *host; /* "" when unknown */
    /* rs_trace_import_file: a trace that says no rank (neither distributedInfo nor its file name)
     * is rank 0 of a one-rank job — for a lone file — instead of being refused */
    bool lone_rank0;
};

struct rs_kineto_stats {
    uint64_t events;                               /* trace events read */
    uint64_t kernels, collectives, memcpys, steps; /* memcpys: copies and memsets */
    uint64_t syncs;                                /* host synchronizations ("cuda_sync" events) */
    uint64_t ignored;                              /* events of kinds rankscope does not import */
    uint64_t rejected;          /* GPU events without a usable ts/dur (not imported) */
    uint64_t names_truncated;   /* names longer than RS_WIRE_MAX_STRING_LEN, cut */
    uint64_t nccl_out_of_order; /* NCCL kernels earlier than the previous one on their stream */
    uint64_t batches;
    uint32_t rank, world_size;
    bool relative_time; /* timestamps were relative to baseTimeNanoseconds */
    bool rank_assumed;  /* rank 0 of a one-rank job by lone_rank0: the trace said no rank */
    bool not_a_trace;   /* the document is JSON but no trace (no traceEvents): nothing imported */
    uint64_t first_ns, last_ns;
};

/* Receives each batch; its arrays live until the callback returns. A non-zero return stops the
 * import and is returned by rs_kineto_import. */
typedef int (*rs_kineto_sink_fn)(void *arg, const struct rs_rank_batch *b);

/* rs_kineto_import's return when the trace's header fields follow its events and are needed: scan
 * the document with rs_kineto_header_scan on a fresh reader, then import again with that header.
 * Nothing was passed to the sink. */
#define RS_KINETO_NEED_HEADER 1

/* Reads a whole trace document from `r`, passing batches of at most RS_KINETO_BATCH_RECORDS
 * records to `sink`. `header` is NULL or the result of rs_kineto_header_scan. Returns 0,
 * RS_KINETO_NEED_HEADER, the reader's error (rs_json_error says where), RS_E_MALFORMED for a
 * document that is JSON but not a trace (err says why), RS_E_CONFIG when the rank is unknown,
 * -ENOMEM, or the sink's code. *stats is filled in either case. */
int rs_kineto_import(rs_json_reader *r, const struct rs_kineto_options *o,
                     const struct rs_kineto_header *header, rs_kineto_sink_fn sink, void *arg,
                     struct rs_kineto_stats *stats, char *err, size_t err_len);

/* Reads a whole trace document collecting only the header fields (events are skipped). */
int rs_kineto_header_scan(rs_json_reader *r, struct rs_kineto_header *out, char *err,
                          size_t err_len);

/* The collective a Kineto/PyTorch "Collective name" argument names ("allreduce", "all_gather",
 * "_reduce_scatter_base", "send", ...); RS_COLL_UNKNOWN when it names none. */
enum rs_coll_op rs_kineto_collective_op(const char *name);

#endif
