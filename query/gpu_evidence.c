/* Hardware evidence: a straggler's GPU against its peers' (see gpu_evidence.h). */
#include "query/gpu_evidence.h"

#include "query/gpus.h"

#include "common/error.h"

#include <errno.h>
#include <math.h>
#include "common/grouped.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How far from the peers a figure must be to count (docs/analysis.md "Hardware evidence"). */
#define CLOCK_BELOW 0.97  /* mean SM clock under 97% of the peers' median */
#define SHARE_ABOVE 0.10  /* a throttle reason 10 points of the window more than the peers' */
#define NVLINK_ERRORS 100 /* link errors more than the peers' median in the window */

static const char *const kind_names[] = {"sm_clock", "throttle", "ecc", "xid", "pcie", "nvlink"};

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of f over the peers of `self` (summaries with readings); 0 when none. */
static double
peers_median(const struct rs_gpu_summary *v, size_t n, size_t self, double *buf,
             double (*f)(const struct rs_gpu_summary *))
{
    size_t m = 0;

    for (size_t i = 0; i < n; i++)
        if (i != self && v[i].samples > 0)
            buf[m++] = f(&v[i]);
    if (m == 0)
        return 0;
    qsort(buf, m, sizeof *buf, cmp_double);
    return m % 2 ? buf[m / 2] : (buf[m / 2 - 1] + buf[m / 2]) / 2;
}

static double
f_sm(const struct rs_gpu_summary *s)
{
    return s->sm_mhz;
}
/* The share of the window a reason held the clocks: NVML's violation counters where the GPU has
 * them (power cap, thermal), else the share of readings with the reason bit. */
static double
share_of(const struct rs_gpu_summary *s, int t)
{
    if (s->has_violation_share && t == RS_GPU_THROTTLE_POWER_CAP)
        return s->power_violation_share;
    if (s->has_violation_share && t == RS_GPU_THROTTLE_SW_THERMAL)
        return s->thermal_violation_share;
    return s->throttle_share[t];
}
#define SHARE_FN(t)                                                                                \
    static double f_share_##t(const struct rs_gpu_summary *s)                                      \
    {                                                                                              \
        return share_of(s, t);                                                                     \
    }
SHARE_FN(0)
SHARE_FN(1)
SHARE_FN(2)
SHARE_FN(3)
SHARE_FN(4)
SHARE_FN(5)
static double (*const f_share[RS_GPU_THROTTLE_COUNT])(const struct rs_gpu_summary *) = {
    f_share_0, f_share_1, f_share_2, f_share_3, f_share_4, f_share_5};
_Static_assert(RS_GPU_THROTTLE_COUNT == 6, "one share function per reason");
static double
f_ecc_u(const struct rs_gpu_summary *s)
{
    return (double)s->ecc_uncorrected;
}
static double
f_xids(const struct rs_gpu_summary *s)
{
    return (double)s->xids;
}
static double
f_width(const struct rs_gpu_summary *s)
{
    return s->pcie_width;
}
static double
f_gen(const struct rs_gpu_summary *s)
{
    return s->pcie_gen;
}
static double
f_nvlink_up(const struct rs_gpu_summary *s)
{
    return s->nvlink_up;
}
static double
f_nvlink_err(const struct rs_gpu_summary *s)
{
    return (double)s->nvlink_errors;
}

static struct rs_gpu_evidence_item *
add(struct rs_gpu_evidence *e, enum rs_gpu_evidence_kind kind, const char *what, double value,
    double peers)
{
    if (e->n == RS_GPU_EVIDENCE_MAX)
        return NULL;
    struct rs_gpu_evidence_item *it = &e->items[e->n++];
    it->kind = kind;
    snprintf(it->what, sizeof it->what, "%s", what);
    it->value = value;
    it->peers = peers;
    return it;
}

static const char *const reason_text[RS_GPU_THROTTLE_COUNT] = {
    "power cap",           "HW slowdown", "SW thermal slowdown",
    "HW thermal slowdown", "power brake", "sync boost"};

static void
compare(const struct rs_gpu_summary *v, size_t n, size_t self, double *buf,
        struct rs_gpu_evidence *e)
{
    const struct rs_gpu_summary *s = &v[self];
    struct rs_gpu_evidence_item *it;
    char a[32], b[32];
    double p;

    if ((s->present & RS_GPU_SM_CLOCK) && (p = peers_median(v, n, self, buf, f_sm)) > 0 &&
        s->sm_mhz < CLOCK_BELOW * p && (it = add(e, RS_GPU_EV_SM_CLOCK, "sm_mhz", s->sm_mhz, p)))
        snprintf(it->text, sizeof it->text, "SM clock %s MHz vs peers' %s",
                 rs_grouped(s->sm_mhz, a, 32), rs_grouped(p, b, 32));
    for (int t = 0; t < RS_GPU_THROTTLE_COUNT; t++) {
        if (!(s->present & (RS_GPU_CLOCK_REASONS | RS_GPU_VIOLATIONS)))
            break;
        double mine = share_of(s, t);
        p = peers_median(v, n, self, buf, f_share[t]);
        if (mine - p >= SHARE_ABOVE &&
            (it = add(e, RS_GPU_EV_THROTTLE, rs_gpu_throttle_name(t), mine, p)))
            snprintf(it->text, sizeof it->text, "%s active %.0f%% of the window (peers' %.0f%%)",
                     reason_text[t], 100 * mine, 100 * p);
    }
    if ((s->present & RS_GPU_ECC) && s->ecc_uncorrected > 0 &&
        (p = peers_median(v, n, self, buf, f_ecc_u)) < (double)s->ecc_uncorrected &&
        (it = add(e, RS_GPU_EV_ECC, "ecc_uncorrected", (double)s->ecc_uncorrected, p)))
        snprintf(it->text, sizeof it->text,
                 "%llu uncorrected ECC errors in the window (peers' %.0f)",
                 (unsigned long long)s->ecc_uncorrected, p);
    if ((s->remap_pending || s->remap_failed) &&
        (it = add(e, RS_GPU_EV_ECC, s->remap_failed ? "remap_failed" : "remap_pending", 1, 0)))
        snprintf(it->text, sizeof it->text, "row remapping %s (%u uncorrectable rows remapped)",
                 s->remap_failed ? "failed" : "pending a reset", s->remapped_uncorrectable);
    if ((s->present & RS_GPU_XID) && s->xids > 0 &&
        (p = peers_median(v, n, self, buf, f_xids)) < (double)s->xids &&
        (it = add(e, RS_GPU_EV_XID, "xids", (double)s->xids, p)))
        snprintf(it->text, sizeof it->text, "XID %u (%llu event%s in the window; peers' %.0f)",
                 s->last_xid, (unsigned long long)s->xids, s->xids == 1 ? "" : "s", p);
    if ((s->present & RS_GPU_PCIE_LINK) && s->pcie_width < s->pcie_width_max &&
        (p = peers_median(v, n, self, buf, f_width)) > s->pcie_width &&
        (it = add(e, RS_GPU_EV_PCIE, "pcie_width", s->pcie_width, p)))
        snprintf(it->text, sizeof it->text, "PCIe link x%u of x%u (peers' x%.0f)", s->pcie_width,
                 s->pcie_width_max, p);
    if ((s->present & RS_GPU_PCIE_LINK) && s->pcie_gen < s->pcie_gen_max &&
        (p = peers_median(v, n, self, buf, f_gen)) > s->pcie_gen &&
        (it = add(e, RS_GPU_EV_PCIE, "pcie_gen", s->pcie_gen, p)))
        snprintf(it->text, sizeof it->text, "PCIe gen %u of %u (peers' %.0f)", s->pcie_gen,
                 s->pcie_gen_max, p);
    if ((s->present & RS_GPU_NVLINK) && (p = peers_median(v, n, self, buf, f_nvlink_up)) > 0 &&
        s->nvlink_up < p && (it = add(e, RS_GPU_EV_NVLINK, "nvlink_up", s->nvlink_up, p)))
        snprintf(it->text, sizeof it->text, "%u NVLinks up (peers' %.0f)", s->nvlink_up, p);
    if ((s->present & RS_GPU_NVLINK) &&
        (double)s->nvlink_errors >
            (p = peers_median(v, n, self, buf, f_nvlink_err)) + NVLINK_ERRORS &&
        (it = add(e, RS_GPU_EV_NVLINK, "nvlink_errors", (double)s->nvlink_errors, p)))
        snprintf(it->text, sizeof it->text, "%llu NVLink errors in the window (peers' %.0f)",
                 (unsigned long long)s->nvlink_errors, p);
}

/* What to do about the items found, strongest first. */
static void
recommend(struct rs_gpu_evidence *e)
{
    bool errors = false, links = false, clocks = false;

    for (size_t i = 0; i < e->n; i++) {
        errors |= e->items[i].kind == RS_GPU_EV_ECC || e->items[i].kind == RS_GPU_EV_XID;
        links |= e->items[i].kind == RS_GPU_EV_PCIE || e->items[i].kind == RS_GPU_EV_NVLINK;
        clocks |= e->items[i].kind == RS_GPU_EV_SM_CLOCK || e->items[i].kind == RS_GPU_EV_THROTTLE;
    }
    e->recommendation[0] = '\0';
    if (errors)
        snprintf(e->recommendation, sizeof e->recommendation,
                 "drain the node and run the GPU's diagnostics (dcgmi diag -r 3): it reports "
                 "errors its peers do not");
    else if (links)
        snprintf(e->recommendation, sizeof e->recommendation,
                 "check the GPU's links (seating, riser, switch port): they train below its "
                 "peers'");
    else if (clocks)
        snprintf(e->recommendation, sizeof e->recommendation,
                 "check the GPU's power and cooling (power limit, fans, airflow): its clocks are "
                 "held below its peers'");
}

int
rs_gpu_evidence_for_ranks(rs_store_read *r, const char *job, const uint32_t *ranks, size_t n,
                          uint64_t t0, uint64_t t1, struct rs_gpu_evidence *out)
{
    struct rs_gpu_summary *v = NULL;
    size_t nv = 0;
    int rc;

    for (size_t i = 0; i < n; i++)
        memset(&out[i], 0, sizeof out[i]);
    if (n == 0)
        return 0;
    rc = rs_gpu_summaries(r, job, t0, t1, &v, &nv);
    if (rc == RS_E_NOT_FOUND)
        return 0;
    if (rc != 0)
        return rc;
    double *buf = calloc(nv ? nv : 1, sizeof *buf);
    if (!buf) {
        free(v);
        return -ENOMEM;
    }
    size_t with = 0;
    for (size_t j = 0; j < nv; j++)
        with += v[j].samples > 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < nv; j++) {
            if (v[j].rank != ranks[i] || v[j].samples == 0)
                continue;
            out[i].telemetry = true;
            out[i].peers_with_telemetry = with - 1;
            compare(v, nv, j, buf, &out[i]);
            recommend(&out[i]);
        }
    free(buf);
    free(v);
    return 0;
}

int
rs_gpu_evidence_for(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
                    struct rs_gpu_evidence *out)
{
    return rs_gpu_evidence_for_ranks(r, job, &rank, 1, t0, t1, out);
}

json_t *
rs_gpu_evidence_json(const struct rs_gpu_evidence *e)
{
    json_t *items = json_array();

    for (size_t i = 0; items && i < e->n; i++) {
        const struct rs_gpu_evidence_item *it = &e->items[i];
        if (json_array_append_new(items, json_pack("{s:s, s:s, s:f, s:f, s:s}", "kind",
                                                   kind_names[it->kind], "what", it->what, "value",
                                                   it->value, "peers", it->peers, "text",
                                                   it->text)) != 0) {
            json_decref(items);
            return NULL;
        }
    }
    if (!items)
        return NULL;
    return json_pack("{s:b, s:I, s:o, s:o}", "telemetry", e->telemetry, "peers_with_telemetry",
                     (json_int_t)e->peers_with_telemetry, "items", items, "recommendation",
                     e->recommendation[0] ? json_string(e->recommendation) : json_null());
}
