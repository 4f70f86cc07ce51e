/* The wire layer: the only code that touches the protobuf-c structs generated from
 * proto/rankscope.proto. Everything else uses the plain C types below.
 *
 * Decoders never trust their input: they check sizes, versions, string indexes, time ranges and
 * identity fields, and return RS_E_MALFORMED / RS_E_TOO_BIG / RS_E_VERSION without asserting.
 * Encoders check the same limits, so what we send is what we accept.
 * All functions are thread-safe (no shared state).
 */
#ifndef RS_PROTO_WIRE_H
#define RS_PROTO_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/step_metrics.h"
#include "proto/capture.h"

/* AgentBatch.schema_version. 2: the batch carries agent summaries (kernel/copy totals or measured
 * steps), which a server that reads only version 1 would drop without a word — it refuses them
 * instead. 3: it carries host synchronizations (rs_copy_kind_is_sync), which a version-2 server
 * would reject as malformed. 4: it carries launch waits (RS_LAUNCH_WAIT), which a version-3
 * server would reject as malformed. 5: it carries GPU telemetry (rs_gpu_sample), which a version-4
 * server would drop without a word (an unknown field) — it refuses the batch instead, and the agent
 * sends telemetry in batches of its own so that a refusal costs no profile data (agent.c). Encoders
 * write the lowest version that holds the batch; decoders accept 1 .. 5. */
#ifndef RS_WIRE_SCHEMA_VERSION /* tests build an older server with a lower one (Makefile) */
#define RS_WIRE_SCHEMA_VERSION 5u
#endif
#define RS_WIRE_SCHEMA_VERSION_MIN 1u
#define RS_WIRE_MAX_BATCH_BYTES (16u << 20) /* one AgentBatch request */
#define RS_WIRE_MAX_FRAME_BYTES (60u << 10) /* one RankBatch frame, collector -> agent */
#define RS_WIRE_MAX_REPLY_BYTES 4096u
#define RS_WIRE_MAX_STRINGS 65536u
#define RS_WIRE_MAX_STRING_LEN 4096u
#define RS_WIRE_MAX_RANKS_PER_BATCH 4096u
#define RS_WIRE_MAX_JOB_LEN 128u
#define RS_WIRE_MAX_TIME_NS (1ull << 62) /* any offset or duration beyond ~146 years is garbage */

/* Kinds of the non-kernel activity records (struct rs_memcpy_record, rs_copy_total): copies and
 * memsets, which keep the GPU busy, and host-side time, which does not: host synchronizations,
 * during which a host thread waited for GPU work, and launch waits, during which the GPU waited
 * for the host to queue work (node-agent/collector/launch_wait.h); bytes 0. They share one record
 * type, series and window kind in the store, so the store, rollups, exports and scans treat them
 * alike; what counts as GPU time asks rs_copy_kind_is_host_side. */
enum rs_copy_kind {
    RS_COPY_UNKNOWN = 0,
    RS_COPY_HTOD,
    RS_COPY_DTOH,
    RS_COPY_DTOD,
    RS_COPY_PEER,
    RS_COPY_MEMSET,
    RS_SYNC_EVENT,       /* cudaEventSynchronize */
    RS_SYNC_STREAM_WAIT, /* cudaStreamWaitEvent: the host call (the wait itself is on the GPU) */
    RS_SYNC_STREAM,      /* cudaStreamSynchronize */
    RS_SYNC_CONTEXT,     /* cudaDeviceSynchronize, cuCtxSynchronize */
    RS_LAUNCH_WAIT,      /* the GPU idle until the host queued the work that followed */
    RS_COPY_KIND_COUNT
};

/* True for the host synchronization kinds. */
static inline bool
rs_copy_kind_is_sync(uint32_t kind)
{
    return kind >= RS_SYNC_EVENT && kind <= RS_SYNC_CONTEXT;
}

/* True for the host-side kinds (synchronizations and launch waits): time that is not GPU work. */
static inline bool
rs_copy_kind_is_host_side(uint32_t kind)
{
    return kind >= RS_SYNC_EVENT && kind < RS_COPY_KIND_COUNT;
}

enum rs_coll_op {
    RS_COLL_UNKNOWN = 0,
    RS_COLL_ALLREDUCE,
    RS_COLL_ALLGATHER,
    RS_COLL_REDUCESCATTER,
    RS_COLL_BROADCAST,
    RS_COLL_REDUCE,
    RS_COLL_SENDRECV,
    RS_COLL_ALLTOALL,
    RS_COLL_OP_COUNT
};

/* Bits of struct rs_rank_batch.collector_flags. */
enum rs_collector_flag {
    RS_COLLECTOR_STEPPED_ASIDE = 1,
    RS_COLLECTOR_VERSION_MISMATCH = 2,
    RS_COLLECTOR_CLOCK_REPLACED = 4,
    RS_COLLECTOR_CUPTI_ERROR = 8,
    /* an NCCL operation of this rank is in flight past the hang limit (the NCCL profiler plugin);
     * collector_status names it (docs/collector.md "Hangs") */
    RS_COLLECTOR_IN_FLIGHT = 16,
    /* kernels (and copies, synchronizations, launch calls) are traced in windows, not always:
     * per-kernel answers are sampled (docs/collector.md "Tiers") */
    RS_COLLECTOR_KERNELS_SAMPLED = 32,
    RS_COLLECTOR_FLAGS_ALL = 63
};

/* comm_hash of a collective whose communicator is unknown (no NCCL profiler plugin, no process
 * group name in an imported trace): the instance is named by its NCCL stream and op,
 * RS_WIRE_STREAM_COMM_TAG | stream, and numbered in order on that stream (docs/analysis.md
 * "Collective matching"). */
#define RS_WIRE_STREAM_COMM_TAG 0x5354524d00000000ull /* "STRM" */

/* "AllReduce", ... ; "Unknown" for out-of-range values. */
const char *rs_coll_op_name(enum rs_coll_op op);

/* "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", "Memcpy PtoP", "Memset (Device)", "Event Sync",
 * "Stream Wait Event", "Stream Sync", "Context Sync", or "Memcpy": the names CUPTI and Kineto give
 * copies and synchronizations (the trace importer maps them back); "Launch Wait" (ours). */
const char *rs_copy_kind_name(uint32_t kind);

enum rs_reply_status {
    RS_REPLY_ACK = 1,
    RS_REPLY_DUPLICATE = 2,
    RS_REPLY_REJECTED = 3,
    RS_REPLY_RETRY = 4,
    RS_REPLY_UNAUTHORIZED = 5 /* no valid ingest token: keep the batch, resend later */
};

struct rs_clock_pair {
    uint64_t source_ns;   /* the record clock (CUPTI's), read just before realtime_ns */
    uint64_t realtime_ns; /* CLOCK_REALTIME */
};

struct rs_rank_identity {
    const char *job; /* 1..RS_WIRE_MAX_JOB_LEN of [A-Za-z0-9._:@+=-]; see rs_wire_job_valid */
    uint32_t rank, local_rank, world_size;
    const char *host, *gpu_uuid;
    uint32_t pid;
};

/* Records carry absolute times; the wire stores offsets from the batch's base. */
struct rs_kernel_record {
    uint64_t start_ns, end_ns;
    uint32_t name_id; /* index into the batch's string table */
    uint32_t stream, device, correlation;
};

struct rs_memcpy_record {
    uint64_t start_ns, end_ns, bytes;
    uint32_t kind; /* enum rs_copy_kind */
    uint32_t stream;
};

struct rs_collective_record {
    uint64_t start_ns, end_ns, bytes;
    uint64_t comm_hash, seq;
    uint32_t op; /* enum rs_coll_op */
    uint32_t name_id, stream;
    bool seq_exact;
};

struct rs_step_record {
    uint64_t step, start_ns, end_ns;
    /* Set by an agent that summarizes kernels (rs_kernel_total): it measured the step where the
     * kernels were, over [start_ns, end_ns) with end_ns the next step's start as the server would
     * take it (query/steps.h). Unset: the server measures the step from stored kernels. */
    bool measured;
    struct rs_step_metrics metrics; /* valid for end_ns - start_ns (rs_step_metrics_valid) */
};

struct rs_stall_record {
    uint64_t pc_offset, count;
    uint32_t kernel_name_id, reason_id, cubin_crc;
};

/* Totals of one kernel name's launches that started in [window_start_ns, + window_ns): what an
 * agent that summarizes sends instead of each launch (NCCL kernels stay collective records). */
struct rs_kernel_total {
    uint64_t window_start_ns, window_ns;
    uint32_t name_id;
    uint64_t count, total_ns, max_ns; /* count >= 1, max_ns <= total_ns */
};

/* The same for one kind of memcpy/memset (enum rs_copy_kind). */
struct rs_copy_total {
    uint64_t window_start_ns, window_ns;
    uint32_t kind;
    uint64_t count, total_ns, max_ns, bytes;
};

/* Longest summary window an agent may send (and the server accepts). */
#define RS_WIRE_MAX_WINDOW_NS (3600ull * 1000000000ull)

/* The records of one rank. Arrays and strings are borrowed: when built by a caller for encoding,
 * the caller owns them; when produced by a decoder, the enclosing decoded object owns them. */
struct rs_rank_batch {
    struct rs_rank_identity identity;
    struct rs_clock_pair clock;
    const char *const *strings;
    uint32_t n_strings;
    /* FNV-1a 64 (common/hash.h) of each string: set by rs_wire_agent_batch_decode (so that the
     * server's writer need not hash); NULL in rank frames and when built for encoding */
    const uint64_t *string_hashes;
    const struct rs_kernel_record *kernels;
    uint32_t n_kernels;
    const struct rs_memcpy_record *memcpys;
    uint32_t n_memcpys;
    const struct rs_collective_record *collectives;
    uint32_t n_collectives;
    const struct rs_step_record *steps;
    uint32_t n_steps;
    const struct rs_stall_record *stalls;
    uint32_t n_stalls;
    const struct rs_kernel_total *kernel_totals;
    uint32_t n_kernel_totals;
    const struct rs_copy_total *copy_totals;
    uint32_t n_copy_totals;
    uint64_t dropped_records;
    uint32_t collector_flags;     /* enum rs_collector_flag bits */
    const char *collector_status; /* NULL or text for people */
    /* Captures (proto/capture.h): the records were traced for this capture (0: none), and what
     * became of this rank's orders (at most RS_CAPTURE_MAX_REPORTS, each valid) */
    uint64_t capture_id;
    const struct rs_capture_report *captures;
    uint32_t n_captures;
    /* What the agent counted of that capture in the frames marked with it, as they came
     * (RankBatch.capture_count): kernels (records and totals' counts) and stall samples. Only
     * with capture_id (a decoder refuses it without); has_capture_count false from an older agent. */
    bool has_capture_count;
    uint64_t capture_kernels, capture_stall_samples;
    /* Loss accounting (rankscope.proto RankBatch fields 20-24): 0 when not reported. A decoder
     * refuses frames < 1 with a frame_seq, frame_seq < frames, records_sent < frame_records. */
    uint64_t collector_id;  /* the collector handle (random, new per rank process) */
    uint64_t frame_seq;     /* the highest frame number of that collector in this batch */
    uint64_t records_sent;  /* records in its frames 1 .. frame_seq */
    uint64_t frames;        /* its frames merged here */
    uint64_t frame_records; /* records those frames carried */
};

/* Bits of struct rs_gpu_sample.present (GpuField in rankscope.proto): which field groups NVML
 * answered; a group left out is unknown, not zero. */
enum rs_gpu_field {
    RS_GPU_SM_CLOCK = 1,
    RS_GPU_SM_CLOCK_MAX = 2,
    RS_GPU_MEM_CLOCK = 4,
    RS_GPU_MEM_CLOCK_MAX = 8,
    RS_GPU_CLOCK_REASONS = 16,
    RS_GPU_VIOLATIONS = 32,
    RS_GPU_POWER = 64,
    RS_GPU_POWER_LIMIT = 128,
    RS_GPU_TEMPERATURE = 256,
    RS_GPU_UTILIZATION = 512,
    RS_GPU_MEMORY = 1024,
    RS_GPU_ECC = 2048,
    RS_GPU_REMAPPED = 4096,
    RS_GPU_PCIE_LINK = 8192,
    RS_GPU_PCIE_REPLAY = 16384,
    RS_GPU_NVLINK = 32768,
    RS_GPU_XID = 65536,
    RS_GPU_FIELDS_ALL = 131071
};

/* NVML's clock-event (throttle) reason bits that rs_gpu_sample.clock_reasons carries (their values
 * are NVML's, part of its ABI). */
enum rs_gpu_reason {
    RS_GPU_REASON_IDLE = 0x1,
    RS_GPU_REASON_APP_CLOCKS = 0x2,
    RS_GPU_REASON_SW_POWER_CAP = 0x4,
    RS_GPU_REASON_HW_SLOWDOWN = 0x8,
    RS_GPU_REASON_SYNC_BOOST = 0x10,
    RS_GPU_REASON_SW_THERMAL = 0x20,
    RS_GPU_REASON_HW_THERMAL = 0x40,
    RS_GPU_REASON_HW_POWER_BRAKE = 0x80,
    RS_GPU_REASON_DISPLAY_CLOCKS = 0x100
};

#define RS_WIRE_MAX_GPUS_PER_BATCH 65536u /* 64 GPUs sampled every 10 ms for 10 s */
#define RS_WIRE_MAX_UUID_LEN 95u          /* NVML's UUID buffer is 96 bytes */

/* One NVML reading of one GPU (rankscope.proto GpuSample; docs/telemetry.md). Counters are
 * cumulative since the driver loaded; xid_count counts the XIDs since the previous sample. */
struct rs_gpu_sample {
    const char *uuid; /* 1..RS_WIRE_MAX_UUID_LEN printable ASCII bytes; borrowed */
    uint64_t time_ns; /* CLOCK_REALTIME */
    uint32_t present; /* enum rs_gpu_field bits */
    uint32_t sm_clock_mhz, sm_clock_max_mhz, mem_clock_mhz, mem_clock_max_mhz;
    uint64_t clock_reasons; /* enum rs_gpu_reason bits */
    uint64_t power_violation_ns, thermal_violation_ns, sync_boost_violation_ns,
        board_violation_ns, reliability_violation_ns;
    uint32_t power_mw, power_limit_mw, temperature_c, util_gpu_pct, util_mem_pct;
    uint64_t mem_used_bytes, mem_total_bytes;
    uint64_t ecc_corrected, ecc_uncorrected;
    uint32_t remapped_correctable, remapped_uncorrectable;
    bool remap_pending, remap_failed;
    uint32_t pcie_gen, pcie_gen_max, pcie_width, pcie_width_max, pcie_replay;
    uint64_t nvlink_errors;
    uint32_t nvlink_up, xid_count, last_xid;
};

/* True when `uuid` is a GPU UUID the wire accepts (see struct rs_gpu_sample). */
bool rs_wire_gpu_uuid_valid(const char *uuid);

struct rs_agent_hello {
    uint64_t agent_id, boot_id;
    const char *host, *agent_version;
    struct rs_clock_pair clock;
};

struct rs_agent_batch {
    uint64_t agent_id, boot_id, batch_seq;
    struct rs_agent_hello hello;
    const struct rs_rank_batch *ranks;
    uint32_t n_ranks;
    uint64_t agent_dropped;
    /* Decoded only: the bearer token the sender appended (rs_wire_auth_token_field), "" when
     * none. Never encoded by rs_wire_agent_batch_encode: batches are spooled without it. */
    const char *auth_token;
    const struct rs_gpu_sample *gpus; /* telemetry (schema version 5); borrowed like ranks */
    uint32_t n_gpus;
};

/* What the server asks of the agent (zero = nothing). */
struct rs_server_control {
    uint32_t min_flush_ms; /* send batches no more often than this: the server is backlogged */
    /* capture orders for ranks this agent serves (proto/capture.h), each valid */
    struct rs_capture_order captures[RS_CAPTURE_MAX_ORDERS];
    uint32_t n_captures;
};

struct rs_server_reply {
    uint64_t batch_seq;
    uint32_t status;   /* enum rs_reply_status */
    const char *error; /* "" when none */
    uint32_t retry_after_ms;
    struct rs_server_control control;
};

/* Decoded objects own their memory; free with the matching _free (NULL is fine). */
typedef struct rs_wire_rank_frame rs_wire_rank_frame;
typedef struct rs_wire_agent_batch rs_wire_agent_batch;

/* True when `job` is a valid job name (see struct rs_rank_identity). */
bool rs_wire_job_valid(const char *job);

/* Writes a valid job name derived from `in` into out[out_len] (invalid bytes become '_', long
 * names are cut); "unknown" when `in` is empty. */
void rs_wire_job_sanitize(const char *in, char *out, size_t out_len);

/* --- RankBatch frames (collector -> agent) ------------------------------------------------- */

/* Bytes rs_wire_rank_batch_encode will need, or 0 when the batch breaks a limit. */
size_t rs_wire_rank_batch_size(const struct rs_rank_batch *b);

/* Encodes into buf[cap]; *out_len gets the length. RS_E_TOO_BIG when cap or a limit is too small,
 * RS_E_MALFORMED when the batch itself is invalid (bad ids, end < start, bad job). */
int rs_wire_rank_batch_encode(const struct rs_rank_batch *b, uint8_t *buf, size_t cap,
                              size_t *out_len);

/* Decodes one frame of at most `max_len` bytes. On success *out owns the result and
 * rs_wire_rank_frame_batch() exposes it. */
int rs_wire_rank_frame_decode(const uint8_t *buf, size_t len, size_t max_len,
                              rs_wire_rank_frame **out);
const struct rs_rank_batch *rs_wire_rank_frame_batch(const rs_wire_rank_frame *f);
void rs_wire_rank_frame_free(rs_wire_rank_frame *f);

/* --- AgentBatch requests (agent -> server) ------------------------------------------------- */

/* Encodes into a new malloc'd buffer (*out, caller frees). Limits as for rank batches. */
int rs_wire_agent_batch_encode(const struct rs_agent_batch *b, uint8_t **out, size_t *out_len);

/* Decodes a request. RS_E_VERSION for a schema version this build does not accept. */
int rs_wire_agent_batch_decode(const uint8_t *buf, size_t len, rs_wire_agent_batch **out);
const struct rs_agent_batch *rs_wire_agent_batch_get(const rs_wire_agent_batch *b);
void rs_wire_agent_batch_free(rs_wire_agent_batch *b);

/* Reads only (agent_id, batch_seq) from a request, without full validation; lets a server answer
 * a request it rejects with the right sequence number. Returns 0 or RS_E_MALFORMED. */
int rs_wire_agent_batch_peek_seq(const uint8_t *buf, size_t len, uint64_t *agent_id,
                                 uint64_t *batch_seq);

/* Encodes the AgentBatch field that carries `token` (a valid rs_auth_token_valid token) into
 * buf[cap]; appended to an encoded AgentBatch, the decoder reads it as auth_token (protobuf
 * merges concatenated messages). Returns 0, RS_E_MALFORMED (not a valid token) or RS_E_TOO_BIG. */
int rs_wire_auth_token_field(const char *token, uint8_t *buf, size_t cap, size_t *out_len);

/* --- ServerReply ---------------------------------------------------------------------------- */

int rs_wire_reply_encode(const struct rs_server_reply *r, uint8_t *buf, size_t cap,
                         size_t *out_len);
/* Decodes a reply; the error text is copied into err[err_len] (truncated), r->error points to it.
 */
int rs_wire_reply_decode(const uint8_t *buf, size_t len, struct rs_server_reply *r, char *err,
                         size_t err_len);

#endif
