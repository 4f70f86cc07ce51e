/* Job deletion as a writer task (see job_delete.h). */
#include "server/job_delete.h"

#include "common/error.h"
#include "server/post.h"
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>

struct deletion {
    struct rs_server *srv;
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    size_t per_txn;
    rs_job_deleted_fn done;
    void *arg;
    uint64_t entries;
    int status;
    struct rs_post_node answer; /* taken at the start: the report cannot fail to be posted */
};

static int
step(rs_store_write *txn, void *arg, bool *done)
{
    struct deletion *d = arg;
    rs_writer_task_writes(d->srv->writer, d->job); /* other jobs' answers stay */
    return rs_store_delete_job(txn, d->job, d->per_txn, &d->entries, done);
}

static void
report(void *arg) /* on the loop */
{
    struct deletion *d = arg;

    if (d->status == 0)
        rs_evaluator_forget(d->srv->evaluator, d->job);
    d->done(d->arg, d->job, d->status, d->entries);
    free(d);
}

static void
finished(void *arg, int status) /* on the writer thread */
{
    struct deletion *d = arg;

    d->status = status;
    rs_post_node_call(d->srv->post, &d->answer, report, d);
}

int
rs__server_delete_job(struct rs_server *srv, const char *job, size_t per_txn,
                      rs_job_deleted_fn done, void *arg)
{
    struct deletion *d = calloc(1, sizeof *d);
    int rc;

    if (!d)
        return -ENOMEM;
    d->srv = srv;
    snprintf(d->job, sizeof d->job, "%s", job);
    /* its captures go now, before the deletion's steps: a capture stored between two of them
     * would outlive the job (the deletion removes those stored before) */
    rs_captures_forget_job(srv->captures, job);
    d->per_txn = per_txn;
    d->done = done;
    d->arg = arg;
    if ((rc = rs_writer_submit_task(srv->writer, step, finished, d)) != 0) {
        free(d);
        return rc;
    }
    return 0;
}
