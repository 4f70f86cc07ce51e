/* GPU readings folded into windows (see store.h struct rs_gpu_window): the one fold that both the
 * rollup of telemetry series (gpu_rollup.c) and the answers over a time range (query/gpus.c) use,
 * so a rolled-up range answers as its readings did; and the scan that gives a rank's rolled-up
 * windows and raw readings alike. */
#include "storage/keys.h"
#include "storage/store_int.h"

#include "common/error.h"

#include <string.h>

_Static_assert(sizeof(struct rs_gpu_window) == 352, "GPU window value layout");

/* The violation counters' growth from reading a to reading b (ns counters of struct
 * rs_gpu_sample), each capped at the time between them (plus the counters' 1 ms grain). */
static void
violation_growth(uint64_t a_ns, const uint64_t a[2], uint64_t b_ns, const uint64_t b[2],
                 uint64_t out[2])
{
    uint64_t cap = (b_ns > a_ns ? b_ns - a_ns : 0) + 1000000u;

    for (int i = 0; i < 2; i++) {
        uint64_t d = rs_gpu_violation_delta_ns(a[i], b[i]);
        out[i] += d > cap ? 0 : d;
    }
}

void
rs_gpu_window_add(struct rs_gpu_window *w, const struct rs_gpu_sample *g)
{
    struct rs_gpu_window one;

    memset(&one, 0, sizeof one);
    one.version = RS_GPU_WINDOW_VERSION;
    one.present = g->present;
    one.first_ns = one.last_ns = g->time_ns;
    one.samples = 1;
    if (g->present & RS_GPU_SM_CLOCK)
        one.sum_sm_mhz = g->sm_clock_mhz, one.n_sm = 1;
    if (g->present & RS_GPU_SM_CLOCK_MAX)
        one.sm_max_mhz = g->sm_clock_max_mhz;
    if (g->present & RS_GPU_MEM_CLOCK)
        one.sum_mem_mhz = g->mem_clock_mhz, one.n_mem = 1;
    if (g->present & RS_GPU_MEM_CLOCK_MAX)
        one.mem_max_mhz = g->mem_clock_max_mhz;
    if (g->present & RS_GPU_CLOCK_REASONS) {
        one.n_reasons = 1;
        for (int b = 0; b < RS_GPU_WINDOW_REASON_BITS; b++)
            one.reason_hits[b] = (g->clock_reasons >> b) & 1;
    }
    if (g->present & RS_GPU_VIOLATIONS) {
        one.viol_first_ns = one.viol_last_ns = g->time_ns;
        one.viol_first[0] = one.viol_last[0] = g->power_violation_ns;
        one.viol_first[1] = one.viol_last[1] = g->thermal_violation_ns;
    }
    if (g->present & RS_GPU_POWER)
        one.sum_power_mw = g->power_mw, one.n_power = 1;
    if (g->present & RS_GPU_POWER_LIMIT)
        one.power_limit_mw = g->power_limit_mw;
    if (g->present & RS_GPU_TEMPERATURE)
        one.sum_temp_c = one.temp_max_c = g->temperature_c, one.n_temp = 1;
    if (g->present & RS_GPU_UTILIZATION)
        one.sum_util_gpu = g->util_gpu_pct, one.sum_util_mem = g->util_mem_pct, one.n_util = 1;
    if (g->present & RS_GPU_MEMORY) {
        one.mem_used_max_mib = (uint32_t)(g->mem_used_bytes >> 20);
        one.mem_total_mib = (uint32_t)(g->mem_total_bytes >> 20);
    }
    if (g->present & RS_GPU_ECC) {
        one.ecc_first[0] = one.ecc_last[0] = g->ecc_corrected;
        one.ecc_first[1] = one.ecc_last[1] = g->ecc_uncorrected;
    }
    if (g->present & RS_GPU_REMAPPED) {
        one.remapped[0] = g->remapped_correctable;
        one.remapped[1] = g->remapped_uncorrectable;
        one.remap_pending = g->remap_pending;
        one.remap_failed = g->remap_failed;
    }
    if (g->present & RS_GPU_XID) {
        one.xids = g->xid_count;
        one.last_xid = g->xid_count ? g->last_xid : 0;
    }
    if (g->present & RS_GPU_PCIE_LINK) {
        one.pcie_gen_min = (uint8_t)g->pcie_gen;
        one.pcie_width_min = (uint8_t)g->pcie_width;
        one.pcie_gen_max = (uint8_t)g->pcie_gen_max;
        one.pcie_width_max = (uint8_t)g->pcie_width_max;
    }
    if (g->present & RS_GPU_PCIE_REPLAY)
        one.replay_first = one.replay_last = g->pcie_replay;
    if (g->present & RS_GPU_NVLINK) {
        one.nvlink_up_min = (uint8_t)g->nvlink_up;
        one.nvlink_err_first = one.nvlink_err_last = g->nvlink_errors;
    }
    rs_gpu_window_merge(w, &one);
}

static uint32_t
min_nonzero(uint32_t a, uint32_t b)
{
    return a == 0 || (b != 0 && b < a) ? b : a;
}

void
rs_gpu_window_merge(struct rs_gpu_window *into, const struct rs_gpu_window *later)
{
    struct rs_gpu_window *w = into;
    const struct rs_gpu_window *l = later;
    uint32_t had = w->present, has = l->present;

    if (l->samples == 0)
        return;
    if (w->samples == 0) {
        *w = *l;
        return;
    }
    w->present |= has;
    w->first_ns = l->first_ns < w->first_ns ? l->first_ns : w->first_ns;
    w->last_ns = l->last_ns > w->last_ns ? l->last_ns : w->last_ns;
    w->samples += l->samples;
    w->sum_sm_mhz += l->sum_sm_mhz, w->n_sm += l->n_sm;
    w->sum_mem_mhz += l->sum_mem_mhz, w->n_mem += l->n_mem;
    w->sum_power_mw += l->sum_power_mw, w->n_power += l->n_power;
    w->sum_temp_c += l->sum_temp_c, w->n_temp += l->n_temp;
    w->sum_util_gpu += l->sum_util_gpu, w->sum_util_mem += l->sum_util_mem, w->n_util += l->n_util;
    w->n_reasons += l->n_reasons;
    for (int b = 0; b < RS_GPU_WINDOW_REASON_BITS; b++)
        w->reason_hits[b] += l->reason_hits[b];
    /* the newest values: later's where it has them */
    if (has & RS_GPU_SM_CLOCK_MAX)
        w->sm_max_mhz = l->sm_max_mhz;
    if (has & RS_GPU_MEM_CLOCK_MAX)
        w->mem_max_mhz = l->mem_max_mhz;
    if (has & RS_GPU_POWER_LIMIT)
        w->power_limit_mw = l->power_limit_mw;
    if (has & RS_GPU_MEMORY) {
        w->mem_total_mib = l->mem_total_mib;
        w->mem_used_max_mib =
            l->mem_used_max_mib > w->mem_used_max_mib ? l->mem_used_max_mib : w->mem_used_max_mib;
    }
    if (l->temp_max_c > w->temp_max_c)
        w->temp_max_c = l->temp_max_c;
    if (has & RS_GPU_VIOLATIONS) {
        if (!(had & RS_GPU_VIOLATIONS)) {
            w->viol_first_ns = l->viol_first_ns;
            memcpy(w->viol_first, l->viol_first, sizeof w->viol_first);
        } else if (l->viol_first_ns >= w->viol_last_ns) { /* in order: the step between them */
            violation_growth(w->viol_last_ns, w->viol_last, l->viol_first_ns, l->viol_first,
                             w->viol_growth_ns);
        }
        w->viol_growth_ns[0] += l->viol_growth_ns[0];
        w->viol_growth_ns[1] += l->viol_growth_ns[1];
        if (!(had & RS_GPU_VIOLATIONS) || l->viol_last_ns >= w->viol_last_ns) {
            w->viol_last_ns = l->viol_last_ns;
            memcpy(w->viol_last, l->viol_last, sizeof w->viol_last);
        }
    }
    if (has & RS_GPU_ECC) {
        if (!(had & RS_GPU_ECC))
            memcpy(w->ecc_first, l->ecc_first, sizeof w->ecc_first);
        memcpy(w->ecc_last, l->ecc_last, sizeof w->ecc_last);
    }
    if (has & RS_GPU_REMAPPED) {
        memcpy(w->remapped, l->remapped, sizeof w->remapped);
        w->remap_pending |= l->remap_pending;
        w->remap_failed |= l->remap_failed;
    }
    if (has & RS_GPU_XID) {
        w->xids += l->xids;
        if (l->xids)
            w->last_xid = l->last_xid;
    }
    if (has & RS_GPU_PCIE_LINK) {
        bool first = !(had & RS_GPU_PCIE_LINK);
        w->pcie_gen_min =
            (uint8_t)(first ? l->pcie_gen_min : min_nonzero(w->pcie_gen_min, l->pcie_gen_min));
        w->pcie_width_min = (uint8_t)(first ? l->pcie_width_min
                                            : min_nonzero(w->pcie_width_min, l->pcie_width_min));
        w->pcie_gen_max = l->pcie_gen_max;
        w->pcie_width_max = l->pcie_width_max;
    }
    if (has & RS_GPU_PCIE_REPLAY) {
        if (!(had & RS_GPU_PCIE_REPLAY))
            w->replay_first = l->replay_first;
        w->replay_last = l->replay_last;
    }
    if (has & RS_GPU_NVLINK) {
        if (!(had & RS_GPU_NVLINK)) {
            w->nvlink_up_min = l->nvlink_up_min;
            w->nvlink_err_first = l->nvlink_err_first;
        } else if (l->nvlink_up_min < w->nvlink_up_min) {
            w->nvlink_up_min = l->nvlink_up_min;
        }
        w->nvlink_err_last = l->nvlink_err_last;
    }
}

void
rs__gpu_window_as_sample(const struct rs_gpu_window *w, struct rs_gpu_sample *g)
{
    memset(g, 0, sizeof *g);
    g->time_ns = w->last_ns;
    g->present = w->present;
    g->sm_clock_mhz = (uint32_t)(w->n_sm ? w->sum_sm_mhz / w->n_sm : 0);
    g->sm_clock_max_mhz = w->sm_max_mhz;
    g->mem_clock_mhz = (uint32_t)(w->n_mem ? w->sum_mem_mhz / w->n_mem : 0);
    g->mem_clock_max_mhz = w->mem_max_mhz;
    for (int b = 0; b < RS_GPU_WINDOW_REASON_BITS; b++)
        if (2ull * w->reason_hits[b] > w->n_reasons)
            g->clock_reasons |= 1ull << b;
    g->power_violation_ns = w->viol_last[0];
    g->thermal_violation_ns = w->viol_last[1];
    g->power_mw = (uint32_t)(w->n_power ? w->sum_power_mw / w->n_power : 0);
    g->power_limit_mw = w->power_limit_mw;
    g->temperature_c = (uint32_t)(w->n_temp ? w->sum_temp_c / w->n_temp : 0);
    g->util_gpu_pct = (uint32_t)(w->n_util ? w->sum_util_gpu / w->n_util : 0);
    g->util_mem_pct = (uint32_t)(w->n_util ? w->sum_util_mem / w->n_util : 0);
    g->mem_used_bytes = (uint64_t)w->mem_used_max_mib << 20;
    g->mem_total_bytes = (uint64_t)w->mem_total_mib << 20;
    g->ecc_corrected = w->ecc_last[0];
    g->ecc_uncorrected = w->ecc_last[1];
    g->remapped_correctable = w->remapped[0];
    g->remapped_uncorrectable = w->remapped[1];
    g->remap_pending = w->remap_pending;
    g->remap_failed = w->remap_failed;
    g->xid_count = (uint32_t)(w->xids > UINT32_MAX ? UINT32_MAX : w->xids);
    g->last_xid = w->last_xid;
    g->pcie_gen = w->pcie_gen_min;
    g->pcie_gen_max = w->pcie_gen_max;
    g->pcie_width = w->pcie_width_min;
    g->pcie_width_max = w->pcie_width_max;
    g->pcie_replay = (uint32_t)w->replay_last;
    g->nvlink_up = w->nvlink_up_min;
    g->nvlink_errors = w->nvlink_err_last;
}

/* ---- the scan ------------------------------------------------------------------------------ */

struct windows_ctx {
    uint64_t t0, t1;
    rs_store_gpu_window_cb cb;
    void *arg;
};

static int
visit_window(void *p, const MDB_val *k, const MDB_val *v)
{
    struct windows_ctx *ctx = p;
    const struct rs_key_series *key = k->mv_data;
    struct rs_gpu_window w;

    if (k->mv_size != sizeof *key || v->mv_size != sizeof w)
        return RS_E_CORRUPT;
    if (rs__be64_get(key->start_ns) >= ctx->t1)
        return 1;
    memcpy(&w, v->mv_data, sizeof w);
    if (w.version != RS_GPU_WINDOW_VERSION)
        return RS_E_CORRUPT;
    return ctx->cb(ctx->arg, &w);
}

static int
one_reading(void *p, const struct rs_gpu_sample *g)
{
    struct windows_ctx *ctx = p;
    struct rs_gpu_window w;

    memset(&w, 0, sizeof w);
    rs_gpu_window_add(&w, g);
    return ctx->cb(ctx->arg, &w);
}

int
rs_store_gpu_windows_scan(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0,
                          uint64_t t1, rs_store_gpu_window_cb cb, void *arg)
{
    struct windows_ctx ctx = {t0, t1, cb, arg};
    struct rs_key_series from;
    uint64_t id;
    int rc;

    if ((rc = rs__store_job_key(r->txn, r->store, job, &id)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc; /* an unknown job has none */
    memset(&from, 0, sizeof from);
    rs__be64_put(from.job_id, id);
    rs__be32_put(from.rank, rank);
    rs__be16_put(from.kind, RS_SERIES_GPU_WINDOW);
    rs__be64_put(from.start_ns, t0);
    rc = rs__store_prefix_scan(r, r->store->series, &from, RS_KEY_KIND_PREFIX, &from, sizeof from,
                               visit_window, &ctx);
    if (rc != 0 && rc != 1)
        return rc;
    return rs_store_gpu_scan(r, job, rank, t0, t1, one_reading, &ctx);
}
