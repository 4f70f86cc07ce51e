/* Deleting a whole job from a running server: a writer task that deletes in bounded transactions
 * between ingest commits (storage/store.h rs_store_delete_job), forgets the job's straggler state,
 * and reports on the loop thread — exactly once, whatever happens (the report's memory is taken
 * when the deletion starts). Used by DELETE /v1/jobs/{job} and by retention by space. */
#ifndef RS_SERVER_JOB_DELETE_H
#define RS_SERVER_JOB_DELETE_H

#include <stddef.h>
#include <stdint.h>

struct rs_server;

/* Runs on the loop thread when the deletion is over: status 0, RS_E_NOT_FOUND (no such job),
 * RS_E_CLOSED (the server is stopping; part may be deleted: deleting again finishes it) or a
 * storage error; `entries` were deleted. */
typedef void (*rs_job_deleted_fn)(void *arg, const char *job, int status, uint64_t entries);

/* Starts deleting `job` (a valid job name), at most `per_txn` entries per transaction (small when
 * the map is nearly full: deleting needs free pages too). Returns 0 (done will be called), -ENOMEM
 * or RS_E_CLOSED (the writer is stopping); then done is not called. Loop thread only. */
int rs__server_delete_job(struct rs_server *srv, const char *job, size_t per_txn,
                          rs_job_deleted_fn done, void *arg);

#endif
