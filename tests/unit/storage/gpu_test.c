/* GPU telemetry in the store (storage/gpu.c): readings go to the rank whose collector reported
 * their GPU's UUID — in the same request or an earlier one — in time order, with their figures
 * (violation counters in whole ms); readings of a GPU no rank reported are counted and dropped;
 * the newest reading is found; deleting the job deletes them; --check counts them. The map from
 * UUID to rank (gpu_ranks.c) survives reopening the store, follows a rank to another GPU and a GPU
 * to another job, and loses its entries with the job that holds them. */
#include "storage/store.h"
#include "tests/store_fixture.h"

#include <string.h>

#define T0 1700000000000000000ull

static struct rs_gpu_sample
reading(const char *uuid, uint64_t t, uint32_t sm)
{
    return (struct rs_gpu_sample){.uuid = uuid,
                                  .time_ns = t,
                                  .present = RS_GPU_SM_CLOCK | RS_GPU_VIOLATIONS | RS_GPU_MEMORY,
                                  .sm_clock_mhz = sm,
                                  .power_violation_ns = 1234567890123ull,
                                  .mem_used_bytes = 3ull << 30};
}

struct seen {
    uint64_t times[64];
    uint32_t sm[64];
    size_t n;
    uint64_t violation;
};

static int
collect(void *arg, const struct rs_gpu_sample *g)
{
    struct seen *s = arg;
    if (s->n < 64) {
        s->times[s->n] = g->time_ns;
        s->sm[s->n++] = g->sm_clock_mhz;
    }
    s->violation = g->power_violation_ns;
    return 0;
}

static void
filed_under_their_ranks(void)
{
    char dir[] = "/tmp/rs-gpu-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_rank_batch rb[2] = {{.identity = T_IDENTITY("j", 0, 2, "GPU-a")},
                                  {.identity = T_IDENTITY("j", 1, 2, "GPU-b")}};
    struct rs_gpu_sample g[6];
    rs_store_read *r;
    struct seen s0 = {0}, s1 = {0};
    struct rs_gpu_sample last;

    /* a request with the ranks and readings out of time order */
    g[0] = reading("GPU-a", T0 + 2000, 1410);
    g[1] = reading("GPU-b", T0 + 1000, 1980);
    g[2] = reading("GPU-a", T0 + 1000, 1400);
    g[3] = reading("GPU-nobody", T0 + 1000, 1);
    uint64_t before = rs_store_gpu_unattributed();
    t_store_put_gpus(st, 99, 1, rb, 2, g, 4);
    /* a request of readings alone: the ranks reported their GPUs before */
    g[4] = reading("GPU-a", T0 + 3000, 1420);
    g[5] = reading("GPU-b", T0 + 3000, 1970);
    t_store_put_gpus(st, 99, 2, NULL, 0, g + 4, 2);
    T_EQ(rs_store_gpu_unattributed() - before, 1);

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_gpu_scan(r, "j", 0, 0, UINT64_MAX, collect, &s0), 0);
    T_EQ(rs_store_gpu_scan(r, "j", 1, 0, UINT64_MAX, collect, &s1), 0);
    T_EQ(s0.n, 3);
    T_EQ(s0.times[0], T0 + 1000);
    T_EQ(s0.sm[0], 1400);
    T_EQ(s0.times[2], T0 + 3000);
    T_EQ(s0.violation, 1234567000000ull); /* whole ms */
    T_EQ(s1.n, 2);
    T_EQ(s1.sm[1], 1970);
    struct seen part = {0};
    T_EQ(rs_store_gpu_scan(r, "j", 0, T0 + 1500, T0 + 2500, collect, &part), 0);
    T_EQ(part.n, 1);
    T_EQ(part.sm[0], 1410);
    T_EQ(rs_store_gpu_last(r, "j", 0, &last), 0);
    T_EQ(last.sm_clock_mhz, 1420);
    T_EQ(last.mem_used_bytes, 3ull << 30);
    T_EQ(rs_store_gpu_last(r, "j", 5, &last), RS_E_NOT_FOUND);
    T_EQ(rs_store_gpu_last(r, "nojob", 0, &last), RS_E_NOT_FOUND);
    rs_store_read_end(r);

    struct rs_store_check_report rep;
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.gpu_readings, 5);
    T_EQ(rep.gpu_entry_bytes, 4 * (26 + 10) + 5 * 96); /* a chunk per rank and request: 4 */

    t_store_delete_job(st, "j", 3);
    T_EQ(rs_store_read_begin(st, &r), 0);
    struct seen none = {0};
    T_EQ(rs_store_gpu_scan(r, "j", 0, 0, UINT64_MAX, collect, &none), 0);
    T_EQ(none.n, 0);
    rs_store_read_end(r);
    /* the job's ranks took their map entries along: a reading of their GPUs is not stored */
    before = rs_store_gpu_unattributed();
    t_store_put_gpus(st, 99, 3, NULL, 0, g + 4, 1);
    T_EQ(rs_store_gpu_unattributed() - before, 1);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.gpu_readings, 0);
    t_store_remove(st, dir);
}

/* The readings of `uuid` at t in one request of readings alone: how many went unattributed. */
static uint64_t
unattributed(rs_store *st, uint64_t seq, const char *uuid, uint64_t t)
{
    struct rs_gpu_sample g = reading(uuid, t, 1000);
    uint64_t before = rs_store_gpu_unattributed();

    t_store_put_gpus(st, 99, seq, NULL, 0, &g, 1);
    return rs_store_gpu_unattributed() - before;
}

static uint64_t
map_entries(rs_store *st)
{
    struct rs_store_check_report rep;

    T_EQ(rs_store_check(st, &rep), 0); /* (and consistent every time) */
    return rep.gpu_ranks;
}

static void
map_kept_in_the_store(void)
{
    char dir[] = "/tmp/rs-gpu-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_rank_batch rb = {.identity = T_IDENTITY("j", 0, 1, "GPU-a")};
    struct seen s = {0};
    rs_store_read *r;

    t_store_put_gpus(st, 99, 1, &rb, 1, NULL, 0);
    rs_store_close(st);
    T_EQ(rs_store_open(dir, NULL, &st), 0); /* a restart: nothing in memory */
    T_EQ(unattributed(st, 2, "GPU-a", T0 + 1000), 0);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_gpu_scan(r, "j", 0, 0, UINT64_MAX, collect, &s), 0);
    rs_store_read_end(r);
    T_EQ(s.n, 1);
    T_EQ(map_entries(st), 1);

    /* the rank moves to GPU-b: GPU-a's entry goes with it */
    rb.identity.gpu_uuid = "GPU-b";
    t_store_put_gpus(st, 99, 3, &rb, 1, NULL, 0);
    T_EQ(unattributed(st, 4, "GPU-a", T0 + 2000), 1);
    T_EQ(unattributed(st, 5, "GPU-b", T0 + 2000), 0);
    T_EQ(map_entries(st), 1);

    /* job k's rank 3 takes GPU-b: its readings are k's now, and deleting j leaves the entry */
    struct rs_rank_batch kb = {.identity = T_IDENTITY("k", 3, 4, "GPU-b")};
    t_store_put_gpus(st, 99, 6, &kb, 1, NULL, 0);
    t_store_delete_job(st, "j", 1);
    T_EQ(map_entries(st), 1);
    T_EQ(unattributed(st, 7, "GPU-b", T0 + 3000), 0);
    struct seen k = {0};
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_gpu_scan(r, "k", 3, 0, UINT64_MAX, collect, &k), 0);
    rs_store_read_end(r);
    T_EQ(k.n, 1);
    t_store_delete_job(st, "k", 1); /* one entry a transaction: the walk resumes */
    T_EQ(map_entries(st), 0);
    T_EQ(unattributed(st, 8, "GPU-b", T0 + 4000), 1);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(filed_under_their_ranks);
    T_RUN(map_kept_in_the_store);
    return T_DONE("unit/storage/gpu");
}
