/* Unit tests of job deletion: chunked (many transactions), complete, leaves other jobs alone,
 * keeps the store consistent, and refuses unknown jobs. */
#include "common/clock.h"
#include "common/error.h"
#include "storage/store.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"k", "nccl"};

static void
put_job(rs_store *st, const char *job, uint64_t seq)
{
    struct rs_kernel_record k[200];
    struct rs_collective_record c[20];
    struct rs_step_record s[20];
    rs_store_write *w;
    bool dup;

    for (int i = 0; i < 200; i++)
        k[i] = (struct rs_kernel_record){1000 + i * 10, 1005 + i * 10, 0, 7, 0, 0};
    for (int i = 0; i < 20; i++) {
        c[i] = (struct rs_collective_record){5000 + i,          5001 + i, 8,  1,    (uint64_t)i,
                                             RS_COLL_ALLREDUCE, 1,        17, false};
        s[i] = (struct rs_step_record){
            .step = (uint64_t)i, .start_ns = 100 * i, .end_ns = 100 * i + 50};
    }
    for (uint32_t rank = 0; rank < 4; rank++) {
        struct rs_rank_batch rb = {.identity = T_IDENTITY(job, rank, 4, "GPU"),
                                   T_RECORDS(strings, names, 2),
                                   T_RECORDS(kernels, k, 200),
                                   T_RECORDS(collectives, c, 20),
                                   T_RECORDS(steps, s, 20)};
        struct rs_agent_batch b = t_agent_batch(9, seq * 10 + rank, &rb, 1);
        T_EQ(rs_store_write_begin(st, &w), 0);
        T_EQ(rs_store_write_batch(w, &b, &dup), 0);
        T_EQ(rs_store_write_commit(w), 0);
    }
}

static void
chunked_delete(void)
{
    char dir[] = "/tmp/rs-delete-XXXXXX";
    struct rs_store_check_report rep;
    struct rs_job_info info;
    rs_store *st = NULL;
    rs_store_write *w;
    rs_store_read *r;
    uint64_t deleted = 0;
    bool done = false;
    int rounds = 0;

    st = t_store_open(dir, NULL);
    put_job(st, "gone", 1);
    put_job(st, "kept", 2);
    while (!done && rounds < 1000) {
        T_EQ(rs_store_write_begin(st, &w), 0);
        T_EQ(rs_store_delete_job(w, "gone", 7, &deleted, &done), 0); /* 7 entries a txn */
        T_EQ(rs_store_write_commit(w), 0);
        rounds++;
        /* between chunks the store stays consistent (the job entry goes last) */
        T_EQ(rs_store_check(st, &rep), 0);
    }
    T_CHECK(done);
    T_CHECK(rounds > 10);
    T_CHECK(deleted > 70);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_job_get(r, "gone", &info), RS_E_NOT_FOUND);
    T_EQ(rs_store_job_get(r, "kept", &info), 0);
    T_EQ(info.n_ranks, 4);
    rs_store_read_end(r);
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_delete_job(w, "gone", 7, &deleted, &done), RS_E_NOT_FOUND);
    rs_store_write_abort(w);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.jobs, 1);
    T_EQ(rep.ranks, 4);
    /* the last job too: deleting the last entries of a database (once answered EINVAL) */
    t_store_delete_job(st, "kept", 5);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.jobs, 0);
    T_EQ(rep.ranks + rep.series_chunks + rep.steps + rep.collectives, 0);
    t_store_remove(st, dir);
}

static void
expire_by_arrival_time(void)
{
    char dir[] = "/tmp/rs-expire-XXXXXX";
    struct rs_store_check_report rep;
    rs_store *st = NULL;
    rs_store_write *w;
    uint64_t deleted = 0, jobs = 0, now;
    bool done = false;

    st = t_store_open(dir, NULL);
    put_job(st, "a", 1); /* record times near 1970: arrival time is what counts */
    put_job(st, "b", 2);
    now = rs_clock_realtime_ns();
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_expire_jobs(w, now - 3600000000000ull, 100, &deleted, &jobs, &done), 0);
    T_EQ(rs_store_write_commit(w), 0);
    T_CHECK(done);
    T_EQ(deleted, 0); /* both arrived just now */
    for (done = false; !done;) {
        T_EQ(rs_store_write_begin(st, &w), 0);
        T_EQ(rs_store_expire_jobs(w, now + 1000000000ull, 100, &deleted, &jobs, &done), 0);
        T_EQ(rs_store_write_commit(w), 0);
    }
    T_EQ(jobs, 2);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.jobs, 0);
    t_store_remove(st, dir);
}

/* Space accounting for retention by space: the oldest job is the one that received data least
 * recently; deleting it frees pages (data_bytes falls) while the file does not shrink. */
static void
space_and_oldest(void)
{
    char dir[] = "/tmp/rs-space-XXXXXX", oldest[RS_WIRE_MAX_JOB_LEN + 1];
    struct rs_store_space before, after;
    rs_store *st = NULL;
    rs_store_write *w;
    rs_store_read *r;
    uint64_t deleted = 0;
    bool done = false, found = false;

    st = t_store_open(dir, NULL);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_oldest_job(r, oldest, sizeof oldest, &found), 0);
    T_CHECK(!found);
    rs_store_read_end(r);
    for (int i = 0; i < 20; i++) /* job "first" gets 20 batches before "second" exists */
        put_job(st, "first", 100 + (uint64_t)i);
    put_job(st, "second", 200);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_oldest_job(r, oldest, sizeof oldest, &found), 0);
    T_CHECK(found && strcmp(oldest, "first") == 0);
    rs_store_read_end(r);
    T_EQ(rs_store_space_get(st, &before), 0);
    T_CHECK(before.data_bytes > 0 && before.data_bytes <= before.file_bytes &&
            before.file_bytes <= before.map_bytes);
    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_delete_job(w, "first", 1000000, &deleted, &done), 0);
    T_EQ(rs_store_write_commit(w), 0);
    T_EQ(rs_store_space_get(st, &after), 0);
    T_CHECK(after.data_bytes < before.data_bytes);
    T_CHECK(after.file_bytes >= before.file_bytes); /* LMDB never shrinks its file */
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(space_and_oldest);
    T_RUN(chunked_delete);
    T_RUN(expire_by_arrival_time);
    return T_DONE("storage/delete");
}
