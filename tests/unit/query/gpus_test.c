/* GPU telemetry summaries before and after the rollup (query/gpus.c over storage/gpu_window.c and
 * the rollup of storage/rollup.c): ten minutes of readings of a power-capped GPU — its violation
 * counter growing 0.78 s a second and wrapping past 2^32 ms, its clock and power moving, ECC
 * errors, XIDs, a link retrained at x8 for a minute, a counter that goes back (a driver reload) —
 * summarized over the whole range and over whole minutes give the same figures once the readings
 * are folded into one window per minute; the raw readings are gone; readings that arrive late join
 * their minute's window at the next rollup; a range that is not whole minutes takes whole windows.
 */
#include "common/clock.h"
#include "query/gpus.h"
#include "tests/store_fixture.h"

#include <math.h>
#include <string.h>

#define S 1000000000ull
#define T0 (1699999980ull * S) /* a multiple of 60 s */
#define WRAP_MS 4294967296ull

static struct rs_gpu_sample
reading(uint64_t i)
{
    /* the violation counter starts 100 s short of its wrap (whole ms, as NVML's) */
    uint64_t viol_ms = (WRAP_MS - 100000 + i * 780) % WRAP_MS;
    if (i >= 400) /* the driver reloaded: counters start again */
        viol_ms = (i - 400) * 780;
    struct rs_gpu_sample g = {
        .uuid = "GPU-r",
        .time_ns = T0 + i * S + 17,
        .present = RS_GPU_SM_CLOCK | RS_GPU_SM_CLOCK_MAX | RS_GPU_MEM_CLOCK | RS_GPU_CLOCK_REASONS |
                   RS_GPU_VIOLATIONS | RS_GPU_POWER | RS_GPU_POWER_LIMIT | RS_GPU_TEMPERATURE |
                   RS_GPU_UTILIZATION | RS_GPU_MEMORY | RS_GPU_ECC | RS_GPU_XID | RS_GPU_PCIE_LINK |
                   RS_GPU_PCIE_REPLAY | RS_GPU_NVLINK,
        .sm_clock_mhz = 1400 + (uint32_t)(i % 13) * 7,
        .sm_clock_max_mhz = 1980,
        .mem_clock_mhz = 2619,
        .clock_reasons = i % 5 == 0 ? RS_GPU_REASON_SW_THERMAL : RS_GPU_REASON_SW_POWER_CAP,
        .power_violation_ns = viol_ms * 1000000ull,
        .thermal_violation_ns = (i / 5) * 200000000ull,
        .power_mw = 690000 + (uint32_t)(i % 11) * 1000,
        .power_limit_mw = 700000,
        .temperature_c = 70 + (uint32_t)(i % 17),
        .util_gpu_pct = 90 + (uint32_t)(i % 10),
        .util_mem_pct = 40 + (uint32_t)(i % 30),
        .mem_used_bytes = (40000ull + i) << 20,
        .mem_total_bytes = 81559ull << 20,
        .ecc_corrected = 10 + i / 7,
        .ecc_uncorrected = i / 100,
        .xid_count = i % 97 == 3,
        .last_xid = i % 97 == 3 ? 79 : 0,
        .pcie_gen = 5,
        .pcie_gen_max = 5,
        .pcie_width = i >= 180 && i < 240 ? 8 : 16,
        .pcie_width_max = 16,
        .pcie_replay = i / 3,
        .nvlink_up = i >= 300 && i < 310 ? 16 : 18,
        .nvlink_errors = i * 2};
    return g;
}

static void
put_readings(rs_store *st, uint64_t seq, uint64_t from, uint64_t to)
{
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job", 0, 1, "GPU-r")};
    struct rs_gpu_sample g[600];
    size_t n = 0;

    for (uint64_t i = from; i < to; i++)
        g[n++] = reading(i);
    t_store_put_gpus(st, 5, seq, &rb, 1, g, (uint32_t)n);
}

static struct rs_gpu_summary
summary(rs_store *st, uint64_t t0, uint64_t t1)
{
    struct rs_gpu_summary *v, out;
    rs_store_read *r;
    size_t n = 0;

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_gpu_summaries(r, "job", t0, t1, &v, &n), 0);
    rs_store_read_end(r);
    T_EQ(n, 1);
    out = v[0];
    free(v);
    return out;
}

/* Rolls everything up (the job is idle: nothing stays raw), `per_txn` entries a transaction. */
static struct rs_store_rollup
rollup(rs_store *st, size_t per_txn)
{
    return t_store_rollup(st, rs_clock_realtime_ns() + 10 * S, S, 60 * S, per_txn);
}

static void
same(const struct rs_gpu_summary *a, const struct rs_gpu_summary *b)
{
    T_EQ(a->samples, b->samples);
    T_EQ(a->first_ns, b->first_ns);
    T_EQ(a->last_ns, b->last_ns);
    T_EQ(a->present, b->present);
    const double x[] = {a->sm_mhz,
                        a->sm_max_mhz,
                        a->mem_mhz,
                        a->power_w,
                        a->power_limit_w,
                        a->temperature_c,
                        a->util_gpu_pct,
                        a->util_mem_pct,
                        a->mem_used_mib,
                        a->mem_total_mib,
                        a->power_violation_share,
                        a->thermal_violation_share,
                        a->temperature_max_c};
    const double y[] = {b->sm_mhz,
                        b->sm_max_mhz,
                        b->mem_mhz,
                        b->power_w,
                        b->power_limit_w,
                        b->temperature_c,
                        b->util_gpu_pct,
                        b->util_mem_pct,
                        b->mem_used_mib,
                        b->mem_total_mib,
                        b->power_violation_share,
                        b->thermal_violation_share,
                        b->temperature_max_c};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        T_CHECK(fabs(x[i] - y[i]) < 1e-9);
    for (int t = 0; t < RS_GPU_THROTTLE_COUNT; t++)
        T_CHECK(fabs(a->throttle_share[t] - b->throttle_share[t]) < 1e-12);
    T_EQ(a->has_violation_share, b->has_violation_share);
    T_EQ(a->ecc_corrected, b->ecc_corrected);
    T_EQ(a->ecc_uncorrected, b->ecc_uncorrected);
    T_EQ(a->ecc_uncorrected_total, b->ecc_uncorrected_total);
    T_EQ(a->xids, b->xids);
    T_EQ(a->last_xid, b->last_xid);
    T_EQ(a->pcie_width, b->pcie_width);
    T_EQ(a->pcie_width_max, b->pcie_width_max);
    T_EQ(a->pcie_replays, b->pcie_replays);
    T_EQ(a->nvlink_up, b->nvlink_up);
    T_EQ(a->nvlink_errors, b->nvlink_errors);
}

static void
rollup_answers_the_same(void)
{
    char dir[] = "/tmp/rs-gpus-XXXXXX";
    rs_store *st = t_store_open(dir, NULL);
    struct rs_store_check_report rep;

    put_readings(st, 1, 0, 300);
    put_readings(st, 2, 300, 600);
    struct rs_gpu_summary all = summary(st, T0, T0 + 600 * S);
    struct rs_gpu_summary minutes = summary(st, T0 + 120 * S, T0 + 420 * S);
    /* the figures are those of the readings: the cap held 4 of 5 readings, the counter's wrap and
     * its reload counted as growth and none */
    T_EQ(all.samples, 600);
    T_CHECK(fabs(all.throttle_share[RS_GPU_THROTTLE_POWER_CAP] - 0.8) < 1e-12);
    T_CHECK(all.power_violation_share > 0.77 && all.power_violation_share < 0.78);
    T_EQ(all.xids, 7);
    T_EQ(all.pcie_width, 8);
    T_EQ(all.nvlink_up, 16);
    T_EQ(all.ecc_uncorrected, 5);

    struct rs_gpu_sample last;
    rs_store_read *r;
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_gpu_last(r, "job", 0, &last), 0);
    rs_store_read_end(r);
    T_EQ(last.time_ns, reading(599).time_ns);
    T_EQ(last.sm_clock_mhz, reading(599).sm_clock_mhz);

    struct rs_store_rollup ru = rollup(st, 7); /* 7 a transaction: windows merge across steps */
    T_EQ(ru.gpu_readings, 600);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.gpu_readings, 0);
    T_EQ(rep.gpu_windows, 10);
    T_EQ(rep.gpu_window_readings, 600);
    struct rs_gpu_summary all2 = summary(st, T0, T0 + 600 * S);
    struct rs_gpu_summary minutes2 = summary(st, T0 + 120 * S, T0 + 420 * S);
    same(&all, &all2);
    same(&minutes, &minutes2);
    /* the newest "reading" is now the last minute's window: its means, its majority reasons */
    uint64_t sm = 0;
    for (uint64_t i = 540; i < 600; i++)
        sm += reading(i).sm_clock_mhz;
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_gpu_last(r, "job", 0, &last), 0);
    rs_store_read_end(r);
    T_EQ(last.time_ns, reading(599).time_ns);
    T_EQ(last.sm_clock_mhz, sm / 60);
    T_EQ(last.clock_reasons, RS_GPU_REASON_SW_POWER_CAP);
    T_EQ(last.ecc_corrected, reading(599).ecc_corrected);
    T_EQ(last.pcie_width, 16);
    /* not whole minutes: the windows that start in the range, whole */
    T_EQ(summary(st, T0 + 30 * S, T0 + 90 * S).samples, 60);

    /* late readings (seconds 20 - 29 again, as a resent batch would bring: 10 more) join the
     * first minute's window */
    put_readings(st, 3, 20, 30);
    rollup(st, 1000);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.gpu_windows, 10);
    T_EQ(rep.gpu_window_readings, 610);
    T_EQ(summary(st, T0, T0 + 60 * S).samples, 70);
    t_store_delete_job(st, "job", 3);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.gpu_windows, 0);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(rollup_answers_the_same);
    return T_DONE("unit/query/gpus");
}
