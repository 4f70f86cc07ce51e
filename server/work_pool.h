/* A fixed set of worker threads with a bounded queue, whose completions run on the libuv loop.
 * The server keeps two (server.c): one decodes agents' batches, one runs REST queries, so that
 * neither can take the other's threads — libuv's shared pool let eight heavy queries stop ingest
 * (issue 23). Admission is bounded in total and per key (a client's address): a flood is refused
 * at the door instead of queued without end. Worker threads may run at a lower CPU priority
 * (nice) so that on a busy machine the ingest path wins the cores. */
#ifndef RS_SERVER_WORK_POOL_H
#define RS_SERVER_WORK_POOL_H

#include <stdint.h>
#include <uv.h>

typedef struct rs_work_pool rs_work_pool;

/* One unit of work, owned by the caller (embed it, like uv_work_t) and untouched by the caller
 * from a successful submit until its done callback. */
struct rs_work {
    void (*work)(struct rs_work *w);             /* on a worker thread */
    void (*done)(struct rs_work *w, int status); /* on the loop: 0, or RS_E_CLOSED (not run) */
    uint64_t key;                                /* admission key (0: counted in total only) */
    struct rs_work *next;                        /* private */
    struct rs_work *prev_all, *next_all;         /* private: every admitted item */
};

struct rs_work_pool_options {
    const char *name;     /* thread names "<name>-<i>", at most 11 characters */
    unsigned threads;     /* 1 .. 64 */
    unsigned max_items;   /* admitted (waiting + running + completing) at once; beyond: RS_E_FULL */
    unsigned max_per_key; /* of them with one nonzero key; beyond: -EBUSY (0 = no such bound) */
    int nice;             /* niceness the worker threads add to the process's (0 = same) */
};

/* Starts the threads. Returns 0, -EINVAL (threads or max_items 0, threads over 64), -ENOMEM or
 * the error of creating a thread. Call on the loop's thread. */
int rs_work_pool_start(uv_loop_t *loop, const struct rs_work_pool_options *o, rs_work_pool **out);

/* Queues w (w->work and w->done set by the caller) under w->key. Returns 0 (w->done will be
 * called exactly once, on the loop), RS_E_FULL (max_items admitted), -EBUSY (max_per_key of this
 * key admitted) or RS_E_CLOSED (closing); on an error w->done is never called. Loop thread. */
int rs_work_pool_submit(rs_work_pool *p, struct rs_work *w);

/* Items admitted now (waiting, running or completing): for /metrics. Any thread. */
unsigned rs_work_pool_busy(const rs_work_pool *p);

/* Stops admitting, waits for the items running to finish (queries end at their deadline), joins
 * the threads, then calls the done callbacks still due: status 0 for items that ran, RS_E_CLOSED
 * for items that never started. The pool's memory is released when the loop next runs (its
 * async handle's close callback): p must not be used after this call. NULL is a no-op. Loop
 * thread. */
void rs_work_pool_close(rs_work_pool *p);

#endif
