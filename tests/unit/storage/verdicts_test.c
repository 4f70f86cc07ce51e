/* The straggler verdict history in the store (storage/verdicts.c): a finding opens a verdict, later
 * ones (and the first after a restart) continue it and a clearing closes it; the next finding opens
 * another; a rank keeps at most RS_VERDICTS_PER_RANK, the oldest going first; a job that does not
 * exist gets none; deleting the job removes them; --check counts them and flags a bad one. */
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "tests/store_fixture.h"

#include <errno.h>
#include <lmdb.h>
#include <math.h>
#include <string.h>

#define S 1000000000ull

static int
note(rs_store *st, const char *job, uint32_t rank, bool active, double slowdown, uint64_t t)
{
    rs_store_write *w;
    int rc;

    T_EQ(rs_store_write_begin(st, &w), 0);
    rc = rs_store_verdict_note(w, job, rank, active, slowdown, t);
    T_EQ(rs_store_write_commit(w), 0);
    return rc;
}

struct got {
    struct rs_store_verdict v[32];
    size_t n;
};

static int
collect(void *arg, const struct rs_store_verdict *v)
{
    struct got *g = arg;
    if (g->n < 32)
        g->v[g->n++] = *v;
    return 0;
}

static struct got
scan(rs_store *st, const char *job)
{
    struct got g = {.n = 0};
    rs_store_read *r;

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_verdicts_scan(r, job, collect, &g), 0);
    rs_store_read_end(r);
    return g;
}

static void
episodes(void)
{
    char dir[] = "/tmp/rs-verdicts-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_rank_batch rb[2] = {{.identity = T_IDENTITY("j", 0, 2, "GPU-a")},
                                  {.identity = T_IDENTITY("j", 1, 2, "GPU-b")}};
    struct rs_store_check_report rep;

    t_store_put(st, rb, 2);
    T_EQ(note(st, "nojob", 1, true, 1.2, 10 * S), RS_E_NOT_FOUND);
    T_EQ(note(st, "j", 1, true, NAN, 10 * S), -EINVAL);
    T_EQ(note(st, "j", 1, false, 0, 10 * S), 0); /* nothing open: nothing to clear */
    T_EQ(scan(st, "j").n, 0);

    T_EQ(note(st, "j", 1, true, 1.10, 10 * S), 0);
    T_EQ(note(st, "j", 1, true, 1.20, 11 * S), 0); /* the same verdict, newer slowdown */
    rs_store_close(st);
    T_EQ(rs_store_open(dir, NULL, &st), 0);
    T_EQ(note(st, "j", 1, true, 1.25, 20 * S), 0); /* raised again after a restart: goes on */
    struct got g = scan(st, "j");
    T_EQ(g.n, 1);
    T_EQ(g.v[0].rank, 1);
    T_EQ(g.v[0].detected_ns, 10 * S);
    T_EQ(g.v[0].cleared_ns, 0);
    T_CHECK(g.v[0].slowdown == 1.25);

    T_EQ(note(st, "j", 1, false, 0, 30 * S), 0);
    T_EQ(note(st, "j", 1, false, 0, 31 * S), 0); /* cleared once */
    T_EQ(note(st, "j", 1, true, 1.5, 40 * S), 0);
    T_EQ(note(st, "j", 0, true, 1.3, 41 * S), 0);
    g = scan(st, "j");
    T_EQ(g.n, 3);
    T_EQ(g.v[0].rank, 0); /* by rank, then time */
    T_EQ(g.v[1].cleared_ns, 30 * S);
    T_EQ(g.v[2].detected_ns, 40 * S);
    T_EQ(g.v[2].cleared_ns, 0);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.verdicts, 3);

    /* a flapping rank keeps its newest RS_VERDICTS_PER_RANK */
    for (uint64_t i = 0; i < 40; i++) {
        T_EQ(note(st, "j", 1, false, 0, (100 + 2 * i) * S), 0);
        T_EQ(note(st, "j", 1, true, 1.1, (101 + 2 * i) * S), 0);
    }
    g = scan(st, "j");
    T_EQ(g.n, 1 + RS_VERDICTS_PER_RANK);
    T_EQ(g.v[g.n - 1].detected_ns, 179 * S);
    T_EQ(g.v[1].detected_ns, (179 - 2 * (RS_VERDICTS_PER_RANK - 1)) * S);
    T_EQ(rs_store_check(st, &rep), 0);

    t_store_delete_job(st, "j", 2);
    T_EQ(scan(st, "j").n, 0);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.verdicts, 0);
    t_store_remove(st, dir);
}

/* --check flags a verdict of a job that does not exist and one cleared before it was raised. */
static void
check_flags_bad_ones(void)
{
    char dir[] = "/tmp/rs-verdicts-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_store_check_report rep;
    struct rs_key_verdict key;
    struct rs_verdict_value vv = {RS_VALUE_VERSION, 0, 5 * S, 1.2};
    MDB_val k = {sizeof key, &key}, v = {sizeof vv, &vv};

    memset(&key, 0, sizeof key);
    key.job_id[7] = 42;
    rs__be64_put(key.detected_ns, 10 * S);
    t_store_raw_put(&st, dir, "verdicts", k, v);
    T_EQ(rs_store_check(st, &rep), RS_E_CORRUPT);
    T_EQ(rep.problems, 2);
    T_CHECK(strstr(rep.first_problem, "verdicts: a verdict of a job that does not exist") != NULL);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(episodes);
    T_RUN(check_flags_bad_ones);
    return T_DONE("unit/storage/verdicts");
}
