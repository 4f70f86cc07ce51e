/* The storage writer: one thread that owns every LMDB write. Decoded batches are queued by the
 * loop; the thread takes everything queued at once into one transaction (group commit),
 * deduplicates, commits, and only then reports each batch's outcome through its callback — so
 * an acknowledgement always means "on disk". */
#ifndef RS_SERVER_WRITER_H
#define RS_SERVER_WRITER_H

#include "proto/wire.h"
#include "server/counters.h"
#include "storage/store.h"

typedef struct rs_writer rs_writer;

/* Outcome of one batch: RS_REPLY_ACK, RS_REPLY_DUPLICATE or RS_REPLY_RETRY (with a reason). Runs
 * on the writer thread; must not block. Owns nothing of the writer's. */
typedef void (*rs_writer_done_fn)(void *arg, enum rs_reply_status status, const char *reason);

struct rs_writer_options {
    unsigned max_queue; /* batches waiting; beyond it submit fails with RS_E_FULL */
    unsigned max_group; /* batches per transaction */
    /* records per transaction (the group closes at the batch that reaches it; 0 = no bound):
     * LMDB keeps the dirty pages of its largest write transaction cached for reuse until the
     * store closes (mdb_page_free's me_dpages list), so the largest group sets that part of the
     * heap; a single batch is never split */
    uint64_t max_group_records;
    /* request bytes waiting (0 = no bound): a queue bounded by count alone may hold 1,024
     * batches of up to 17 MiB each while ingest falls behind (issue 23 §3 "Heap growth") */
    uint64_t max_queue_bytes;
    /* Fault injection for tests: the process exits at once (like kill -9) right after this
     * many commits, before their replies: the worst moment to crash. 0 = never. */
    unsigned exit_after_commits;
};

/* Starts the thread. The store must outlive the writer. */
int rs_writer_start(rs_store *store, const struct rs_writer_options *opts,
                    struct rs_counters *counters, rs_writer **out);

/* Queues a decoded batch whose request was `bytes` long (what it holds in memory until its
 * commit is about proportional). Takes ownership of `batch` on success only. Returns 0,
 * RS_E_FULL (max_queue batches or max_queue_bytes queued: answer RETRY; a batch is always taken
 * into an empty queue, however large) or RS_E_CLOSED (stopping). Thread-safe. */
int rs_writer_submit(rs_writer *w, rs_wire_agent_batch *batch, size_t bytes, rs_writer_done_fn done,
                     void *arg);

/* rs_writer_submit for a batch sent by an authenticated `principal` (NULL or "" = none): the
 * batch is deduplicated by (principal, agent_id, batch_seq) (rs_store_write_batch_as).
 * RS_E_MALFORMED for a name over RS_STORE_PRINCIPAL_MAX bytes. */
int rs_writer_submit_as(rs_writer *w, rs_wire_agent_batch *batch, const char *principal,
                        size_t bytes, rs_writer_done_fn done, void *arg);

/* Long maintenance work (deleting a job, retention, rollups, the evaluator's step summaries) runs
 * as a task: the writer calls `step` with a fresh transaction between batch groups, commits after
 * each call, and repeats until `step` sets *done or fails; then `done` runs (on the writer thread;
 * must not block) with 0 or the error. Tasks run one after another in submission order.
 * Ingest keeps flowing in between. While batches and tasks both wait, the tasks get one part in
 * RS_WRITER_TASK_SHARE of the writer's time, so that sustained ingest starves neither retention
 * nor rollups nor the summaries (tasks had only the gaps between batches before: at 20,000
 * summaries/s there were none). So a batch may wait for one task step: keep steps short (the
 * tasks here take at most 10,000 entries per step). */
#define RS_WRITER_TASK_SHARE 4
typedef int (*rs_writer_step_fn)(rs_store_write *txn, void *arg, bool *done);
typedef void (*rs_writer_task_done_fn)(void *arg, int status);

/* Queues a task. Returns 0 or RS_E_CLOSED / -ENOMEM (then `done` is not called). */
int rs_writer_submit_task(rs_writer *w, rs_writer_step_fn step, rs_writer_task_done_fn done,
                          void *arg);

/* The store's generation: the write transactions (batch groups and task steps) committed so
 * far, counted after each commit. Whatever a read transaction begun after this call returned G
 * reads includes every write of generation G; a number that has not changed means nothing was
 * written since. For caches of answers (answer_cache.h). Any thread. */
uint64_t rs_writer_generation(const rs_writer *w);

/* The generation of one job's answers: a number that changes whenever a commit may have changed
 * what the store says of `job` — its batches, the task steps that named it
 * (rs_writer_task_writes), and every task step that did not name its jobs and every batch with
 * GPU readings (those may write any job) — and not when only other jobs were written, so that
 * answers about a job stay valid while others ingest. Jobs share RS_WRITER_JOB_SLOTS slots by
 * name hash: a commit to another job of the same slot changes it too (never too seldom).
 * *last_write_ns (NULL: not wanted) gets the monotonic time (rs_clock_mono_ns) of the last
 * commit that wrote the job's slot, 0 for none since start. Any thread. */
#define RS_WRITER_JOB_SLOTS 4096
uint64_t rs_writer_job_generation(const rs_writer *w, const char *job, uint64_t *last_write_ns);

/* Called by a task's step (writer thread, during the step): the step writes `job`. A step that
 * names its jobs changes only their generations when it commits; a step that names none (or
 * more than 16) changes every job's. */
void rs_writer_task_writes(rs_writer *w, const char *job);

/* Commits what is queued, stops the thread and frees the writer (tasks not finished get
 * RS_E_CLOSED). NULL is fine. */
void rs_writer_stop(rs_writer *w);

#endif
