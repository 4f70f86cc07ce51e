/* The rankscope store: per-job, per-rank profiles in one LMDB environment.
 *
 * Writes happen in one thread at a time through rs_store_write (one LMDB write transaction that
 * may hold many agent batches: group commit). Each batch is deduplicated by
 * (agent_id, batch_seq) inside the same transaction as its data, so "committed" and "seen" can
 * never disagree, even across kill -9.
 * Reads use rs_store_read handles from any thread (MDB_NOTLS); a handle is used by one thread at a
 * time. Nothing outside storage/ includes <lmdb.h>. Layout: docs/storage.md and storage/keys.h.
 */
#ifndef RS_STORAGE_STORE_H
#define RS_STORAGE_STORE_H

#include "proto/wire.h"

#include <stdbool.h>
#include <stdint.h>

/* Metrics of one step of one rank (docs/analysis.md "Step metrics"; computed by query/steps.h). */
struct rs_step_summary {
    uint64_t step, start_ns, end_ns;
    uint64_t step_ns, compute_ns, comm_ns, exposed_comm_ns, idle_ns, host_gap_ns;
    uint32_t kernels; /* kernels and NCCL kernels that started in the step */
    /* collective instances (across ranks) that started in the step, those where this rank arrived
     * last, and the sum over those of the median wait of the other ranks */
    uint32_t instances, last_arrivals;
    uint64_t peer_wait_ns;
};

typedef struct rs_store rs_store;
typedef struct rs_store_write rs_store_write;
typedef struct rs_store_read rs_store_read;

struct rs_store_options {
    uint64_t map_size;    /* bytes of address space = largest possible store; 0 = 256 GiB */
    bool sync_metadata;   /* false (default): MDB_NOMETASYNC, see docs/storage.md */
    unsigned max_readers; /* 0 = 126 */
    /* Called during the open of a store written by an older version while it is converted (a
     * minute or more for a large store; see docs/storage.md "Format"); NULL: silent. */
    void (*migrating)(void *arg, uint64_t done, uint64_t total);
    void *migrating_arg;
    /* Refuse a store of an older format (RS_E_VERSION) instead of converting it: for tools that
     * must not write to a store an older server may be serving (--check, --compact-to). */
    bool keep_format;
    /* Take the store's writer lock: an exclusive flock(2) on DIR/writer.lock (which then holds
     * this process's pid), held until rs_store_close. For every process that writes into the store
     * (the server, `rankscope analyze --data`); readers (exports, --check) do not take it. LMDB's
     * own lock.mdb lets several processes write in turn, so without it two servers would share a
     * store without a word. */
    bool exclusive;
};

/* Opens (creating when absent) the store in directory `dir`, converting a store of an older format
 * first. Returns 0, -errno (e.g. -ENOTDIR, -EACCES), RS_E_CORRUPT when `dir` holds something
 * that is not a rankscope store (or one of a newer format), RS_E_VERSION for an older one with
 * keep_format, or RS_E_LOCKED with exclusive when another process holds the writer lock
 * (rs_store_locked_by says which). Clears reader slots left by dead processes. A failed open
 * leaves nothing it created behind (directories, store files). */
int rs_store_open(const char *dir, const struct rs_store_options *opts, rs_store **out);

/* Closes the store (releasing the writer lock). All read and write handles must be finished.
 * NULL is fine. */
void rs_store_close(rs_store *s);

/* Closes the store like rs_store_close, then removes what the rs_store_open that opened it
 * created: the directories it made, or, in a directory that existed, the store files that were
 * not there before (so a new store goes, an existing one stays whole). For a process that fails
 * to start after opening the store; nothing may have been committed that must stay. NULL is
 * fine. */
void rs_store_close_discard(rs_store *s);

/* The pid written in DIR/writer.lock by the process holding (or that last held) the writer
 * lock, 0 when unknown. For messages after RS_E_LOCKED. */
long rs_store_locked_by(const char *dir);

/* --- writes (one writer thread) ------------------------------------------------------------- */

int rs_store_write_begin(rs_store *s, rs_store_write **out);

/* Adds one agent batch to the open transaction. *duplicate is set when (agent_id, batch_seq) was
 * committed before (nothing is written then). RS_E_FULL when the map is full: the transaction is
 * then unusable and must be aborted. The batch must come from the wire decoder (validated). */
int rs_store_write_batch(rs_store_write *w, const struct rs_agent_batch *b, bool *duplicate);

/* rs_store_write_batch for a batch sent by an authenticated `principal` (1..RS_STORE_PRINCIPAL_MAX
 * bytes; NULL or "" = none, the same as rs_store_write_batch): deduplicated by (principal,
 * agent_id, batch_seq), so that a client cannot pre-claim the sequence numbers of an agent that
 * authenticates as someone else — and by (agent_id, batch_seq) committed without a principal
 * (before tokens were turned on: the same batch resent). RS_E_MALFORMED for a longer name. */
#define RS_STORE_PRINCIPAL_MAX 64
int rs_store_write_batch_as(rs_store_write *w, const struct rs_agent_batch *b,
                            const char *principal, bool *duplicate);

/* Deletes up to `max_entries` entries of job `job` (ranks, series chunks, steps, collective
 * records; the job entry itself last) in the open transaction, adding the count to *deleted.
 * *done is set once nothing of the job is left. Call repeatedly, one transaction each, so that a
 * large job does not hold the writer for long. Names in the string table are shared and stay.
 * RS_E_NOT_FOUND when the job does not exist (nothing done). */
int rs_store_delete_job(rs_store_write *w, const char *job, size_t max_entries, uint64_t *deleted,
                        bool *done);

/* Stores (or replaces) the summaries of n steps of one rank of `job`. RS_E_NOT_FOUND when the job
 * does not exist (deleted meanwhile: nothing is written). */
int rs_store_step_summaries_put(rs_store_write *w, const char *job, uint32_t rank,
                                const struct rs_step_summary *v, size_t n);

/* Retention: like rs_store_delete_job, for jobs that received no data since `cutoff_ns` (server
 * clock; record times do not matter, so an imported old trace is not expired at once), one job
 * after the other; *jobs_deleted counts jobs removed entirely. *done once no such job is
 * left. */
int rs_store_expire_jobs(rs_store_write *w, uint64_t cutoff_ns, size_t max_entries,
                         uint64_t *deleted, uint64_t *jobs_deleted, bool *done);

/* Rollups: kernel and memcpy records older than a horizon are replaced by per-window totals per
 * kernel name or copy kind (count, total and longest duration, bytes), so that old data costs
 * bytes per name and window instead of per launch (docs/storage.md "Rollups"); the windows agents
 * send (`--summarize`, often a few seconds) are coarsened into the same windows past the same
 * horizon (without the cap at unsummarized steps below: no step is computed from them). The horizon
 * is per rank: the newest `raw_ns` of its records stay raw (so an imported old trace keeps its
 * records), unless its job has received nothing for `raw_ns` — then all of them are rolled up. Each
 * raw record is either still in the raw series or counted in exactly one window (the rollup writes
 * the totals and deletes the records in one transaction), so totals over raw + windows never count
 * a launch twice, and records that arrive late are merged into their window by the next rollup. Run
 * as a chunked writer task: zero a struct rs_store_rollup, set its policy, and call
 * rs_store_rollup_step (each call in its own transaction) until *done. */
struct rs_store_rollup {
    uint64_t now_ns;                   /* the server's clock (CLOCK_REALTIME) */
    uint64_t raw_ns;                   /* how much of each rank's newest data stays raw */
    uint64_t window_ns;                /* window length, > 0; windows start at multiples of it */
    uint64_t records, chunks, windows; /* totals so far: rolled kernel and memcpy records, deleted
                                          raw chunks, windows written */
    uint64_t agent_windows;            /* agent windows coarsened into rollup windows so far */
    uint64_t gpu_readings;             /* NVML readings rolled up into GPU windows so far */
    /* private: where to go on, and the job of the last rank seen */
    uint8_t resume[12];
    bool started;
    uint8_t job_id[8];
    bool job_idle, job_known;
};

/* Rolls up at most about `max_records` records (whole chunks). Returns 0 (*done when no rank has
 * records past its horizon), -EINVAL (window_ns 0), -ENOMEM or a storage error. */
int rs_store_rollup_step(rs_store_write *w, struct rs_store_rollup *ru, size_t max_records,
                         bool *done);

/* Frees reader slots left by processes that died (LMDB's mdb_reader_check); *cleared says how
 * many. Safe at any time. */
int rs_store_reader_check(rs_store *s, int *cleared);

/* Commits and frees `w`. Returns 0, RS_E_FULL, -errno (the disk's: -EIO, -ENOSPC) or RS_E_STORE;
 * on error nothing was committed. */
int rs_store_write_commit(rs_store_write *w);

/* Abandons and frees `w`. NULL is fine. */
void rs_store_write_abort(rs_store_write *w);

/* --- reads ------------------------------------------------------------------------------------ */

int rs_store_read_begin(rs_store *s, rs_store_read **out);
void rs_store_read_end(rs_store_read *r);

/* Bounds the time scans in r may take: once rs_clock_mono_ns() passes deadline_ns, every scan
 * (and every query built on them) stops and returns -ETIMEDOUT. 0 = no deadline (the default).
 * A server's queries set one so that no request holds a thread for long. */
void rs_store_read_set_deadline(rs_store_read *r, uint64_t deadline_ns);

#define RS_STORE_HOST_MAX 256
#define RS_STORE_UUID_MAX 96

struct rs_job_info {
    char name[RS_WIRE_MAX_JOB_LEN + 1];
    uint32_t world_size;        /* largest world size any rank reported */
    uint32_t n_ranks;           /* ranks seen */
    uint64_t first_ns, last_ns; /* earliest and latest record time */
    uint64_t received_ns;       /* server clock when data of the job last arrived */
};

struct rs_rank_info {
    uint32_t rank, local_rank, world_size, pid;
    char host[RS_STORE_HOST_MAX];
    char gpu_uuid[RS_STORE_UUID_MAX];
    uint64_t first_ns, last_ns;
    uint64_t n_kernels, kernel_ns;         /* non-NCCL kernels */
    uint64_t n_collectives, collective_ns; /* NCCL kernels */
    uint64_t n_memcpys, memcpy_ns;         /* copies and memsets (not host synchronizations) */
    uint64_t n_steps, step_ns;
    uint64_t n_stalls;
    uint64_t dropped_records; /* latest cumulative count reported by the collector */
    uint64_t batches;         /* rank batches stored */
    /* Loss accounting (rankscope.proto RankBatch.frame_seq), over every collector of the rank;
     * 0 when its collectors do not number their frames */
    uint64_t frames;       /* collector frames stored */
    uint64_t frames_lost;  /* frames collectors sent (their highest numbers) that never arrived */
    uint64_t records_lost; /* the records those frames carried */
    int64_t clock_offset_ns;  /* CLOCK_REALTIME minus the record clock, latest batch; far from
                                 0 means another tool replaced CUPTI's clock */
    uint32_t collector_flags; /* enum rs_collector_flag bits, latest */
    char collector_status[128];
};

/* Callbacks return 0 to continue, non-zero to stop the scan (that value is then returned). */
typedef int (*rs_store_job_cb)(void *arg, const struct rs_job_info *job);
typedef int (*rs_store_rank_cb)(void *arg, const struct rs_rank_info *rank);
typedef int (*rs_store_kernel_cb)(void *arg, const struct rs_kernel_record *k, const char *name,
                                  uint64_t name_hash);
typedef int (*rs_store_memcpy_cb)(void *arg, const struct rs_memcpy_record *m);
typedef int (*rs_store_collective_cb)(void *arg, uint32_t rank,
                                      const struct rs_collective_record *c);
typedef int (*rs_store_step_cb)(void *arg, const struct rs_step_record *s);
typedef int (*rs_store_step_summary_cb)(void *arg, const struct rs_step_summary *s);
/* A stall sample count: s->kernel_name_id and s->reason_id are meaningless here; `kernel` and
 * `reason` are the resolved names; `at_ns` is when the batch that carried it was sent (stall
 * counts have no time of their own). */
typedef int (*rs_store_stall_cb)(void *arg, const struct rs_stall_record *s, uint64_t at_ns,
                                 const char *kernel, const char *reason);

/* Jobs in name order. */
int rs_store_jobs_scan(rs_store_read *r, rs_store_job_cb cb, void *arg);
/* One job; RS_E_NOT_FOUND when absent. */
int rs_store_job_get(rs_store_read *r, const char *job, struct rs_job_info *out);
/* Ranks of one job in rank order; RS_E_NOT_FOUND when the job is absent. */
int rs_store_ranks_scan(rs_store_read *r, const char *job, rs_store_rank_cb cb, void *arg);
/* Every rank of one job in rank order, in a new array (*out, caller frees with free(); NULL when
 * *n is 0). Returns 0, RS_E_NOT_FOUND when the job is absent, -ENOMEM or a storage error. */
int rs_store_ranks_get(rs_store_read *r, const char *job, struct rs_rank_info **out, size_t *n);
/* Kernel records are stored in chunks keyed by their first record, each from one batch (seconds of
 * records): to see every kernel that starts at or after t, scan from t minus this margin and
 * filter. */
#define RS_STORE_KERNEL_MARGIN_NS (60ull * 1000000000ull)
static inline uint64_t
rs_store_kernel_scan_from(uint64_t t)
{
    return t > RS_STORE_KERNEL_MARGIN_NS ? t - RS_STORE_KERNEL_MARGIN_NS : 0;
}
/* Kernels of one rank whose chunk starts in [t0, t1), in time order. k->name_id is meaningless
 * here: `name` is the resolved kernel name, `name_hash` its FNV-1a 64 (equal names, equal
 * hashes: a cheap key for grouping). */
int rs_store_kernels_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                          uint64_t t1, rs_store_kernel_cb cb, void *arg);
/* The oldest step of `rank` whose records are still raw (not rolled up): the step holding its
 * oldest raw kernel or memcpy record, or its first step when that record is older than every
 * step. *found is false when the rank has no raw records or no steps. */
int rs_store_oldest_raw_step(rs_store_read *r, const char *job, uint32_t rank, uint64_t *step,
                             bool *found);
/* Memcpy, memset and host synchronization records (proto/wire.h enum rs_copy_kind) of one rank
 * whose chunk starts in [t0, t1), in time order (chunks as for kernels: scan from
 * rs_store_kernel_scan_from(t) and filter). */
int rs_store_memcpys_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                          uint64_t t1, rs_store_memcpy_cb cb, void *arg);
/* A kernel window (see "Rollups" above): totals of one kernel name's launches that started in
 * [start_ns, start_ns + window_ns) — a rollup window, or one an agent sent (`--summarize`). The
 * scans below return the rollup windows, then the agent windows, each in time order. */
struct rs_kernel_window {
    uint64_t start_ns, window_ns;
    uint64_t count, total_ns, max_ns;
};
typedef int (*rs_store_kernel_window_cb)(void *arg, const struct rs_kernel_window *kw,
                                         const char *name, uint64_t name_hash);
/* Kernel windows of one rank that start in [t0, t1). */
int rs_store_kernel_windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                                 uint64_t t1, rs_store_kernel_window_cb cb, void *arg);
/* Kernel windows of one rank that overlap [t0, t1) — start before t1, end after t0 — and start at
 * most `lookback_ns` before t0 (the longest window to expect). The entries of windows that end
 * by t0 are not read. */
int rs_store_kernel_windows_overlapping(rs_store_read *r, const char *job, uint32_t rank,
                                        uint64_t t0, uint64_t t1, uint64_t lookback_ns,
                                        rs_store_kernel_window_cb cb, void *arg);
/* A copy window: totals of one kind of memcpy, memset or host synchronization (enum
 * rs_copy_kind) that started in [start_ns, start_ns + window_ns). */
struct rs_copy_window {
    uint64_t start_ns, window_ns;
    uint32_t kind;
    uint64_t count, total_ns, max_ns, bytes;
};
typedef int (*rs_store_copy_window_cb)(void *arg, const struct rs_copy_window *cw);
/* Copy windows of one rank that start in [t0, t1) (rollup, then agent windows). */
int rs_store_copy_windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                               uint64_t t1, rs_store_copy_window_cb cb, void *arg);
/* PC-sampling stall counts of one rank sent in [t0, t1), in time order. */
int rs_store_stalls_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                         rs_store_stall_cb cb, void *arg);
/* Collective instances of one job in (comm, op, seq, rank) order: consecutive calls with the same
 * (comm_hash, op, seq) are the ranks of one instance. */
int rs_store_collectives_scan(rs_store_read *r, const char *job, rs_store_collective_cb cb,
                              void *arg);
/* Steps of one rank numbered from_step or higher, in step order. */
int rs_store_steps_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t from_step,
                        rs_store_step_cb cb, void *arg);
/* The highest step number of one rank; RS_E_NOT_FOUND when it has no steps. */
int rs_store_last_step(rs_store_read *r, const char *job, uint32_t rank, uint64_t *out);
/* Collective records of one job whose instance may start in [t0, t1): like
 * rs_store_collectives_scan, but each (communicator, op) is entered by binary search on its
 * sequence numbers (their start times grow with them), so the cost follows the range, not the
 * job's length. Records up to RS_STORE_COLL_MARGIN_NS outside the range may be passed too: the
 * callback filters. */
#define RS_STORE_COLL_MARGIN_NS 2000000000ull
int rs_store_collectives_scan_range(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1,
                                    rs_store_collective_cb cb, void *arg);
/* Stored step summaries of one rank numbered from_step or higher, in step order. */
int rs_store_step_summaries_scan(rs_store_read *r, const char *job, uint32_t rank,
                                 uint64_t from_step, rs_store_step_summary_cb cb, void *arg);

/* --- GPU telemetry (gpu.c) ------------------------------------------------------------------ */

/* NVML readings of a rank's GPU, filed by the writer under the (job, rank) whose collector last
 * reported the reading's GPU UUID (docs/storage.md "GPU telemetry"). Read back as struct
 * rs_gpu_sample with uuid NULL (the rank's gpu_uuid names it); memory in whole MiB; the violation
 * counters are whole ms that wrap at 2^32 ms: take differences with rs_gpu_violation_delta_ns. */
typedef int (*rs_store_gpu_cb)(void *arg, const struct rs_gpu_sample *s);

/* Readings of one rank's GPU taken in [t0, t1), in time order. An unknown job has none (0). */
int rs_store_gpu_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                      rs_store_gpu_cb cb, void *arg);

/* The newest reading of one rank's GPU — once all its readings are rolled up, its newest window
 * as one reading (the window's means, its majority reason bits, its counters' last values, at its
 * last reading's time); RS_E_NOT_FOUND when it has none (or the job is unknown). */
int rs_store_gpu_last(rs_store_read *r, const char *job, uint32_t rank, struct rs_gpu_sample *out);

/* Readings dropped since the process started because no rank had reported their GPU. */
uint64_t rs_store_gpu_unattributed(void);

/* A GPU's readings folded together (gpu_window.c): what the answers over a time range need of
 * them — counts and sums for means, hits per clock-event reason bit, extremes, the first and last
 * values of cumulative counters and the violation counters' growth — and no more; so the
 * readings of any span fold into one, in any grouping, with the figures of folding them one by
 * one. The rollup keeps old readings as one window per rank and rollup window (docs/
 * storage.md "Rollups"); the answers fold windows and the readings still raw. Counters are as in
 * struct rs_gpu_sample (violation counters: whole ms that wrap, rs_gpu_violation_delta_ns). A
 * field group's figures mean something only when its bit is in `present`. Stored as it is (host
 * order): 328 bytes. */
#define RS_GPU_WINDOW_VERSION 1u
#define RS_GPU_WINDOW_REASON_BITS 16 /* NVML's clock-event reasons are bits 0 - 8 */
struct rs_gpu_window {
    uint32_t version, present;           /* present: the union of the readings' field bits */
    uint64_t first_ns, last_ns, samples; /* of the readings */
    uint64_t sum_sm_mhz, sum_mem_mhz, sum_power_mw, sum_temp_c, sum_util_gpu, sum_util_mem;
    uint32_t n_sm, n_mem, n_reasons, n_power, n_temp, n_util; /* readings with each figure */
    uint32_t reason_hits[RS_GPU_WINDOW_REASON_BITS];          /* readings with reason bit i */
    uint32_t sm_max_mhz, mem_max_mhz, power_limit_mw, mem_total_mib; /* the newest */
    uint32_t mem_used_max_mib, temp_max_c;
    /* violation counters (power, thermal): the first and last reading with them, and the growth
     * between consecutive readings summed, each step capped at the time between them (a counter
     * that went back — a driver reload — counts none) */
    uint64_t viol_first_ns, viol_last_ns;
    uint64_t viol_first[2], viol_last[2], viol_growth_ns[2];
    uint64_t ecc_first[2], ecc_last[2]; /* corrected, uncorrected */
    uint64_t replay_first, replay_last, nvlink_err_first, nvlink_err_last;
    uint64_t xids;                  /* events */
    uint32_t last_xid, remapped[2]; /* the newest: XID code, remapped rows (correctable, not) */
    uint8_t remap_pending, remap_failed; /* in any reading */
    uint8_t pcie_gen_min, pcie_width_min, pcie_gen_max, pcie_width_max, nvlink_up_min, pad;
};

/* Folds one reading (taken after those already in w, or w empty: zeroed) into w. */
void rs_gpu_window_add(struct rs_gpu_window *w, const struct rs_gpu_sample *g);
/* Folds `later` (readings after into's, or overlapping them: then the counters' growth between
 * the two is not counted) into `into` (zeroed: empty). */
void rs_gpu_window_merge(struct rs_gpu_window *into, const struct rs_gpu_window *later);

/* One rank's GPU over [t0, t1) as windows, in time order: its rolled-up windows that start in
 * the range (whole: a window's readings may reach past t1), then its raw readings in the range,
 * each as a window of one. An unknown job has none (0). Returns 0, the callback's non-zero value,
 * RS_E_CORRUPT or a storage error. */
typedef int (*rs_store_gpu_window_cb)(void *arg, const struct rs_gpu_window *w);
int rs_store_gpu_windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                              uint64_t t1, rs_store_gpu_window_cb cb, void *arg);

/* The growth of a violation counter between two stored readings (ns; the stored counters wrap). */
static inline uint64_t
rs_gpu_violation_delta_ns(uint64_t earlier_ns, uint64_t later_ns)
{
    return (uint64_t)(uint32_t)(later_ns / 1000000u - earlier_ns / 1000000u) * 1000000u;
}

/* --- straggler verdict history (verdicts.c) ------------------------------------------------ */

/* One time a rank was found a straggler: from the evaluation that raised it (detected_ns, server
 * clock) to the first one that no longer did (cleared_ns; 0 while active — or when the server
 * stopped before clearing it). slowdown: the newest evaluation's. */
struct rs_store_verdict {
    uint32_t rank;
    uint64_t detected_ns, cleared_ns;
    double slowdown;
};

/* Records what one evaluation found for rank `rank` of `job`: active (a straggler, slowdown > 0)
 * or not. An active finding continues the rank's newest verdict when that one is not cleared (a
 * later evaluation, or the first after a restart, which raises it again), else starts one at
 * now_ns — making room by deleting the rank's oldest beyond RS_VERDICTS_PER_RANK - 1; an
 * inactive one clears the open verdict at now_ns, if any. Deleting the job removes its verdicts.
 * Returns 0, RS_E_NOT_FOUND (no such job: deleted meanwhile), -EINVAL (active with a slowdown
 * that is not a positive number) or a storage error. */
int rs_store_verdict_note(rs_store_write *w, const char *job, uint32_t rank, bool active,
                          double slowdown, uint64_t now_ns);

/* The stored verdicts of `job`, by rank then detected_ns. An unknown job has none (0). */
typedef int (*rs_store_verdict_cb)(void *arg, const struct rs_store_verdict *v);
int rs_store_verdicts_scan(rs_store_read *r, const char *job, rs_store_verdict_cb cb, void *arg);

/* --- captures on demand (captures.c) -------------------------------------------------------- */

/* One capture as the server keeps it (server/captures.h; `state` is its enum, stored as it is).
 * Strings are NUL-terminated and cut to their arrays. */
#define RS_STORE_CAPTURE_WHO 64
#define RS_STORE_CAPTURE_REASON 160
#define RS_STORE_CAPTURE_MESSAGE 208
#define RS_STORE_CAPTURE_STATE_MAX 5 /* the server's states are 0 .. this (--check) */
struct rs_store_capture {
    uint64_t id;
    uint32_t rank, kinds, seconds, state, ran_kinds;
    uint64_t requested_ns, delivered_ns, started_ns, ended_ns, batches, kernels, stalls;
    char who[RS_STORE_CAPTURE_WHO], reason[RS_STORE_CAPTURE_REASON],
        message[RS_STORE_CAPTURE_MESSAGE];
};

/* Stores (or replaces) capture c->id of `job`. Returns 0, RS_E_NOT_FOUND (no such job: deleted
 * meanwhile; nothing is stored), -EINVAL (id 0) or a storage error. Deleting the job removes its
 * captures. */
int rs_store_capture_put(rs_store_write *w, const char *job, const struct rs_store_capture *c);

/* Removes capture `id` of `job`; 0 also when there was none (or no such job). */
int rs_store_capture_delete(rs_store_write *w, const char *job, uint64_t id);

/* Every stored capture of every job, by job then id; cb's non-zero return stops the scan and is
 * returned. Returns 0, RS_E_CORRUPT (an entry of the wrong size or version, or of a job without
 * a name) or a storage error. */
typedef int (*rs_store_capture_cb)(void *arg, const char *job, const struct rs_store_capture *c);
int rs_store_captures_scan(rs_store_read *r, rs_store_capture_cb cb, void *arg);

/* --- hang history (hangs.c) ---------------------------------------------------------------- */

/* One NCCL hang the server's hang watch raised: operation op/seq on communicator comm, in flight
 * since since_ns (collectors' clock), raised at raised_ns and cleared at cleared_ns (server clock;
 * 0 while open — or when the server stopped before clearing it); comm_size ranks, n_waiting of
 * them waiting, n_absent that never arrived, the first RS_STORE_HANG_RANKS of those in absent. */
#define RS_STORE_HANG_RANKS 16
struct rs_store_hang {
    uint64_t comm, seq, since_ns, raised_ns, cleared_ns;
    char op[32];
    uint32_t comm_size, n_waiting, n_absent;
    uint32_t absent[RS_STORE_HANG_RANKS];
};

/* Records hang h of `job`, or updates it (the same raised_ns, comm and seq: its clearing). A new
 * one makes room by deleting the job's oldest beyond RS_HANGS_PER_JOB - 1 (keys.h). Deleting the
 * job removes its hangs. Returns 0, RS_E_NOT_FOUND (no such job: deleted meanwhile), -EINVAL (op
 * not NUL-terminated, cleared before raised, n_absent below the ranks listed) or a storage error. */
int rs_store_hang_put(rs_store_write *w, const char *job, const struct rs_store_hang *h);

/* The stored hangs of `job`, oldest raised first. An unknown job has none (0). A malformed entry
 * stops the scan with RS_E_CORRUPT. */
typedef int (*rs_store_hang_cb)(void *arg, const struct rs_store_hang *h);
int rs_store_hangs_scan(rs_store_read *r, const char *job, rs_store_hang_cb cb, void *arg);

/* --- job totals (keys.h job_top) ---------------------------------------------------------- */

/* What a job's running totals say of it as a whole. They follow every record and window of a job
 * that a format-8 writer created: kernels by name, NCCL kernels by op, host-side copy kinds, PC
 * samples by kernel, and per rank whether it has GPU work and whether its launch waits overlap
 * (their union is then not their sum). */
struct rs_store_job_totals {
    bool has_totals;     /* false: the job was stored before totals were kept (format 7) */
    bool complete;       /* false: a record was replaced, which totals cannot follow */
    bool kernel_windows; /* kernel windows (agent totals, rolled-up kernels) were stored */
    uint64_t t0, t1;     /* the span every kernel, NCCL kernel, copy and window covers */
    uint64_t collectives; /* NCCL kernel records stored */
};

enum rs_store_total_kind {
    RS_STORE_TOTAL_RANK,       /* id = rank; has_data, launch_waits_overlap */
    RS_STORE_TOTAL_KERNEL,     /* name; count, ns */
    RS_STORE_TOTAL_COLLECTIVE, /* id = enum rs_coll_op; count, ns */
    RS_STORE_TOTAL_SYNC,       /* id = a host-side enum rs_copy_kind; count, ns (launch waits:
                                  their sum) */
    RS_STORE_TOTAL_STALLS,     /* name = a kernel's; count = its PC samples */
};

struct rs_store_total {
    enum rs_store_total_kind kind;
    uint64_t id;
    const char *name; /* valid during the callback */
    uint64_t count, ns;
    bool has_data, launch_waits_overlap;
};
typedef int (*rs_store_total_cb)(void *arg, const struct rs_store_total *t);

/* Reads the totals of `job` into *out and calls cb for each (ranks in rank order first, then
 * kernels, collectives, syncs and stalls), without calling it when out->has_totals is false.
 * Reads O(kernel names + ranks) entries. Returns 0, RS_E_NOT_FOUND (no such job), RS_E_CORRUPT, a
 * callback's non-zero value or a storage error; *out is written on success. */
int rs_store_job_totals(rs_store_read *r, const char *job, struct rs_store_job_totals *out,
                        rs_store_total_cb cb, void *arg);

/* --- consistency ------------------------------------------------------------------------- */

#define RS_STORE_DBS 19 /* databases of the layout (docs/storage.md) */

struct rs_store_check_report {
    uint64_t jobs, ranks, series_chunks, kernel_windows, steps, collectives, strings, batches,
        step_summaries, name_numbers; /* entries seen */
    uint64_t gpu_ranks, verdicts;     /* entries of the GPU map and the verdict history */
    uint64_t captures;                /* captures on demand kept */

    uint64_t hangs;                   /* entries of the hang history */
    struct {
        const char *name;     /* "series", "coll_blocks", ... */
        uint64_t bytes;       /* its pages (branch, leaf, overflow) times the page size */
        uint64_t leaf_bytes;  /* its leaf pages times the page size */
        uint64_t entry_bytes; /* what its entries take of leaf pages (keys, values, headers;
                                 values on overflow pages counted in full): entry_bytes /
                                 leaf_bytes is how full its leaf pages are */
    } dbs[RS_STORE_DBS];
    /* GPU telemetry (series of kind RS_SERIES_GPU): readings and what their chunks take of leaf
     * pages (keys, values, node headers) */
    uint64_t gpu_readings, gpu_entry_bytes;
    /* their rollups (series of kind RS_SERIES_GPU_WINDOW): windows, readings they hold, bytes */
    uint64_t gpu_windows, gpu_window_readings, gpu_window_entry_bytes;
    uint64_t problems;
    char first_problem[256]; /* "" when none */
};

/* Walks every database and checks each key and value: sizes, versions, time ranges, enum values,
 * string hashes, name numbers (dense, each naming a stored string; every number a window uses
 * exists), and that every record belongs to a job that exists and every job's rank count
 * matches its ranks. Read-only; safe while a writer runs. Returns 0 (consistent) or RS_E_CORRUPT
 * (report says what and how often), or a storage error. */
int rs_store_check(rs_store *s, struct rs_store_check_report *out);

/* Writes a compacted copy of the store into `dest_dir` (created; must hold no store): free pages
 * are left out, so the copy is as small as the data. Works while a writer runs (the copy is the
 * store as of the start). Returns 0, -EEXIST when dest_dir already holds a data.mdb, or an
 * error. */
int rs_store_compact(rs_store *s, const char *dest_dir);

/* Bytes of the map in use (pages up to the last one written): what the store occupies on disk
 * apart from the sparse tail. */
int rs_store_used_bytes(rs_store *s, uint64_t *out);

/* Space of the store: the map as asked for (largest store ingest may fill; LMDB's map is 10%
 * larger, kept for the deletions that free space), the file's high-water mark (LMDB never
 * shrinks it), and the pages holding data (high-water minus LMDB's free pages, which new writes
 * reuse): what retention by disk budget compares with its budget. */
struct rs_store_space {
    uint64_t map_bytes, file_bytes, data_bytes;
};
int rs_store_space_get(rs_store *s, struct rs_store_space *out);

/* Whether the data fills the map as asked for (ingest should stop; the headroom is for
 * deletions). Cheap while the file is smaller than the map — LMDB's free pages are counted only
 * then — so a writer can ask before every commit. */
bool rs_store_full(rs_store *s);

/* The job that received data least recently (server clock), for retention by space; *found is
 * false when the store holds no job. */
int rs_store_oldest_job(rs_store_read *r, char *name, size_t len, bool *found);

/* Number of (agent_id, batch_seq) pairs ever committed. */
int rs_store_batches_count(rs_store_read *r, uint64_t *out);

#endif
