/* The writing of settled step summaries (server-internal): the streaming evaluator (evaluator.h)
 * loads a running job's steps for its verdicts, and hands the settled ones computed from kernels
 * to a list that one writer task stores, so that later loads read one value per rank-step; a
 * catch-up summarizes the steps its windows skipped. Loop thread for new/submit/free; collect and
 * catch_up run in the thread pool on a list no other thread touches. */
#ifndef RS_SERVER_STEP_SUMMARIES_H
#define RS_SERVER_STEP_SUMMARIES_H

#include "query/steps.h"
#include "storage/store.h"

#include <stddef.h>
#include <stdint.h>

struct rs_server;
typedef struct rs_step_summaries rs_step_summaries;

/* An empty list for srv's writer. `finished(arg)` is called on the loop thread once a submitted
 * list has been stored (or storing failed: logged as RS-EVALUATE-SUMMARIES) and freed. NULL
 * without memory. */
rs_step_summaries *rs__step_summaries_new(struct rs_server *srv, void (*finished)(void *arg),
                                          void *arg);

/* Frees a list that was not submitted. NULL is fine. */
void rs__step_summaries_free(rs_step_summaries *s);

/* Adds the steps of `ranks` (borrowed) that rs_job_steps_keep_final marked to store. Returns 0 or
 * -ENOMEM (what was added stays). */
int rs__step_summaries_collect(rs_step_summaries *s, const char *job,
                               const struct rs_rank_steps *ranks, size_t n_ranks);

/* The catch-up (step_summaries.c): `ranks` are the job's newest windows as loaded; *next is where
 * the job's catch-up starts (UINT64_MAX: first seen since the server started), moved on success;
 * *loaded grows by the rank-steps it read. Jobs with step markers only. Returns 0 or -ENOMEM. */
int rs__step_summaries_catch_up(rs_step_summaries *s, rs_store_read *r, const char *job,
                                const struct rs_rank_steps *ranks, size_t n_ranks, uint64_t *next,
                                uint64_t *loaded);

/* Queues the list to srv's writer, which then owns it (finished is called once it is done).
 * Returns 0, -ENODATA for an empty list, or the writer's error; the caller keeps the list on
 * failure. */
int rs__step_summaries_submit(rs_step_summaries *s);

#endif
