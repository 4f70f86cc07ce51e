/* The hang history in the store (storage/hangs.c): a hang is recorded when raised and updated in
 * place when cleared; the scan gives a job's hangs oldest first, across a reopen; a job keeps at
 * most RS_HANGS_PER_JOB, the oldest going first; a job that does not exist gets none; bad input is
 * refused; deleting the job removes them; --check counts them and flags bad ones. */
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "tests/store_fixture.h"

#include <errno.h>
#include <lmdb.h>
#include <string.h>

#define S 1000000000ull

static int
put(rs_store *st, const char *job, const struct rs_store_hang *h)
{
    rs_store_write *w;
    int rc;

    T_EQ(rs_store_write_begin(st, &w), 0);
    rc = rs_store_hang_put(w, job, h);
    T_EQ(rs_store_write_commit(w), 0);
    return rc;
}

struct got {
    struct rs_store_hang v[RS_HANGS_PER_JOB + 8];
    size_t n;
};

static int
collect(void *arg, const struct rs_store_hang *h)
{
    struct got *g = arg;
    if (g->n < sizeof g->v / sizeof g->v[0])
        g->v[g->n++] = *h;
    return 0;
}

static struct got *
scan(rs_store *st, const char *job)
{
    static struct got g;
    rs_store_read *r;

    g.n = 0;
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_hangs_scan(r, job, collect, &g), 0);
    rs_store_read_end(r);
    return &g;
}

static struct rs_store_hang
hang(uint64_t seq, uint64_t raised_ns)
{
    struct rs_store_hang h = {.comm = 0xabcdef0123456789ull, .seq = seq, .since_ns = raised_ns - S,
                              .raised_ns = raised_ns, .comm_size = 4, .n_waiting = 3,
                              .n_absent = 1, .absent = {2}};
    strcpy(h.op, "AllReduce");
    return h;
}

static void
history(void)
{
    char dir[] = "/tmp/rs-hangs-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_rank_batch rb[2] = {{.identity = T_IDENTITY("j", 0, 2, "GPU-a")},
                                  {.identity = T_IDENTITY("j", 1, 2, "GPU-b")}};
    struct rs_store_check_report rep;
    struct rs_store_hang h = hang(7, 10 * S);

    t_store_put(st, rb, 2);
    T_EQ(put(st, "nojob", &h), RS_E_NOT_FOUND);
    T_EQ(scan(st, "nojob")->n, 0);
    struct rs_store_hang bad = h;
    memset(bad.op, 'x', sizeof bad.op); /* not NUL-terminated */
    T_EQ(put(st, "j", &bad), -EINVAL);
    bad = h;
    bad.cleared_ns = h.raised_ns - 1;
    T_EQ(put(st, "j", &bad), -EINVAL);
    T_EQ(scan(st, "j")->n, 0);

    T_EQ(put(st, "j", &h), 0);
    rs_store_close(st);
    T_EQ(rs_store_open(dir, NULL, &st), 0); /* kept across a reopen (a restart) */
    struct got *g = scan(st, "j");
    T_EQ(g->n, 1);
    T_EQ(g->v[0].comm, 0xabcdef0123456789ull);
    T_EQ(g->v[0].seq, 7);
    T_EQ(g->v[0].since_ns, 9 * S);
    T_EQ(g->v[0].raised_ns, 10 * S);
    T_EQ(g->v[0].cleared_ns, 0);
    T_CHECK(strcmp(g->v[0].op, "AllReduce") == 0);
    T_EQ(g->v[0].comm_size, 4);
    T_EQ(g->v[0].n_waiting, 3);
    T_EQ(g->v[0].n_absent, 1);
    T_EQ(g->v[0].absent[0], 2);

    h.cleared_ns = 25 * S; /* cleared: the same entry */
    T_EQ(put(st, "j", &h), 0);
    struct rs_store_hang h2 = hang(8, 30 * S);
    T_EQ(put(st, "j", &h2), 0);
    g = scan(st, "j");
    T_EQ(g->n, 2);
    T_EQ(g->v[0].cleared_ns, 25 * S);
    T_EQ(g->v[1].seq, 8); /* oldest raised first */
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.hangs, 2);

    /* a job keeps its newest RS_HANGS_PER_JOB */
    for (uint64_t i = 0; i < RS_HANGS_PER_JOB + 20; i++) {
        struct rs_store_hang x = hang(100 + i, (100 + i) * S);
        T_EQ(put(st, "j", &x), 0);
    }
    g = scan(st, "j");
    T_EQ(g->n, RS_HANGS_PER_JOB);
    T_EQ(g->v[0].seq, 100 + 20 + 2 - 2); /* the two first and the 20 oldest of the loop went */
    T_EQ(g->v[g->n - 1].seq, 100 + RS_HANGS_PER_JOB + 19);
    T_EQ(rs_store_check(st, &rep), 0);

    t_store_delete_job(st, "j", 2);
    T_EQ(scan(st, "j")->n, 0);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.hangs, 0);
    t_store_remove(st, dir);
}

/* --check flags a hang of a job that does not exist and one cleared before it was raised. */
static void
check_flags_bad_ones(void)
{
    char dir[] = "/tmp/rs-hangs-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_store_check_report rep;
    struct rs_key_hang key;
    struct rs_hang_value hv = {.version = RS_VALUE_VERSION, .cleared_ns = 5 * S};
    MDB_val k = {sizeof key, &key}, v = {sizeof hv, &hv};

    strcpy(hv.op, "AllReduce");
    memset(&key, 0, sizeof key);
    key.job_id[7] = 42;
    rs__be64_put(key.raised_ns, 10 * S);
    t_store_raw_put(&st, dir, "hangs", k, v);
    T_EQ(rs_store_check(st, &rep), RS_E_CORRUPT);
    T_EQ(rep.problems, 2);
    T_CHECK(strstr(rep.first_problem, "hangs: a hang of a job that does not exist") != NULL);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(history);
    T_RUN(check_flags_bad_ones);
    return T_DONE("unit/storage/hangs");
}
