/* Per-rank GPU telemetry summaries over a window (see gpus.h). */
#include "query/gpus.h"

#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    uint64_t bit;
} throttles[RS_GPU_THROTTLE_COUNT] = {
    [RS_GPU_THROTTLE_POWER_CAP] = {"power_cap", RS_GPU_REASON_SW_POWER_CAP},
    [RS_GPU_THROTTLE_HW_SLOWDOWN] = {"hw_slowdown", RS_GPU_REASON_HW_SLOWDOWN},
    [RS_GPU_THROTTLE_SW_THERMAL] = {"sw_thermal", RS_GPU_REASON_SW_THERMAL},
    [RS_GPU_THROTTLE_HW_THERMAL] = {"hw_thermal", RS_GPU_REASON_HW_THERMAL},
    [RS_GPU_THROTTLE_POWER_BRAKE] = {"power_brake", RS_GPU_REASON_HW_POWER_BRAKE},
    [RS_GPU_THROTTLE_SYNC_BOOST] = {"sync_boost", RS_GPU_REASON_SYNC_BOOST},
};

const char *
rs_gpu_throttle_name(enum rs_gpu_throttle t)
{
    return (unsigned)t < RS_GPU_THROTTLE_COUNT ? throttles[t].name : "unknown";
}

/* A reason's bit number (the throttles' bits are single bits below RS_GPU_WINDOW_REASON_BITS). */
static int
bit_of(uint64_t bit)
{
    int b = 0;

    while (b < RS_GPU_WINDOW_REASON_BITS && !((bit >> b) & 1))
        b++;
    return b;
}

static int
add_window(void *arg, const struct rs_gpu_window *w)
{
    rs_gpu_window_merge(arg, w);
    return 0;
}

/* The summary's figures from the rank's readings folded into one window. */
static void
finish(const struct rs_gpu_window *w, struct rs_gpu_summary *s)
{
    s->samples = w->samples;
    s->first_ns = w->first_ns;
    s->last_ns = w->last_ns;
    s->present = w->present;
    s->sm_mhz = w->n_sm ? (double)w->sum_sm_mhz / w->n_sm : 0;
    s->sm_max_mhz = w->sm_max_mhz;
    s->mem_mhz = w->n_mem ? (double)w->sum_mem_mhz / w->n_mem : 0;
    s->mem_max_mhz = w->mem_max_mhz;
    for (int t = 0; t < RS_GPU_THROTTLE_COUNT; t++) {
        int b = bit_of(throttles[t].bit);
        s->throttle_share[t] = w->n_reasons && b < RS_GPU_WINDOW_REASON_BITS
                                   ? (double)w->reason_hits[b] / w->n_reasons
                                   : 0;
    }
    uint64_t span = w->viol_last_ns - w->viol_first_ns;
    if ((w->present & RS_GPU_VIOLATIONS) && span > 0) {
        s->has_violation_share = true;
        s->power_violation_share = (double)w->viol_growth_ns[0] / (double)span;
        s->thermal_violation_share = (double)w->viol_growth_ns[1] / (double)span;
        if (s->power_violation_share > 1)
            s->power_violation_share = 1;
        if (s->thermal_violation_share > 1)
            s->thermal_violation_share = 1;
    }
    s->power_w = w->n_power ? (double)w->sum_power_mw / 1000.0 / w->n_power : 0;
    s->power_limit_w = w->power_limit_mw / 1000.0;
    s->temperature_c = w->n_temp ? (double)w->sum_temp_c / w->n_temp : 0;
    s->temperature_max_c = w->temp_max_c;
    s->util_gpu_pct = w->n_util ? (double)w->sum_util_gpu / w->n_util : 0;
    s->util_mem_pct = w->n_util ? (double)w->sum_util_mem / w->n_util : 0;
    s->mem_used_mib = w->mem_used_max_mib;
    s->mem_total_mib = w->mem_total_mib;
    /* counters: growth over the window (a counter that went back — a driver reload — grew 0) */
    s->ecc_corrected = w->ecc_last[0] >= w->ecc_first[0] ? w->ecc_last[0] - w->ecc_first[0] : 0;
    s->ecc_uncorrected = w->ecc_last[1] >= w->ecc_first[1] ? w->ecc_last[1] - w->ecc_first[1] : 0;
    s->ecc_corrected_total = w->ecc_last[0];
    s->ecc_uncorrected_total = w->ecc_last[1];
    s->remapped_correctable = w->remapped[0];
    s->remapped_uncorrectable = w->remapped[1];
    s->remap_pending = w->remap_pending;
    s->remap_failed = w->remap_failed;
    s->xids = w->xids;
    s->last_xid = w->last_xid;
    s->pcie_gen = w->pcie_gen_min;
    s->pcie_width = w->pcie_width_min;
    s->pcie_gen_max = w->pcie_gen_max;
    s->pcie_width_max = w->pcie_width_max;
    s->pcie_replays = w->replay_last >= w->replay_first ? w->replay_last - w->replay_first : 0;
    s->nvlink_up = w->nvlink_up_min;
    s->nvlink_errors =
        w->nvlink_err_last >= w->nvlink_err_first ? w->nvlink_err_last - w->nvlink_err_first : 0;
}

static int
summaries(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1, bool want_busy,
          struct rs_gpu_summary **out, size_t *n)
{
    struct rs_rank_info *ranks;
    struct rs_gpu_summary *v = NULL;
    size_t nr;
    int rc = rs_store_ranks_get(r, job, &ranks, &nr);

    if (rc != 0)
        return rc;
    if (nr && !(v = calloc(nr, sizeof *v))) {
        free(ranks);
        return -ENOMEM;
    }
    for (size_t i = 0; i < nr && rc == 0; i++) {
        struct rs_gpu_window w;
        memset(&w, 0, sizeof w);
        v[i].rank = ranks[i].rank;
        memcpy(v[i].host, ranks[i].host, sizeof v[i].host);
        memcpy(v[i].gpu_uuid, ranks[i].gpu_uuid, sizeof v[i].gpu_uuid);
        /* rolled-up windows and raw readings alike (store.h struct rs_gpu_window) */
        rc = rs_store_gpu_windows_scan(r, job, ranks[i].rank, t0, t1, add_window, &w);
        finish(&w, &v[i]);
        if (rc == 0 && want_busy)
            rc = rs_gpu_busy_of(r, job, ranks[i].rank, t0, t1, &v[i].busy);
    }
    free(ranks);
    if (rc != 0) {
        free(v);
        return rc;
    }
    *out = v;
    *n = nr;
    return 0;
}

int
rs_gpu_summaries(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1,
                 struct rs_gpu_summary **out, size_t *n)
{
    return summaries(r, job, t0, t1, false, out, n);
}

/* A figure NVML gave (field bits `need` in the readings), else null. */
static json_t *
num_if(const struct rs_gpu_summary *s, uint32_t need, double v)
{
    return (s->present & need) ? json_real(v) : json_null();
}

static json_t *
int_if(const struct rs_gpu_summary *s, uint32_t need, uint64_t v)
{
    return (s->present & need) ? json_integer((json_int_t)v) : json_null();
}

json_t *
rs_gpu_summary_json(const struct rs_gpu_summary *s)
{
    json_t *throttle = json_object(), *j;

    if (!throttle)
        return NULL;
    for (int t = 0; t < RS_GPU_THROTTLE_COUNT; t++)
        json_object_set_new(throttle, throttles[t].name,
                            num_if(s, RS_GPU_CLOCK_REASONS, s->throttle_share[t]));
    j = json_pack(
        "{s:I, s:s, s:s, s:I, s:I, s:I, s:{s:o, s:o, s:o, s:o}, s:o, s:{s:o, s:o}, s:{s:o, s:o}, "
        "s:{s:o, s:o}, s:{s:o, s:o}, s:{s:o, s:o}}",
        "rank", (json_int_t)s->rank, "host", s->host, "gpu_uuid", s->gpu_uuid, "samples",
        (json_int_t)s->samples, "first_ns", (json_int_t)s->first_ns, "last_ns",
        (json_int_t)s->last_ns, "clocks", "sm_mhz", num_if(s, RS_GPU_SM_CLOCK, s->sm_mhz),
        "sm_max_mhz", num_if(s, RS_GPU_SM_CLOCK_MAX, s->sm_max_mhz), "mem_mhz",
        num_if(s, RS_GPU_MEM_CLOCK, s->mem_mhz), "mem_max_mhz",
        num_if(s, RS_GPU_MEM_CLOCK_MAX, s->mem_max_mhz), "throttle_share", throttle,
        "violation_share", "power",
        s->has_violation_share ? json_real(s->power_violation_share) : json_null(), "thermal",
        s->has_violation_share ? json_real(s->thermal_violation_share) : json_null(), "power",
        "watts", num_if(s, RS_GPU_POWER, s->power_w), "limit_watts",
        num_if(s, RS_GPU_POWER_LIMIT, s->power_limit_w), "temperature", "mean_c",
        num_if(s, RS_GPU_TEMPERATURE, s->temperature_c), "max_c",
        num_if(s, RS_GPU_TEMPERATURE, s->temperature_max_c), "utilization", "gpu_pct",
        num_if(s, RS_GPU_UTILIZATION, s->util_gpu_pct), "memory_pct",
        num_if(s, RS_GPU_UTILIZATION, s->util_mem_pct), "memory", "used_mib",
        num_if(s, RS_GPU_MEMORY, s->mem_used_mib), "total_mib",
        num_if(s, RS_GPU_MEMORY, s->mem_total_mib));
    if (!j)
        return NULL;
    json_object_set_new(
        j, "errors",
        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:o, s:o}", "ecc_corrected",
                  int_if(s, RS_GPU_ECC, s->ecc_corrected), "ecc_uncorrected",
                  int_if(s, RS_GPU_ECC, s->ecc_uncorrected), "ecc_corrected_total",
                  int_if(s, RS_GPU_ECC, s->ecc_corrected_total), "ecc_uncorrected_total",
                  int_if(s, RS_GPU_ECC, s->ecc_uncorrected_total), "remapped_correctable",
                  int_if(s, RS_GPU_REMAPPED, s->remapped_correctable), "remapped_uncorrectable",
                  int_if(s, RS_GPU_REMAPPED, s->remapped_uncorrectable), "remap_pending",
                  s->remap_pending, "remap_failed", s->remap_failed, "xids",
                  int_if(s, RS_GPU_XID, s->xids), "last_xid",
                  s->xids ? json_integer(s->last_xid) : json_null()));
    const struct rs_gpu_busy *b = &s->busy;
    json_object_set_new(
        j, "kernels",
        b->known ? json_pack("{s:f, s:f, s:s}", "busy_share", b->busy_share, "tensor_core_share",
                             b->tensor_share, "busy_from",
                             b->basis == RS_GPU_BUSY_UNION ? "intervals" : "summed_windows")
                 : json_null());
    json_object_set_new(j, "kernels_why",
                        b->why_unknown ? json_string(b->why_unknown) : json_null());
    json_object_set_new(j, "memory_bound",
                        json_pack("{s:o, s:I, s:I, s:o}", "share",
                                  b->memory_known ? json_real(b->memory_share) : json_null(),
                                  "stall_samples", (json_int_t)b->stall_samples, "memory_samples",
                                  (json_int_t)b->memory_samples, "why",
                                  b->why_no_memory ? json_string(b->why_no_memory) : json_null()));
    json_object_set_new(j, "links",
                        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "pcie_gen",
                                  int_if(s, RS_GPU_PCIE_LINK, s->pcie_gen), "pcie_gen_max",
                                  int_if(s, RS_GPU_PCIE_LINK, s->pcie_gen_max), "pcie_width",
                                  int_if(s, RS_GPU_PCIE_LINK, s->pcie_width), "pcie_width_max",
                                  int_if(s, RS_GPU_PCIE_LINK, s->pcie_width_max), "pcie_replays",
                                  int_if(s, RS_GPU_PCIE_REPLAY, s->pcie_replays), "nvlink_up",
                                  int_if(s, RS_GPU_NVLINK, s->nvlink_up), "nvlink_errors",
                                  int_if(s, RS_GPU_NVLINK, s->nvlink_errors)));
    return j;
}

int
rs_gpu_default_window(rs_store_read *r, const char *job, double window_s, uint64_t *t0,
                      uint64_t *t1)
{
    struct rs_job_info info;
    int rc = rs_store_job_get(r, job, &info);

    if (rc != 0)
        return rc;
    uint64_t end = info.last_ns > info.received_ns ? info.last_ns : info.received_ns;
    uint64_t w = window_s > 0 ? (uint64_t)(window_s * 1e9) : 0;
    *t0 = end > w ? end - w : 0;
    *t1 = end + 60ull * 1000000000ull;
    return 0;
}

int
rs_query_gpus(rs_store_read *r, const char *job, uint64_t t0, uint64_t t1, double window_s,
              json_t **out)
{
    struct rs_gpu_summary *v;
    size_t n;
    int rc;

    if (t1 == 0 && (rc = rs_gpu_default_window(r, job, window_s, &t0, &t1)) != 0)
        return rc;
    if ((rc = summaries(r, job, t0, t1, true, &v, &n)) != 0)
        return rc;
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        if (json_array_append_new(list, rs_gpu_summary_json(&v[i])) != 0) {
            json_decref(list);
            list = NULL;
        }
    free(v);
    if (!list)
        return -ENOMEM;
    json_t *doc = json_pack("{s:s, s:{s:I, s:I}, s:o}", "job", job, "window", "since_ns",
                            (json_int_t)t0, "until_ns", (json_int_t)t1, "gpus", list);
    if (!doc)
        return -ENOMEM;
    *out = doc;
    return 0;
}
