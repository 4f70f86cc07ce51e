/* Captures on demand in the store (storage/captures.c): put replaces, a job that does not exist
 * gets none, the scan returns every job's by job then id with their job names and strings whole,
 * delete removes one, a restart keeps them, deleting the job removes them; --check counts them and
 * flags one of a job that does not exist, a bad state and a value of the wrong size. */
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "tests/store_fixture.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <string.h>

#define S 1000000000ull

static int
put(rs_store *st, const char *job, const struct rs_store_capture *c)
{
    rs_store_write *w;
    int rc;

    T_EQ(rs_store_write_begin(st, &w), 0);
    rc = rs_store_capture_put(w, job, c);
    T_EQ(rs_store_write_commit(w), 0);
    return rc;
}

static void
del(rs_store *st, const char *job, uint64_t id)
{
    rs_store_write *w;

    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_capture_delete(w, job, id), 0);
    T_EQ(rs_store_write_commit(w), 0);
}

struct got {
    char job[8][16];
    struct rs_store_capture c[8];
    size_t n;
};

static int
collect(void *arg, const char *job, const struct rs_store_capture *c)
{
    struct got *g = arg;
    if (g->n < 8) {
        snprintf(g->job[g->n], sizeof g->job[0], "%s", job);
        g->c[g->n++] = *c;
    }
    return 0;
}

static struct got
scan(rs_store *st)
{
    struct got g = {.n = 0};
    rs_store_read *r;

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_captures_scan(r, collect, &g), 0);
    rs_store_read_end(r);
    return g;
}

static struct rs_store_capture
capture(uint64_t id, uint32_t rank, uint32_t state)
{
    struct rs_store_capture c = {.id = id,
                                 .rank = rank,
                                 .kinds = 3,
                                 .seconds = 5,
                                 .state = state,
                                 .requested_ns = 10 * S,
                                 .batches = 4,
                                 .kernels = 1000};
    memset(c.reason, 'r', sizeof c.reason - 1); /* the longest: kept whole */
    snprintf(c.who, sizeof c.who, "alice");
    snprintf(c.message, sizeof c.message, "kernels traced");
    return c;
}

static void
kept_and_deleted(void)
{
    char dir[] = "/tmp/rs-captures-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_rank_batch rb[2] = {{.identity = T_IDENTITY("j", 0, 1, "GPU-a")},
                                  {.identity = T_IDENTITY("k", 0, 1, "GPU-b")}};
    struct rs_store_check_report rep;
    struct rs_store_capture a = capture(7, 1, 3), b = capture(9, 0, 2), c = capture(5, 0, 0);

    t_store_put(st, rb, 2);
    T_EQ(put(st, "nojob", &a), RS_E_NOT_FOUND);
    a.id = 0;
    T_EQ(put(st, "j", &a), -EINVAL);
    a.id = 7;
    T_EQ(put(st, "j", &b), 0);
    b.kernels = 2000; /* replaced */
    T_EQ(put(st, "j", &b), 0);
    T_EQ(put(st, "j", &a), 0);
    T_EQ(put(st, "k", &c), 0);
    rs_store_close(st);
    T_EQ(rs_store_open(dir, NULL, &st), 0);
    struct got g = scan(st);
    T_EQ(g.n, 3);
    /* by job (its id: the hash of its name here), then id; each with its name */
    for (size_t i = 0; i < g.n; i++) {
        const struct rs_store_capture *x = &g.c[i];
        T_CHECK(strcmp(g.job[i], x->id == 5 ? "k" : "j") == 0);
        T_EQ(strlen(x->reason), sizeof x->reason - 1);
        T_CHECK(strcmp(x->who, "alice") == 0 && strcmp(x->message, "kernels traced") == 0);
    }
    size_t j7 = 0;
    for (size_t i = 0; i < g.n; i++)
        if (g.c[i].id == 7)
            j7 = i;
    T_EQ(g.c[j7 + 1].id, 9); /* job j's in id order */
    T_EQ(g.c[j7 + 1].kernels, 2000);
    T_EQ(g.c[j7 + 1].state, 2);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.captures, 3);

    del(st, "j", 7);
    del(st, "j", 7);       /* none: fine */
    del(st, "nojob", 7);   /* no such job: fine */
    T_EQ(scan(st).n, 2);
    t_store_delete_job(st, "j", 2);
    g = scan(st);
    T_EQ(g.n, 1);
    T_CHECK(strcmp(g.job[0], "k") == 0);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.captures, 1);
    t_store_remove(st, dir);
}

/* --check flags a capture of a job that does not exist, one in an unknown state, and a value of
 * the wrong size (which the scan refuses too). */
static void
check_flags_bad_ones(void)
{
    char dir[] = "/tmp/rs-captures-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_rank_batch rb[1] = {{.identity = T_IDENTITY("j", 0, 1, "GPU-a")}};
    struct rs_store_check_report rep;
    struct rs_store_capture bad = capture(3, 0, 9);
    struct rs_key_capture key;
    uint8_t junk[40] = {1};
    MDB_val k = {sizeof key, &key}, v = {sizeof junk, junk};

    t_store_put(st, rb, 1);
    T_EQ(put(st, "j", &bad), 0);
    T_EQ(rs_store_check(st, &rep), RS_E_CORRUPT);
    T_CHECK(strstr(rep.first_problem, "captures: capture 3 has a bad state") != NULL);
    memset(&key, 0xff, sizeof key); /* job id ff..ff: none */
    t_store_raw_put(&st, dir, "captures", k, v);
    T_EQ(rs_store_check(st, &rep), RS_E_CORRUPT);
    T_EQ(rep.problems, 2);
    T_EQ(rep.captures, 2);
    rs_store_read *r;
    struct got g = {.n = 0};
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_captures_scan(r, collect, &g), RS_E_CORRUPT);
    rs_store_read_end(r);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(kept_and_deleted);
    T_RUN(check_flags_bad_ones);
    return T_DONE("storage/captures");
}
