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

/* Running sums of one rank's readings. */
struct acc {
    struct rs_gpu_summary *s;
    size_t n_clock, n_mem_clock, n_reasons, n_power, n_temp, n_util, n_mem;
    size_t reason_hits[RS_GPU_THROTTLE_COUNT];
    double sm, sm_max, mem, mem_max, power, limit, temp, util, mutil;
    bool first_viol, first_ecc, first_replay, first_nvlink;
    struct rs_gpu_sample v0, e0, r0, n0; /* first reading with violations, ECC, replays, NVLink */
    uint64_t viol_power, viol_thermal;   /* summed growth, clamped per interval */
    struct rs_gpu_sample vprev;          /* the previous reading with violations */
};

static uint64_t
clamp_delta(uint64_t d, uint64_t elapsed)
{
    /* a counter that went back (driver reloaded) wraps to a huge growth: none counted */
    return d > elapsed ? 0 : d;
}

static int
add_reading(void *arg, const struct rs_gpu_sample *g)
{
    struct acc *a = arg;
    struct rs_gpu_summary *s = a->s;

    if (s->samples == 0)
        s->first_ns = g->time_ns;
    s->samples++;
    s->last_ns = g->time_ns;
    s->present |= g->present;
    if (g->present & RS_GPU_SM_CLOCK)
        a->sm += g->sm_clock_mhz, a->n_clock++;
    if (g->present & RS_GPU_SM_CLOCK_MAX)
        s->sm_max_mhz = g->sm_clock_max_mhz;
    if (g->present & RS_GPU_MEM_CLOCK)
        a->mem += g->mem_clock_mhz, a->n_mem_clock++;
    if (g->present & RS_GPU_MEM_CLOCK_MAX)
        s->mem_max_mhz = g->mem_clock_max_mhz;
    if (g->present & RS_GPU_CLOCK_REASONS) {
        a->n_reasons++;
        for (int t = 0; t < RS_GPU_THROTTLE_COUNT; t++)
            a->reason_hits[t] += (g->clock_reasons & throttles[t].bit) != 0;
    }
    if (g->present & RS_GPU_VIOLATIONS) {
        if (a->first_viol) {
            uint64_t elapsed = g->time_ns > a->vprev.time_ns ? g->time_ns - a->vprev.time_ns : 0;
            a->viol_power += clamp_delta(
                rs_gpu_violation_delta_ns(a->vprev.power_violation_ns, g->power_violation_ns),
                elapsed + 1000000u);
            a->viol_thermal += clamp_delta(
                rs_gpu_violation_delta_ns(a->vprev.thermal_violation_ns, g->thermal_violation_ns),
                elapsed + 1000000u);
        } else {
            a->v0 = *g;
            a->first_viol = true;
        }
        a->vprev = *g;
    }
    if (g->present & RS_GPU_POWER)
        a->power += g->power_mw / 1000.0, a->n_power++;
    if (g->present & RS_GPU_POWER_LIMIT)
        s->power_limit_w = g->power_limit_mw / 1000.0;
    if (g->present & RS_GPU_TEMPERATURE) {
        a->temp += g->temperature_c, a->n_temp++;
        if (g->temperature_c > s->temperature_max_c)
            s->temperature_max_c = g->temperature_c;
    }
    if (g->present & RS_GPU_UTILIZATION)
        a->util += g->util_gpu_pct, a->mutil += g->util_mem_pct, a->n_util++;
    if (g->present & RS_GPU_MEMORY) {
        double used = (double)(g->mem_used_bytes >> 20);
        if (used > s->mem_used_mib)
            s->mem_used_mib = used;
        s->mem_total_mib = (double)(g->mem_total_bytes >> 20);
    }
    if (g->present & RS_GPU_ECC) {
        if (!a->first_ecc)
            a->e0 = *g, a->first_ecc = true;
        s->ecc_corrected_total = g->ecc_corrected;
        s->ecc_uncorrected_total = g->ecc_uncorrected;
        s->ecc_corrected =
            g->ecc_corrected >= a->e0.ecc_corrected ? g->ecc_corrected - a->e0.ecc_corrected : 0;
        s->ecc_uncorrected = g->ecc_uncorrected >= a->e0.ecc_uncorrected
                                 ? g->ecc_uncorrected - a->e0.ecc_uncorrected
                                 : 0;
    }
    if (g->present & RS_GPU_REMAPPED) {
        s->remapped_correctable = g->remapped_correctable;
        s->remapped_uncorrectable = g->remapped_uncorrectable;
        s->remap_pending |= g->remap_pending;
        s->remap_failed |= g->remap_failed;
    }
    if (g->present & RS_GPU_XID) {
        s->xids += g->xid_count;
        if (g->xid_count)
            s->last_xid = g->last_xid;
    }
    if (g->present & RS_GPU_PCIE_LINK) {
        if (!(s->present & RS_GPU_PCIE_LINK) || s->pcie_width == 0 || g->pcie_gen < s->pcie_gen)
            s->pcie_gen = g->pcie_gen;
        if (s->pcie_width == 0 || g->pcie_width < s->pcie_width)
            s->pcie_width = g->pcie_width;
        s->pcie_gen_max = g->pcie_gen_max;
        s->pcie_width_max = g->pcie_width_max;
    }
    if (g->present & RS_GPU_PCIE_REPLAY) {
        if (!a->first_replay)
            a->r0 = *g, a->first_replay = true;
        s->pcie_replays =
            g->pcie_replay >= a->r0.pcie_replay ? g->pcie_replay - a->r0.pcie_replay : 0;
    }
    if (g->present & RS_GPU_NVLINK) {
        if (!a->first_nvlink) {
            a->n0 = *g, a->first_nvlink = true;
            s->nvlink_up = g->nvlink_up;
        }
        if (g->nvlink_up < s->nvlink_up)
            s->nvlink_up = g->nvlink_up;
        s->nvlink_errors =
            g->nvlink_errors >= a->n0.nvlink_errors ? g->nvlink_errors - a->n0.nvlink_errors : 0;
    }
    return 0;
}

static void
finish(struct acc *a)
{
    struct rs_gpu_summary *s = a->s;

    s->sm_mhz = a->n_clock ? a->sm / (double)a->n_clock : 0;
    s->mem_mhz = a->n_mem_clock ? a->mem / (double)a->n_mem_clock : 0;
    for (int t = 0; t < RS_GPU_THROTTLE_COUNT; t++)
        s->throttle_share[t] = a->n_reasons ? (double)a->reason_hits[t] / (double)a->n_reasons : 0;
    uint64_t span = a->first_viol ? a->vprev.time_ns - a->v0.time_ns : 0;
    if (span > 0) {
        s->has_violation_share = true;
        s->power_violation_share = (double)a->viol_power / (double)span;
        s->thermal_violation_share = (double)a->viol_thermal / (double)span;
        if (s->power_violation_share > 1)
            s->power_violation_share = 1;
        if (s->thermal_violation_share > 1)
            s->thermal_violation_share = 1;
    }
    s->power_w = a->n_power ? a->power / (double)a->n_power : 0;
    s->temperature_c = a->n_temp ? a->temp / (double)a->n_temp : 0;
    s->util_gpu_pct = a->n_util ? a->util / (double)a->n_util : 0;
    s->util_mem_pct = a->n_util ? a->mutil / (double)a->n_util : 0;
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
        struct acc *a = calloc(1, sizeof *a);
        if (!a) {
            rc = -ENOMEM;
            break;
        }
        a->s = &v[i];
        v[i].rank = ranks[i].rank;
        memcpy(v[i].host, ranks[i].host, sizeof v[i].host);
        memcpy(v[i].gpu_uuid, ranks[i].gpu_uuid, sizeof v[i].gpu_uuid);
        rc = rs_store_gpu_scan(r, job, ranks[i].rank, t0, t1, add_reading, a);
        finish(a);
        free(a);
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
