/* The storage writer thread with group commit (see writer.h). */
#include "server/writer.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct item {
    struct item *next;
    rs_wire_agent_batch *batch;
    rs_writer_done_fn done;
    void *arg;
    uint64_t records; /* batch_records: the group's bound counts them */
    uint64_t bytes;   /* of its request: the queue's bound counts them */
    char principal[RS_STORE_PRINCIPAL_MAX + 1]; /* "" = not authenticated */
};

struct task {
    struct task *next;
    rs_writer_step_fn step;
    rs_writer_task_done_fn done;
    void *arg;
};

struct rs_writer {
    rs_store *store;
    struct rs_counters *counters;
    struct rs_writer_options opts;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct item *head, **tail;
    unsigned queued;
    uint64_t queued_bytes;
    struct task *tasks, **tasks_tail;
    bool stopping;
    /* Time spent on each kind of work while the other kind waited (the fair share, writer.h);
     * both restart from 0 whenever no task is waiting. Writer thread only. */
    uint64_t contended_ingest_ns, contended_task_ns;
    _Atomic uint64_t generation; /* commits so far (rs_writer_generation) */
    /* Per-job generations (rs_writer_job_generation): the monotonic time of the last commit
     * that wrote a job, by slot (the job name's hash); of the last commit of work not known to
     * be one job's (all jobs). Stamps only grow (stamp()); written by the writer thread. */
    _Atomic uint64_t job_stamp[RS_WRITER_JOB_SLOTS];
    _Atomic uint64_t all_stamp;
    uint64_t last_stamp;
    /* the jobs the running task step said it writes (rs_writer_task_writes): slots, or
     * task_all once more than fit */
    uint32_t task_slots[16];
    size_t n_task_slots;
    bool task_all;
};

uint64_t
rs_writer_generation(const rs_writer *w)
{
    return atomic_load_explicit(&w->generation, memory_order_acquire);
}

static size_t
job_slot(const char *job)
{
    return rs_hash_fnv1a64(job, strlen(job)) & (RS_WRITER_JOB_SLOTS - 1);
}

/* A fresh commit stamp: the monotonic clock, strictly above every earlier one. */
static uint64_t
stamp(rs_writer *w)
{
    uint64_t now = rs_clock_mono_ns();
    w->last_stamp = now > w->last_stamp ? now : w->last_stamp + 1;
    return w->last_stamp;
}

uint64_t
rs_writer_job_generation(const rs_writer *w, const char *job, uint64_t *last_write_ns)
{
    uint64_t all = atomic_load_explicit(&w->all_stamp, memory_order_acquire);
    uint64_t one = atomic_load_explicit(&w->job_stamp[job_slot(job)], memory_order_acquire);

    if (last_write_ns)
        *last_write_ns = one;
    return all > one ? all : one;
}

void
rs_writer_task_writes(rs_writer *w, const char *job)
{
    uint32_t slot = (uint32_t)job_slot(job);

    for (size_t i = 0; i < w->n_task_slots; i++)
        if (w->task_slots[i] == slot)
            return;
    if (w->n_task_slots == sizeof w->task_slots / sizeof w->task_slots[0])
        w->task_all = true;
    else
        w->task_slots[w->n_task_slots++] = slot;
}

/* Commits a group; every item gets its outcome after the commit returns. */
static void
commit_group(rs_writer *w, struct item *group)
{
    enum rs_reply_status status[256];
    const char *reason = "";
    rs_store_write *txn = NULL;
    unsigned n = 0;
    /* Ingest stops once the data fills the map as asked for: LMDB's map is larger by a headroom
     * that only deletions (retention by space, space.h) use, since LMDB needs free pages even to
     * delete. */
    int rc = rs_store_full(w->store) ? RS_E_FULL : rs_store_write_begin(w->store, &txn);

    for (struct item *it = group; rc == 0 && it; it = it->next, n++) {
        bool dup = false;
        rc = rs_store_write_batch_as(txn, rs_wire_agent_batch_get(it->batch), it->principal, &dup);
        status[n] = dup ? RS_REPLY_DUPLICATE : RS_REPLY_ACK;
    }
    if (rc == 0)
        rc = rs_store_write_commit(txn);
    else
        rs_store_write_abort(txn);
    if (rc == 0) { /* after the commit: a reader that sees the new number sees the data */
        uint64_t now = stamp(w);
        for (struct item *it = group; it; it = it->next) {
            const struct rs_agent_batch *b = rs_wire_agent_batch_get(it->batch);
            for (uint32_t i = 0; i < b->n_ranks; i++)
                atomic_store_explicit(&w->job_stamp[job_slot(b->ranks[i].identity.job)], now,
                                      memory_order_release);
            if (b->n_gpus) /* filed under the ranks that reported the GPUs: any job */
                atomic_store_explicit(&w->all_stamp, now, memory_order_release);
        }
        atomic_fetch_add_explicit(&w->generation, 1, memory_order_release);
    }
    if (rc != 0) {
        RS_COUNT(w->counters, commit_errors);
        if (rc == RS_E_FULL)
            RS_COUNT(w->counters, storage_full); /* maintenance frees space (oldest job) */
        reason = rc == RS_E_FULL ? "storage full" : rs_strerror(rc);
        rs_log_limited(10, RS_LOG_ERROR, "RS-STORE-COMMIT", "commit of %u batches failed: %s", n,
                       rs_strerror(rc));
    } else if (RS_COUNT(w->counters, commits) + 1 == w->opts.exit_after_commits)
        _exit(137); /* committed, not acknowledged: the agent must resend, we must dedup */
    n = 0;
    while (group) {
        struct item *next = group->next;
        const struct rs_agent_batch *b = rs_wire_agent_batch_get(group->batch);
        enum rs_reply_status st = rc == 0 ? status[n] : RS_REPLY_RETRY;
        if (st == RS_REPLY_ACK) {
            RS_COUNT(w->counters, batches_committed);
            RS_COUNT_ADD(w->counters, rank_batches, b->n_ranks);
        } else if (st == RS_REPLY_DUPLICATE)
            RS_COUNT(w->counters, batches_duplicate);
        else
            RS_COUNT(w->counters, batches_retry);
        group->done(group->arg, st, reason);
        rs_wire_agent_batch_free(group->batch);
        free(group);
        group = next;
        n++;
    }
}

/* One step of the first task, in its own transaction; the task ends when it says so or fails. */
static void
run_task_step(rs_writer *w)
{
    struct task *t = w->tasks;
    rs_store_write *txn = NULL;
    bool done = false;
    int rc = rs_store_write_begin(w->store, &txn);

    w->n_task_slots = 0;
    w->task_all = false;
    if (rc == 0 && (rc = t->step(txn, t->arg, &done)) == 0)
        rc = rs_store_write_commit(txn);
    else
        rs_store_write_abort(txn);
    if (rc == 0) {
        /* a step that named the jobs it wrote changes only their answers; any other, all */
        uint64_t now = stamp(w);
        if (w->n_task_slots == 0 || w->task_all)
            atomic_store_explicit(&w->all_stamp, now, memory_order_release);
        else
            for (size_t i = 0; i < w->n_task_slots; i++)
                atomic_store_explicit(&w->job_stamp[w->task_slots[i]], now,
                                      memory_order_release);
        atomic_fetch_add_explicit(&w->generation, 1, memory_order_release);
    }
    if (rc == 0 && !done)
        return;
    if (rc == RS_E_FULL)
        RS_COUNT(w->counters, storage_full);
    pthread_mutex_lock(&w->lock);
    w->tasks = t->next;
    if (!w->tasks)
        w->tasks_tail = &w->tasks;
    pthread_mutex_unlock(&w->lock);
    t->done(t->arg, rc);
    free(t);
}

/* Whether the writer's next turn goes to the first task rather than to queued batches: always
 * when no batch waits; while batches wait, as long as the tasks' share of the contended time is
 * below 1 / RS_WRITER_TASK_SHARE. Called with the lock held. */
static bool
task_turn(rs_writer *w)
{
    if (!w->tasks) {
        w->contended_ingest_ns = w->contended_task_ns = 0;
        return false;
    }
    return !w->head || w->contended_task_ns * (RS_WRITER_TASK_SHARE - 1) < w->contended_ingest_ns;
}

static void *
writer_main(void *p)
{
    rs_writer *w = p;

    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->tasks && !w->stopping)
            pthread_cond_wait(&w->cond, &w->lock);
        bool contended = w->head && w->tasks;
        if (!w->stopping && task_turn(w)) {
            pthread_mutex_unlock(&w->lock);
            uint64_t t0 = rs_clock_mono_ns();
            run_task_step(w);
            uint64_t took = rs_clock_mono_ns() - t0;
            RS_COUNT_ADD(w->counters, writer_tasks_ns, took);
            if (contended)
                w->contended_task_ns += took;
            pthread_mutex_lock(&w->lock);
            continue;
        }
        if (!w->head && w->stopping)
            break;
        /* Take up to max_group queued batches: under load they pile up while we commit, so one
         * transaction carries many of them. */
        struct item *group = w->head, **cut = &w->head;
        unsigned n = 0;
        uint64_t records = 0, bytes = 0;
        while (*cut && n < w->opts.max_group &&
               (n == 0 || !w->opts.max_group_records || records < w->opts.max_group_records)) {
            records += (*cut)->records;
            bytes += (*cut)->bytes;
            cut = &(*cut)->next;
            n++;
        }
        w->head = *cut;
        *cut = NULL;
        if (!w->head)
            w->tail = &w->head;
        w->queued -= n;
        w->queued_bytes -= bytes;
        RS_COUNT_SUB(w->counters, writer_queue_now, n);
        RS_COUNT_SUB(w->counters, writer_queue_bytes_now, bytes);
        pthread_mutex_unlock(&w->lock);
        uint64_t t0 = rs_clock_mono_ns();
        commit_group(w, group);
        uint64_t took = rs_clock_mono_ns() - t0;
        RS_COUNT_ADD(w->counters, writer_batches_ns, took);
        if (contended)
            w->contended_ingest_ns += took;
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int
rs_writer_start(rs_store *store, const struct rs_writer_options *opts, struct rs_counters *counters,
                rs_writer **out)
{
    rs_writer *w = calloc(1, sizeof *w);
    int rc;

    if (!w)
        return -ENOMEM;
    w->store = store;
    w->counters = counters;
    w->opts = *opts;
    if (w->opts.max_group == 0 || w->opts.max_group > 256)
        w->opts.max_group = 256;
    if (w->opts.max_queue == 0)
        w->opts.max_queue = 1024;
    w->tail = &w->head;
    w->tasks_tail = &w->tasks;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    if ((rc = pthread_create(&w->thread, NULL, writer_main, w)) != 0) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->cond);
        free(w);
        return -rc;
    }
    pthread_setname_np(w->thread, "rs-writer"); /* for top -H and perf */
    *out = w;
    return 0;
}

/* The records a batch carries (what its transaction writes). */
static uint64_t
batch_records(const rs_wire_agent_batch *batch)
{
    const struct rs_agent_batch *b = rs_wire_agent_batch_get(batch);
    uint64_t n = 0;

    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const struct rs_rank_batch *r = &b->ranks[i];
        n += (uint64_t)r->n_kernels + r->n_memcpys + r->n_collectives + r->n_steps + r->n_stalls +
             r->n_kernel_totals + r->n_copy_totals;
    }
    return n;
}

int
rs_writer_submit(rs_writer *w, rs_wire_agent_batch *batch, size_t bytes, rs_writer_done_fn done,
                 void *arg)
{
    return rs_writer_submit_as(w, batch, NULL, bytes, done, arg);
}

int
rs_writer_submit_as(rs_writer *w, rs_wire_agent_batch *batch, const char *principal,
                    size_t bytes, rs_writer_done_fn done, void *arg)
{
    struct item *it;
    int rc = 0;

    if (principal && strlen(principal) > RS_STORE_PRINCIPAL_MAX)
        return RS_E_MALFORMED;
    pthread_mutex_lock(&w->lock);
    if (w->stopping)
        rc = RS_E_CLOSED;
    else if (w->queued >= w->opts.max_queue ||
             (w->queued > 0 && w->opts.max_queue_bytes &&
              w->queued_bytes + bytes > w->opts.max_queue_bytes))
        rc = RS_E_FULL;
    else if (!(it = malloc(sizeof *it)))
        rc = -ENOMEM;
    if (rc == 0) {
        *it = (struct item){NULL, batch, done, arg, batch_records(batch), bytes, ""};
        snprintf(it->principal, sizeof it->principal, "%s", principal ? principal : "");
        *w->tail = it;
        w->tail = &it->next;
        w->queued++;
        w->queued_bytes += bytes;
        RS_COUNT(w->counters, writer_queue_now);
        RS_COUNT_ADD(w->counters, writer_queue_bytes_now, bytes);
        pthread_cond_signal(&w->cond);
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int
rs_writer_submit_task(rs_writer *w, rs_writer_step_fn step, rs_writer_task_done_fn done, void *arg)
{
    struct task *t = malloc(sizeof *t);
    int rc = 0;

    if (!t)
        return -ENOMEM;
    *t = (struct task){NULL, step, done, arg};
    pthread_mutex_lock(&w->lock);
    if (w->stopping)
        rc = RS_E_CLOSED;
    else {
        *w->tasks_tail = t;
        w->tasks_tail = &t->next;
        pthread_cond_signal(&w->cond);
    }
    pthread_mutex_unlock(&w->lock);
    if (rc != 0)
        free(t);
    return rc;
}

void
rs_writer_stop(rs_writer *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    while (w->tasks) { /* unfinished maintenance: say so */
        struct task *t = w->tasks;
        w->tasks = t->next;
        t->done(t->arg, RS_E_CLOSED);
        free(t);
    }
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    free(w);
}
