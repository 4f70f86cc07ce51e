/* Unit tests of server/work_pool.c on a real loop and real threads: every admitted item's done
 * callback runs once on the loop thread after its work ran on another thread; admission stops at
 * the total and the per-key bounds and reopens as items finish; the threads run in parallel; a
 * close runs what is running to its end and answers what never started with RS_E_CLOSED. */
#include "common/clock.h"
#include "server/work_pool.h"
#include "tests/t.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

struct item {
    struct rs_work w;
    pthread_t ran_on;
    atomic_bool started;
    atomic_bool *release; /* the work waits until this is true (NULL: no wait) */
    int done_calls, status;
    pthread_t done_on;
};

static atomic_int running_now, running_max;

static void
item_work(struct rs_work *w)
{
    struct item *it = (struct item *)w;
    int now = atomic_fetch_add(&running_now, 1) + 1, max = atomic_load(&running_max);

    while (now > max && !atomic_compare_exchange_weak(&running_max, &max, now))
        ;
    it->ran_on = pthread_self();
    atomic_store(&it->started, true);
    while (it->release && !atomic_load(it->release))
        usleep(1000);
    atomic_fetch_sub(&running_now, 1);
}

static void
item_done(struct rs_work *w, int status)
{
    struct item *it = (struct item *)w;
    it->done_calls++;
    it->status = status;
    it->done_on = pthread_self();
}

static void
item_init(struct item *it, uint64_t key, atomic_bool *release)
{
    memset(it, 0, sizeof *it);
    it->w.work = item_work;
    it->w.done = item_done;
    it->w.key = key;
    it->release = release;
}

/* Runs the loop until every item has had its done callback (or 5 s). */
static bool
run_until_done(uv_loop_t *loop, struct item *items, size_t n)
{
    uint64_t end = rs_clock_mono_ns() + 5000000000ull;
    for (;;) {
        size_t done = 0;
        for (size_t i = 0; i < n; i++)
            done += items[i].done_calls > 0;
        if (done == n)
            return true;
        if (rs_clock_mono_ns() > end)
            return false;
        uv_run(loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
}

static void
test_runs_on_threads_done_on_loop(void)
{
    uv_loop_t loop;
    rs_work_pool *p;
    struct item items[40];
    struct rs_work_pool_options o = {"t-pool", 3, 64, 0, 0};

    uv_loop_init(&loop);
    atomic_store(&running_max, 0);
    T_OK(rs_work_pool_start(&loop, &o, &p));
    for (size_t i = 0; i < 40; i++) {
        item_init(&items[i], i % 5, NULL);
        T_EQ(rs_work_pool_submit(p, &items[i].w), 0);
    }
    T_CHECK(run_until_done(&loop, items, 40));
    for (size_t i = 0; i < 40; i++) {
        T_EQ(items[i].done_calls, 1);
        T_EQ(items[i].status, 0);
        T_CHECK(pthread_equal(items[i].done_on, pthread_self()));
        T_CHECK(!pthread_equal(items[i].ran_on, pthread_self()));
    }
    T_EQ(rs_work_pool_busy(p), 0);
    rs_work_pool_close(p);
    uv_run(&loop, UV_RUN_DEFAULT);
    T_EQ(uv_loop_close(&loop), 0);
}

static void
test_bounds_total_and_per_key(void)
{
    uv_loop_t loop;
    rs_work_pool *p;
    struct item items[6], extra, other_key;
    atomic_bool release = false;
    struct rs_work_pool_options o = {"t-bound", 2, 5, 2, 0};

    uv_loop_init(&loop);
    atomic_store(&running_max, 0);
    T_OK(rs_work_pool_start(&loop, &o, &p));
    /* key 7 twice: the third is refused per key, another key is not */
    item_init(&items[0], 7, &release);
    item_init(&items[1], 7, &release);
    item_init(&items[2], 7, &release);
    T_EQ(rs_work_pool_submit(p, &items[0].w), 0);
    T_EQ(rs_work_pool_submit(p, &items[1].w), 0);
    T_EQ(rs_work_pool_submit(p, &items[2].w), -EBUSY);
    item_init(&items[3], 8, &release);
    item_init(&items[4], 0, &release);
    item_init(&items[5], 0, &release);
    T_EQ(rs_work_pool_submit(p, &items[3].w), 0);
    T_EQ(rs_work_pool_submit(p, &items[4].w), 0);
    T_EQ(rs_work_pool_submit(p, &items[5].w), 0);
    T_EQ(rs_work_pool_busy(p), 5);
    item_init(&extra, 0, NULL);
    T_EQ(rs_work_pool_submit(p, &extra.w), RS_E_FULL);
    /* two threads: exactly two items run at once while held */
    while (!atomic_load(&items[0].started) || !atomic_load(&items[1].started))
        usleep(1000);
    usleep(20000);
    T_EQ(atomic_load(&running_max), 2);
    atomic_store(&release, true);
    uint64_t end = rs_clock_mono_ns() + 5000000000ull;
    while (rs_work_pool_busy(p) > 0 && rs_clock_mono_ns() < end) {
        uv_run(&loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    T_EQ(rs_work_pool_busy(p), 0);
    T_EQ(items[2].done_calls, 0); /* refused: never called */
    /* finished items free their key's places */
    item_init(&other_key, 7, NULL);
    T_EQ(rs_work_pool_submit(p, &other_key.w), 0);
    T_CHECK(run_until_done(&loop, &other_key, 1));
    rs_work_pool_close(p);
    uv_run(&loop, UV_RUN_DEFAULT);
    T_EQ(uv_loop_close(&loop), 0);
}

static void
test_close_runs_running_and_refuses_waiting(void)
{
    uv_loop_t loop;
    rs_work_pool *p;
    struct item held, waiting[3];
    atomic_bool release = false;
    struct rs_work_pool_options o = {"t-close", 1, 8, 0, 5};

    uv_loop_init(&loop);
    T_OK(rs_work_pool_start(&loop, &o, &p));
    item_init(&held, 0, &release);
    T_EQ(rs_work_pool_submit(p, &held.w), 0);
    while (!atomic_load(&held.started))
        usleep(1000);
    for (size_t i = 0; i < 3; i++) {
        item_init(&waiting[i], 0, NULL);
        T_EQ(rs_work_pool_submit(p, &waiting[i].w), 0);
    }
    atomic_store(&release, true); /* close waits for it */
    rs_work_pool_close(p);
    T_EQ(held.done_calls, 1);
    T_EQ(held.status, 0);
    for (size_t i = 0; i < 3; i++) {
        T_EQ(waiting[i].done_calls, 1);
        T_EQ(waiting[i].status, RS_E_CLOSED);
        T_CHECK(!atomic_load(&waiting[i].started));
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    T_EQ(uv_loop_close(&loop), 0);
}

static void
test_refuses_bad_options(void)
{
    uv_loop_t loop;
    rs_work_pool *p = NULL;
    struct rs_work_pool_options none = {"t", 0, 4, 0, 0}, no_items = {"t", 1, 0, 0, 0},
                                many = {"t", 65, 4, 0, 0};

    uv_loop_init(&loop);
    T_EQ(rs_work_pool_start(&loop, &none, &p), -EINVAL);
    T_EQ(rs_work_pool_start(&loop, &no_items, &p), -EINVAL);
    T_EQ(rs_work_pool_start(&loop, &many, &p), -EINVAL);
    T_CHECK(p == NULL);
    T_EQ(uv_loop_close(&loop), 0);
}

int
main(void)
{
    T_RUN(test_runs_on_threads_done_on_loop);
    T_RUN(test_bounds_total_and_per_key);
    T_RUN(test_close_runs_running_and_refuses_waiting);
    T_RUN(test_refuses_bad_options);
    return T_DONE("unit/server/work_pool");
}
