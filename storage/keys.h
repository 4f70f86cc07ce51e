/* On-disk key layouts of the store (see docs/storage.md). Keys are big-endian byte arrays so that
 * LMDB's memcmp order is numeric tuple order and range scans follow (job, rank, time). Values are
 * fixed structs in host byte order with a leading format version. */
#ifndef RS_STORAGE_KEYS_H
#define RS_STORAGE_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RS_STORE_FORMAT "rankscope-store 8"
/* Format 1 (before the collective blocks, see rs_key_coll) is migrated when opened (migrate.c). */
#define RS_STORE_FORMAT_1 "rankscope-store 1"
/* Format 2 (before kernel windows named kernels by number, RS_KWIN_VERSION_NUMBERED) is read as it
 * is: opening one creates kwin_names, and a server (not --check or --compact-to) moves the marker
 * to the current format (older servers then refuse the store instead of misreading its windows). */
#define RS_STORE_FORMAT_2 "rankscope-store 2"
/* Format 3 (before agent windows moved to awin, rs_key_awin) is read as it is: its agent windows
 * stay in kwin, where readers, rollups and job deletes still find them; new ones go to awin. A
 * server (not --check or --compact-to) moves the marker of a format-2 or format-3 store to 4. */
#define RS_STORE_FORMAT_3 "rankscope-store 3"
/* Format 4 (before job keys, store_int.h "Job keys": a job's key prefix was the hash of its name
 * alone) is read as it is, each job's prefix its hash; a writer records every job's key and moves
 * the marker to 5 (older servers then refuse the store: they would hash new names again). */
#define RS_STORE_FORMAT_4 "rankscope-store 4"
/* Format 5 (before gpu_ranks and verdicts, below) is read as it is: a writer creates the two
 * tables and moves the marker to 6, so that a format-5 server — which would delete a job without
 * its entries there — refuses the store. */
#define RS_STORE_FORMAT_5 "rankscope-store 5"
/* Format 6 (before captures, below) is read as it is: a writer creates the table and moves the
 * marker to 7, so that a format-6 server — which would delete a job without its captures —
 * refuses the store. */
#define RS_STORE_FORMAT_6 "rankscope-store 6"
/* Format 7 (before job_top, below) is read as it is: its jobs have no running totals and answer
 * whole-job `top` by a scan, as before; a writer creates the table and moves the marker to 8, so
 * that a format-7 server — which would write batches without their totals — refuses the store. */
#define RS_STORE_FORMAT_7 "rankscope-store 7"
#define RS_STORE_MIGRATE_CHUNK 100000 /* records converted per transaction */

static inline void
rs__be64_put(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static inline void
rs__be32_put(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static inline void
rs__be16_put(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline uint16_t
rs__be16_get(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint64_t
rs__be64_get(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static inline uint32_t
rs__be32_get(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | p[i];
    return v;
}

/* dedup: (agent_id, batch_seq) [+ principal] -> commit time (u64 ns). A batch that came with a
 * token has the authenticated principal's name (1..RS_STORE_PRINCIPAL_MAX bytes, no NUL) after
 * these 16 bytes, so one principal cannot claim another's sequence numbers; one without (no
 * token file) has the 16 bytes alone — the key of stores written before principals existed. */
struct rs_key_dedup {
    uint8_t agent_id[8], batch_seq[8];
};
_Static_assert(sizeof(struct rs_key_dedup) == 16, "dedup key layout");

/* The bytes of a key up to and including field f of key struct `type`. */
#define RS__KEY_END(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))

/* ranks: (job_id, rank) -> struct rs_rank_value. job_id = FNV-1a 64 of the job name. */
struct rs_key_rank {
    uint8_t job_id[8], rank[4];
};
_Static_assert(sizeof(struct rs_key_rank) == 12, "rank key layout");

/* Key prefixes, named by what they select (the leading bytes a seek or prefix scan compares):
 * - RS_KEY_JOB_PREFIX, the job id: every per-job key (ranks, series, steps, stepsum, coll_blocks,
 *   kwin, awin) starts with it; what deleting a job walks.
 * - RS_KEY_RANK_PREFIX, (job_id, rank): a whole ranks key, and the start of series, steps, stepsum
 *   and kwin keys — the `rank_key` storage functions take (awin keys put the block in between).
 * - RS_KEY_KIND_PREFIX (below), (job_id, rank, kind): the start of series and kwin keys.
 * The asserts next to each layout tie its fields to these. */
#define RS_KEY_JOB_PREFIX RS__KEY_END(struct rs_key_rank, job_id)
#define RS_KEY_RANK_PREFIX RS__KEY_END(struct rs_key_rank, rank)
_Static_assert(RS_KEY_JOB_PREFIX == 8 && RS_KEY_RANK_PREFIX == 12, "job and rank prefixes");
_Static_assert(RS_KEY_RANK_PREFIX == sizeof(struct rs_key_rank), "a rank key is its prefix");

/* frame_seqs: (job_id, rank, collector_id) -> rs_frames_value: what arrived of one collector's
 * numbered frames (rankscope.proto RankBatch.frame_seq), to count the frames lost on the way. */
struct rs_key_frames {
    uint8_t job_id[8], rank[4], collector_id[8];
};
_Static_assert(sizeof(struct rs_key_frames) == 20, "frame_seqs key layout");

struct rs_frames_value {
    uint64_t frames, frame_seq;     /* frames stored; the highest frame number seen */
    uint64_t records, records_sent; /* their records; records in frames 1 .. frame_seq */
};
_Static_assert(sizeof(struct rs_frames_value) == 32, "frame_seqs value layout");

/* job_top: (job_id, tag, id) -> running totals of the job, kept by the writer in the transaction
 * of what they total (ingest, rollups), so that whole-job answers read O(kernels + ranks) entries
 * instead of every record of the job (storage/job_top.c). Tags: RS_JTOP_JOB (id 0) the job's
 * rs_jtop_job_value, which only a job created by a format-8 writer has (its absence: no totals);
 * RS_JTOP_RANK (id = rank) an rs_jtop_rank_value; the others an rs_jtop_sum_value of kernels by
 * name (id = the name's id in strings), NCCL kernels by op, host-side copy kinds (id = the kind)
 * and PC samples by kernel name (id = the name's id; count = samples). */
enum rs_jtop_tag {
    RS_JTOP_JOB = 0,
    RS_JTOP_RANK = 1,
    RS_JTOP_KERNEL = 2,
    RS_JTOP_COLL = 3,
    RS_JTOP_SYNC = 4,
    RS_JTOP_STALL = 5,
};
struct rs_key_jtop {
    uint8_t job_id[8], tag, id[8];
};
_Static_assert(sizeof(struct rs_key_jtop) == 17, "job_top key layout");

enum rs_jtop_job_flag {
    RS_JTOP_WINDOWS = 1, /* a kernel window (agent totals, rolled-up kernels) was stored */
    RS_JTOP_INEXACT = 2, /* a collective was stored twice (replaced): the totals no longer follow */
};
struct rs_jtop_job_value {
    uint32_t version, flags;     /* RS_VALUE_VERSION; enum rs_jtop_job_flag */
    uint64_t t0, t1;             /* the span of the records and windows that profiles cover */
    uint64_t collectives;        /* NCCL kernel records stored */
};
_Static_assert(sizeof(struct rs_jtop_job_value) == 32, "job_top job value layout");

enum rs_jtop_rank_flag {
    RS_JTOP_RANK_DATA = 1,       /* has kernels, kernel windows or NCCL kernels */
    RS_JTOP_RANK_LW_OVERLAP = 2, /* a launch wait began before the end of an earlier one */
};
struct rs_jtop_rank_value {
    uint32_t version, flags; /* RS_VALUE_VERSION; enum rs_jtop_rank_flag */
    uint64_t lw_end;         /* the latest end of the rank's launch waits */
};
_Static_assert(sizeof(struct rs_jtop_rank_value) == 16, "job_top rank value layout");

struct rs_jtop_sum_value {
    uint64_t count, ns;
};
_Static_assert(sizeof(struct rs_jtop_sum_value) == 16, "job_top sum value layout");

/* series: (job_id, rank, kind, chunk start ns, uniq) -> packed records (<= RS_STORE_CHUNK_BYTES) */
struct rs_key_series {
    uint8_t job_id[8], rank[4], kind[2], start_ns[8], uniq[4];
};
_Static_assert(sizeof(struct rs_key_series) == 26, "series key layout");
#define RS_KEY_KIND_PREFIX RS__KEY_END(struct rs_key_series, kind)
_Static_assert(RS_KEY_KIND_PREFIX == 14, "(job, rank, kind) prefix");
_Static_assert(RS__KEY_END(struct rs_key_series, job_id) == RS_KEY_JOB_PREFIX &&
                   RS__KEY_END(struct rs_key_series, rank) == RS_KEY_RANK_PREFIX,
               "series keys start with (job_id, rank)");

enum rs_series_kind {
    RS_SERIES_KERNEL = 1,
    RS_SERIES_MEMCPY = 2,
    RS_SERIES_STALL = 3,
    RS_SERIES_GPU = 4, /* NVML telemetry of the rank's GPU (struct rs_gpu_value, gpu.c) */
    /* rolled-up NVML telemetry: one struct rs_gpu_window (store.h) per key, the key's start the
     * window's (a multiple of the rollup window), uniq 0 (gpu_rollup.c) */
    RS_SERIES_GPU_WINDOW = 5,
};

/* steps: (job_id, rank, step) -> struct rs_step_value */
struct rs_key_step {
    uint8_t job_id[8], rank[4], step[8];
};
_Static_assert(sizeof(struct rs_key_step) == 20, "step key layout");
_Static_assert(RS__KEY_END(struct rs_key_step, job_id) == RS_KEY_JOB_PREFIX &&
                   RS__KEY_END(struct rs_key_step, rank) == RS_KEY_RANK_PREFIX,
               "step keys start with (job_id, rank)");

/* stepsum: (job_id, rank, step) -> struct rs_stepsum_value (the same key layout as steps) */

/* coll_blocks: (job_id, comm_hash, op, seq block, rank, seq in block) -> struct rs_coll_value.
 * A block holds RS_COLL_BLOCK_SEQS consecutive sequence numbers of one (communicator, op), rank by
 * rank: the collectives that one rank sends together (a few seconds' worth) are adjacent — with a
 * key per (seq, rank) they landed on a page per instance, and a group commit of 1,000 ranks
 * rewrote thousands of pages for a few bytes each. One prefix scan over (job, comm, op, block)
 * still returns every rank of those instances; the scans regroup each block by seq (colls.c). */
#define RS_COLL_BLOCK_SEQS 16u
struct rs_key_coll {
    uint8_t job_id[8], comm_hash[8], op[1], block[8], rank[4], seq_in_block[1];
};
_Static_assert(sizeof(struct rs_key_coll) == 30, "collective key layout");
_Static_assert(RS__KEY_END(struct rs_key_coll, job_id) == RS_KEY_JOB_PREFIX,
               "collective keys start with the job id");
/* The bytes after the job id that name one (communicator, op): comm_hash and op, adjacent (a
 * 9-byte big-endian number when stepping to the next one). */
#define RS_COLL_COMM_OP                                                                            \
    (RS__KEY_END(struct rs_key_coll, op) - offsetof(struct rs_key_coll, comm_hash))
_Static_assert(offsetof(struct rs_key_coll, comm_hash) == RS_KEY_JOB_PREFIX && RS_COLL_COMM_OP == 9,
               "(comm_hash, op) follows the job id");
/* The bytes that name one block: (job_id, comm_hash, op, block). */
#define RS_COLL_BLOCK_PREFIX RS__KEY_END(struct rs_key_coll, block)
_Static_assert(RS_COLL_BLOCK_PREFIX == 25, "collective block prefix");

static inline void
rs__coll_key(struct rs_key_coll *k, uint64_t job_id, uint64_t comm_hash, uint8_t op, uint64_t seq,
             uint32_t rank)
{
    rs__be64_put(k->job_id, job_id);
    rs__be64_put(k->comm_hash, comm_hash);
    k->op[0] = op;
    rs__be64_put(k->block, seq / RS_COLL_BLOCK_SEQS);
    rs__be32_put(k->rank, rank);
    k->seq_in_block[0] = (uint8_t)(seq % RS_COLL_BLOCK_SEQS);
}

static inline uint64_t
rs__coll_key_seq(const struct rs_key_coll *k)
{
    return rs__be64_get(k->block) * RS_COLL_BLOCK_SEQS + k->seq_in_block[0];
}

/* Format 1's colls: (job_id, comm_hash, op, seq, rank), read only by the migration. */
struct rs_key_coll_v1 {
    uint8_t job_id[8], comm_hash[8], op[1], seq[8], rank[4];
};
_Static_assert(sizeof(struct rs_key_coll_v1) == 29, "format 1 collective key layout");

/* kwin_names: number (u32) -> the name's hash (u64, big-endian): the numbers that kernel windows of
 * version RS_KWIN_VERSION_NUMBERED name kernels by. Store-wide, dense from 0, never deleted (like
 * the string table): a window entry's name then takes 1 - 3 bytes (a varint, up to 2,097,151
 * names) instead of 8. */
struct rs_key_name_number {
    uint8_t number[4];
};
_Static_assert(sizeof(struct rs_key_name_number) == 4, "name number key layout");

/* strings: name hash (FNV-1a 64) -> the name bytes (no NUL) */
struct rs_key_string {
    uint8_t hash[8];
};
_Static_assert(sizeof(struct rs_key_string) == 8, "string key layout");

/* kwin: (job_id, rank, kind, window start ns, part) -> struct rs_kwin_header + entries: the totals
 * per kernel name or copy kind of a window; a window with more entries than fit below the
 * overflow threshold takes several parts. Kinds (enum rs_kwin_kind): the rollups of the records
 * of `series` and of old agent windows (docs/storage.md "Rollups"); stores of format 3 also hold
 * the windows agents sent (`--summarize`) here, until the rollup coarsens them (awin holds them
 * since format 4). */
struct rs_key_kwin {
    uint8_t job_id[8], rank[4], kind[2], start_ns[8], part[2];
};
_Static_assert(sizeof(struct rs_key_kwin) == 24, "kernel window key layout");
_Static_assert(RS__KEY_END(struct rs_key_kwin, job_id) == RS_KEY_JOB_PREFIX &&
                   RS__KEY_END(struct rs_key_kwin, rank) == RS_KEY_RANK_PREFIX &&
                   RS__KEY_END(struct rs_key_kwin, kind) == RS_KEY_KIND_PREFIX,
               "kernel window keys start with (job_id, rank, kind)");

/* awin: (job_id, block, rank, kind, window start ns, part) -> the same values as kwin: the windows
 * agents send (kinds RS_KWIN_AGENT_*), keyed by time block before rank, so that the windows one
 * request brings for its node's ranks (the same seconds for each) are adjacent and share pages: a
 * key per rank first put each rank's windows on pages of their own, several per rank and request.
 * block = window start / RS_AWIN_BLOCK_NS. One rank's windows are read block by block (awin.c). */
#define RS_AWIN_BLOCK_NS (4ull * 1000000000ull)
struct rs_key_awin {
    uint8_t job_id[8], block[4], rank[4], kind[2], start_ns[8], part[2];
};
_Static_assert(sizeof(struct rs_key_awin) == 28, "agent window key layout");
_Static_assert(RS__KEY_END(struct rs_key_awin, job_id) == RS_KEY_JOB_PREFIX &&
                   sizeof(((struct rs_key_awin *)0)->rank) ==
                       RS_KEY_RANK_PREFIX - RS_KEY_JOB_PREFIX,
               "agent window keys: the job id first, the rank of a rank key after the block");

enum rs_kwin_kind {
    RS_KWIN_KERNEL =
        RS_SERIES_KERNEL, /* rollup windows (stores before agent kinds: also agents') */
    RS_KWIN_MEMCPY = RS_SERIES_MEMCPY,
    RS_KWIN_AGENT_KERNEL = 0x11, /* agent windows (awin; kwin in format 3): coarsened into
                                    RS_KWIN_KERNEL past the horizon */
    RS_KWIN_AGENT_MEMCPY = 0x12,
};

/* Values below overflow-page size stay in leaf pages (docs/platform-facts.md "LMDB"). */
#define RS_STORE_CHUNK_BYTES 1900u

#define RS_VALUE_VERSION 1u

/* Names are keyed by their FNV-1a 64 hash when no other name holds it, else by the next free of
 * hash + i * RS_KEY_PROBE_STEP (i < RS_KEY_PROBES): two names never share an id (job_keys.c for
 * jobs, ingest.c for kernel and other names). An odd step visits every value before repeating. */
#define RS_KEY_PROBE_STEP 0x9e3779b97f4a7c15ull
#define RS_KEY_PROBES 64u

/* job_keys: job name (1..128 bytes) -> the job's key prefix (8 bytes, big-endian); job_ids: that
 * prefix -> the name. Every key below that starts with job_id uses it (store_int.h "Job keys"). */

/* jobs: job name (key, 1..128 bytes) -> rs_job_value */
struct rs_job_value {
    uint32_t version, world_size, n_ranks, pad;
    uint64_t first_ns, last_ns; /* record times */
    uint64_t received_ns;       /* server clock at the last commit with data of this job */
};

struct rs_rank_value {
    uint32_t version, rank, local_rank, world_size, pid, pad;
    uint64_t first_ns, last_ns;
    uint64_t n_kernels, kernel_ns, n_collectives, collective_ns, n_memcpys, memcpy_ns;
    uint64_t n_steps, step_ns, n_stalls, dropped_records, batches;
    int64_t clock_offset_ns; /* realtime - source clock, latest batch */
    uint32_t collector_flags;
    /* The longest window this rank's agent sent (awin), whole seconds rounded up; 0 (stores of
     * format 3 had padding here): unknown. Scans for windows that overlap a time look back this
     * far in awin instead of as far as the longest window there can be. */
    uint32_t longest_agent_window_s;
    char host[256];
    char gpu_uuid[96];
    char collector_status[128];
};

/* The rank's longest agent window in ns (0: unknown). */
static inline uint64_t
rs__longest_agent_window_ns(const struct rs_rank_value *rv)
{
    return (uint64_t)rv->longest_agent_window_s * 1000000000u;
}

/* Packed records inside series chunks. */
struct rs_kernel_value {
    uint64_t start_ns, end_ns, name_hash;
    uint32_t stream, device;
};
_Static_assert(sizeof(struct rs_kernel_value) == 32, "kernel value layout");

struct rs_memcpy_value {
    uint64_t start_ns, end_ns, bytes;
    uint32_t kind, stream;
};
_Static_assert(sizeof(struct rs_memcpy_value) == 32, "memcpy value layout");

struct rs_kwin_header {
    uint32_t version, n; /* n entries follow; version RS_KWIN_VERSION_NUMBERED (1, 2: read only) */
    uint64_t window_ns;  /* the window is [start, start + window_ns) */
};
_Static_assert(sizeof(struct rs_kwin_header) == 16, "kernel window header layout");

/* Entries of a version-1 window value (stores written before the packed form; read, never
 * written): key, then totals. */
struct rs_kwin_entry {
    uint64_t key;             /* kernels: the name's hash; copies: enum rs_copy_kind */
    uint64_t total_ns, bytes; /* bytes: copies only */
    uint32_t count, max_ns;   /* max_ns saturates at UINT32_MAX */
};
_Static_assert(sizeof(struct rs_kwin_entry) == 32, "window entry layout");

/* Version 2 (read only since version 3): each entry is the key (8 bytes, host order) and LEB128
 * varints count, total_ns, max_ns, bytes (1-10 bytes each) instead of 32 fixed bytes (12-48 bytes
 * an entry: the benchmark's 60-name windows are one part each). A part holds entries up to
 * RS_STORE_CHUNK_BYTES.
 */
#define RS_KWIN_VERSION_PACKED 2u
/* Version 3 (written now): as version 2, but the key is a varint too — for kernel kinds the name's
 * number in kwin_names, for copy kinds the copy kind. Versions 1 and 2 are still read. */
#define RS_KWIN_VERSION_NUMBERED 3u
#define RS_KWIN_MAX_ENTRY_BYTES (5 * 10) /* five varints of at most 10 bytes */

struct rs_stall_value {
    uint64_t pc_offset, count, kernel_hash, reason_hash;
    uint32_t cubin_crc, pad;
};
_Static_assert(sizeof(struct rs_stall_value) == 40, "stall value layout");

/* One NVML reading of a rank's GPU (proto/wire.h struct rs_gpu_sample, narrowed: clocks in MHz
 * fit 16 bits, memory in MiB and violation times in ms fit 32 — those counters wrap, and readers
 * take differences modulo 2^32, as NVML's own 32-bit counters do). 96 bytes: 19 per chunk. */
struct rs_gpu_value {
    uint64_t time_ns;
    uint32_t present, reasons; /* enum rs_gpu_field bits; NVML's reason bits (all below 2^32) */
    uint16_t sm_mhz, sm_max_mhz, mem_mhz, mem_max_mhz;
    uint32_t power_mw, power_limit_mw;
    uint32_t mem_used_mib, mem_total_mib;
    uint32_t violation_ms[5]; /* power, thermal, sync boost, board, reliability */
    uint32_t ecc_corrected, ecc_uncorrected;
    uint32_t pcie_replay, nvlink_errors;
    uint16_t remapped_correctable, remapped_uncorrectable;
    uint16_t xid_count, last_xid;
    uint8_t temperature_c, util_gpu_pct, util_mem_pct, pcie_gen, pcie_gen_max, pcie_width,
        pcie_width_max, nvlink_up;
    uint8_t remap_flags; /* 1: a remap is pending, 2: a remap failed */
    uint8_t pad[3];
};
_Static_assert(sizeof(struct rs_gpu_value) == 96, "GPU value layout");

/* gpu_ranks: GPU UUID (1..RS_STORE_UUID_MAX - 1 bytes, no NUL) -> the rank whose collector
 * reported it last: the writer's map for NVML readings, which name only the GPU (gpu_ranks.c).
 * Each entry names a stored rank whose gpu_uuid is the key (a rank that moves to another GPU takes
 * its entry along; deleting a job removes its ranks' entries), so the table is never larger than
 * `ranks`. The job id in host order (it is not part of a key). */
struct rs_gpu_rank_value {
    uint64_t job_id;
    uint32_t rank, pad;
};
_Static_assert(sizeof(struct rs_gpu_rank_value) == 16, "GPU rank value layout");

/* verdicts: (job_id, rank, detected_ns) -> struct rs_verdict_value: the straggler verdicts the
 * server's continuous evaluation raised, one entry per time a rank became a straggler until it
 * was cleared (verdicts.c) — the fleet view's history. At most RS_VERDICTS_PER_RANK per rank
 * (the oldest go first); job deletion and retention remove them with the job. */
struct rs_key_verdict {
    uint8_t job_id[8], rank[4], detected_ns[8];
};
_Static_assert(sizeof(struct rs_key_verdict) == 20, "verdict key layout");
_Static_assert(RS__KEY_END(struct rs_key_verdict, job_id) == RS_KEY_JOB_PREFIX &&
                   RS__KEY_END(struct rs_key_verdict, rank) == RS_KEY_RANK_PREFIX,
               "verdict keys start with (job_id, rank)");
#define RS_VERDICTS_PER_RANK 16u
struct rs_verdict_value {
    uint32_t version, pad;
    uint64_t cleared_ns; /* server clock; 0: still active at the last evaluation that saw it */
    double slowdown;     /* of the newest evaluation that found it (> 1) */
};
_Static_assert(sizeof(struct rs_verdict_value) == 24, "verdict value layout");

/* captures: (job_id, capture id) -> struct rs_capture_value: the server's captures on demand
 * (storage/captures.c, server/captures.h) — state, ranks, kinds, times, who asked and why, and
 * the records received for each — so that they survive a restart. The server keeps the same
 * table in memory (at most RS_STORE_CAPTURES_MAX) and deletes here what it drops there; job
 * deletion and retention remove them with the job. Format 7. */
struct rs_key_capture {
    uint8_t job_id[8], id[8];
};
_Static_assert(sizeof(struct rs_key_capture) == 16, "capture key layout");
_Static_assert(RS__KEY_END(struct rs_key_capture, job_id) == RS_KEY_JOB_PREFIX,
               "capture keys start with the job prefix");

struct rs_capture_value {
    uint32_t version, rank, kinds, seconds, state, ran_kinds;
    uint64_t requested_ns, delivered_ns, started_ns, ended_ns, batches, kernels, stalls;
    char who[64], reason[160], message[208]; /* NUL-terminated */
};
_Static_assert(sizeof(struct rs_capture_value) == 512, "capture value layout");

/* hangs: (job_id, raised_ns, comm, seq) -> struct rs_hang_value: the NCCL hangs the server's hang
 * watch raised (server/hang_watch.c), each with when it cleared (hangs.c) — the hangs view's
 * history, kept across restarts. At most RS_HANGS_PER_JOB per job (the oldest go first); job
 * deletion and retention remove them with the job. A store written before this table opens with
 * it empty. */
struct rs_key_hang {
    uint8_t job_id[8], raised_ns[8], comm[8], seq[8];
};
_Static_assert(sizeof(struct rs_key_hang) == 32, "hang key layout");
_Static_assert(RS__KEY_END(struct rs_key_hang, job_id) == RS_KEY_JOB_PREFIX,
               "hang keys start with job_id");
#define RS_HANGS_PER_JOB 256u
struct rs_hang_value {
    uint32_t version, comm_size;
    uint64_t since_ns, cleared_ns; /* cleared_ns 0: open when last written */
    uint32_t n_waiting, n_absent;  /* n_absent: ranks that never arrived; the first 16: */
    char op[32];                   /* NUL-terminated */
    uint32_t absent[16];
};
_Static_assert(sizeof(struct rs_hang_value) == 128, "hang value layout");

struct rs_step_value {
    uint64_t start_ns, end_ns;
};
_Static_assert(sizeof(struct rs_step_value) == 16, "step value layout");

/* The value of a step its agent measured (rs_step_record.measured): the same start and end, then
 * the metrics. Readers that need only the times read the leading struct rs_step_value. */
struct rs_step_measured_value {
    uint64_t start_ns, end_ns;
    uint64_t compute_ns, comm_ns, exposed_comm_ns, idle_ns, host_gap_ns;
    uint32_t kernels, pad;
};
_Static_assert(sizeof(struct rs_step_measured_value) == 64, "measured step value layout");

/* Step metrics derived from a settled step's kernels (query/steps.h), so that queries over long
 * jobs read one value per rank-step instead of every kernel. */
struct rs_stepsum_value {
    uint32_t version, kernels;
    uint64_t start_ns, end_ns, compute_ns, comm_ns, exposed_comm_ns, idle_ns, host_gap_ns;
    uint32_t instances, last_arrivals;
    uint64_t peer_wait_ns;
};
_Static_assert(sizeof(struct rs_stepsum_value) == 80, "step summary value layout");

struct rs_coll_value {
    uint64_t start_ns, end_ns, bytes, name_hash;
    uint32_t stream, seq_exact;
};
_Static_assert(sizeof(struct rs_coll_value) == 40, "collective value layout");

#endif
