/* The advisor's view of one rank (advice_int.h): its kernels, copies and host synchronizations of
 * the analysed steps on one timeline. Every GPU idle inside a step is given one cause: at the
 * step's start (before its first kernel or copy) the input pipeline; after a host synchronization
 * that ended where the idle began the synchronization; else the host's launch pace (NCCL kernels
 * count as GPU work: their exposed time is exposed_comm's). Per step it
 * also sums fp32 GEMM time, pageable copies, and the chains of elementwise kernels; per kind the
 * cost is the median over the steps (chains: their summed cost over the steps). */
#include "query/advice_int.h"

#include "common/array.h"
#include "common/hash.h"
#include "common/strtab.h"
#include "query/gpu_busy.h"
#include "query/stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NO_NAME UINT32_MAX

struct act {
    uint64_t start, end, bytes;
    uint32_t name; /* strtab id; NO_NAME for copies */
    uint32_t stream;
    uint8_t cls;  /* enum rs__advice_kclass */
    uint8_t copy; /* enum rs_copy_kind for copies */
};

struct step_tally {
    uint64_t start_gap, sync_gap, launch_gap;
    uint64_t fp32_ns, busy_ns, copy_excess_ns, slow_copy_ns, slow_bytes;
    uint32_t kernels, syncs, fp32_kernels, slow_copies, chains, chain_kernels;
    uint64_t chain_ns;
};

struct chain_sig {
    uint64_t hash;
    uint32_t count, len;
    uint64_t total_ns, cost_ns; /* summed over occurrences; cost: total minus the longest */
    size_t first;               /* index of its first kernel in acts, for the names */
};

struct rank_data {
    const struct rs_rank_steps *rk;
    uint64_t t0, t1;
    struct rs_strtab names;
    struct act *acts;
    size_t n_acts, cap_acts;
    uint64_t *sync_end; /* sorted */
    size_t n_syncs, cap_syncs;
    struct step_tally *tally;
    size_t n_valid; /* tallies of steps with kernels, moved to the front after the walk */
    struct chain_sig *sigs;
    size_t n_sigs, cap_sigs;
    uint64_t stall_total, stall_memory;
};

/* Its duration; 0 for an end before the start (the decoder refuses those; stored data is not
 * trusted to be ordered). */
static uint64_t
act_dur(const struct act *a)
{
    return a->end > a->start ? a->end - a->start : 0;
}

static int
on_kernel(void *arg, const struct rs_kernel_record *k, const char *name, uint64_t name_hash)
{
    struct rank_data *d = arg;
    (void)name_hash;
    if (k->start_ns < d->t0 || k->start_ns >= d->t1)
        return 0;
    uint32_t id = rs_strtab_intern(&d->names, name);
    if (id == RS_STRTAB_NONE || RS_ARRAY_RESERVE(d->acts, d->cap_acts, d->n_acts, 1) != 0)
        return -ENOMEM;
    d->acts[d->n_acts++] = (struct act){
        k->start_ns, k->end_ns, 0, id, k->stream, (uint8_t)rs__advice_kernel_class(name), 0};
    return 0;
}

static int
on_memcpy(void *arg, const struct rs_memcpy_record *m)
{
    struct rank_data *d = arg;
    if (m->start_ns < d->t0 || m->start_ns >= d->t1)
        return 0;
    if (rs_copy_kind_is_sync(m->kind)) {
        if (RS_ARRAY_RESERVE(d->sync_end, d->cap_syncs, d->n_syncs, 1) != 0)
            return -ENOMEM;
        d->sync_end[d->n_syncs++] = m->end_ns;
        return 0;
    }
    if (rs_copy_kind_is_host_side(m->kind))
        return 0; /* launch waits: the gaps measure them */
    if (RS_ARRAY_RESERVE(d->acts, d->cap_acts, d->n_acts, 1) != 0)
        return -ENOMEM;
    d->acts[d->n_acts++] = (struct act){m->start_ns, m->end_ns,          m->bytes,        NO_NAME,
                                        m->stream,   RS__ADVICE_K_OTHER, (uint8_t)m->kind};
    return 0;
}

/* NCCL kernels keep the GPU busy too (they are collective records, not kernel records). */
static int
on_collective(void *arg, uint32_t rank, const struct rs_collective_record *c)
{
    struct rank_data *d = arg;
    if (rank != d->rk->rank || c->start_ns < d->t0 || c->start_ns >= d->t1)
        return 0;
    if (RS_ARRAY_RESERVE(d->acts, d->cap_acts, d->n_acts, 1) != 0)
        return -ENOMEM;
    d->acts[d->n_acts++] = (struct act){c->start_ns,        c->end_ns,      0, NO_NAME, c->stream,
                                        RS__ADVICE_K_OTHER, RS_COPY_UNKNOWN};
    return 0;
}

static int
on_stall(void *arg, const struct rs_stall_record *s, uint64_t at_ns, const char *kernel,
         const char *reason)
{
    struct rank_data *d = arg;
    (void)at_ns;
    (void)kernel;
    d->stall_total += s->count;
    if (rs_gpu_stall_reason_is_memory(reason))
        d->stall_memory += s->count;
    return 0;
}

static int
by_act_start(const void *a, const void *b)
{
    uint64_t x = ((const struct act *)a)->start, y = ((const struct act *)b)->start;
    return x < y ? -1 : x > y;
}

static int
by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Whether a host synchronization ended in [from - TOL, to]. */
static bool
sync_ended(const struct rank_data *d, uint64_t from, uint64_t to)
{
    uint64_t lo = from > RS__ADVICE_SYNC_TOL_NS ? from - RS__ADVICE_SYNC_TOL_NS : 0;
    size_t a = 0, b = d->n_syncs;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (d->sync_end[m] < lo)
            a = m + 1;
        else
            b = m;
    }
    return a < d->n_syncs && d->sync_end[a] <= to;
}

/* A chain of elementwise kernels acts[first..first+len) ended: counted when long enough. */
static int
chain_end(struct rank_data *d, struct step_tally *t, size_t first, size_t len)
{
    if (len < RS__ADVICE_CHAIN_MIN)
        return 0;
    uint64_t h = 1469598103934665603ull, total = 0, longest = 0;
    for (size_t i = first; i < first + len; i++) {
        h = (h ^ d->acts[i].name) * 1099511628211ull;
        uint64_t dur = act_dur(&d->acts[i]);
        total += dur;
        longest = dur > longest ? dur : longest;
    }
    t->chains++;
    t->chain_kernels += (uint32_t)len;
    t->chain_ns += total;
    for (size_t i = 0; i < d->n_sigs; i++)
        if (d->sigs[i].hash == h && d->sigs[i].len == len) {
            d->sigs[i].count++;
            d->sigs[i].total_ns += total;
            d->sigs[i].cost_ns += total - longest;
            return 0;
        }
    if (RS_ARRAY_RESERVE(d->sigs, d->cap_sigs, d->n_sigs, 1) != 0)
        return -ENOMEM;
    d->sigs[d->n_sigs++] = (struct chain_sig){h, 1, (uint32_t)len, total, total - longest, first};
    return 0;
}

/* One walk over the timeline in start order, step by step. */
static int
walk(struct rank_data *d)
{
    const struct rs_rank_steps *rk = d->rk;
    size_t si = 0, chain_first = 0, chain_len = 0;
    uint64_t busy_end = 0;
    bool first_of_step = true;
    int rc;

    for (size_t i = 0; i < d->n_acts; i++) {
        const struct act *a = &d->acts[i];
        size_t was = si;
        while (si < rk->n && a->start >= rk->steps[si].end_ns)
            si++;
        if (si >= rk->n)
            break;
        if (a->start < rk->steps[si].start_ns)
            continue; /* between steps that do not touch (should not happen) */
        struct step_tally *t = &d->tally[si];
        if (si != was || i == 0) {
            if (chain_len && (rc = chain_end(d, &d->tally[was], chain_first, chain_len)) != 0)
                return rc;
            chain_len = 0;
            first_of_step = true;
        }
        uint64_t from = busy_end > rk->steps[si].start_ns ? busy_end : rk->steps[si].start_ns;
        if (first_of_step) {
            if (a->start > from)
                t->start_gap += a->start - from;
            first_of_step = false;
        } else if (a->start > busy_end) {
            uint64_t g = a->start - busy_end;
            if (sync_ended(d, busy_end, a->start))
                t->sync_gap += g;
            else
                t->launch_gap += g;
        }
        uint64_t dur = act_dur(a);
        uint64_t s0 = a->start > busy_end ? a->start : busy_end;
        if (a->end > s0)
            t->busy_ns += a->end - s0;
        busy_end = a->end > busy_end ? a->end : busy_end;
        /* chains: elementwise kernels back to back on one stream */
        bool ew = a->cls == RS__ADVICE_K_ELEMENTWISE;
        if (ew && chain_len && d->acts[chain_first + chain_len - 1].stream == a->stream &&
            chain_first + chain_len == i) {
            chain_len++;
        } else {
            if (chain_len && (rc = chain_end(d, t, chain_first, chain_len)) != 0)
                return rc;
            chain_len = ew ? 1 : 0;
            chain_first = i;
        }
        if (a->name == NO_NAME) {
            bool host_copy = a->copy == RS_COPY_HTOD || a->copy == RS_COPY_DTOH;
            double gbps = dur ? (double)a->bytes / (double)dur : 0; /* bytes per ns = GB/s */
            if (host_copy && a->bytes >= RS__ADVICE_COPY_MIN_BYTES &&
                gbps < RS__ADVICE_PAGEABLE_GBPS) {
                uint64_t pinned = (uint64_t)((double)a->bytes / RS__ADVICE_PINNED_GBPS);
                t->slow_copies++;
                t->slow_bytes += a->bytes;
                t->slow_copy_ns += dur;
                t->copy_excess_ns += dur > pinned ? dur - pinned : 0;
            }
            continue;
        }
        t->kernels++;
        if (a->cls == RS__ADVICE_K_GEMM_FP32) {
            t->fp32_ns += dur;
            t->fp32_kernels++;
        }
    }
    if (chain_len && si < rk->n)
        return chain_end(d, &d->tally[si], chain_first, chain_len);
    return 0;
}

/* The median over the steps with kernels of one tally field (scratch holds rk->n doubles). */
static double
median_of(const struct rank_data *d, size_t offset, bool count, double *scratch)
{
    size_t n = d->n_valid;
    for (size_t i = 0; i < n; i++) {
        const char *p = (const char *)&d->tally[i] + offset;
        scratch[i] = count ? (double)*(const uint32_t *)p : (double)*(const uint64_t *)p;
    }
    return rs_median(scratch, n);
}

#define MED_NS(field) median_of(d, offsetof(struct step_tally, field), false, scratch)
#define MED_N(field) median_of(d, offsetof(struct step_tally, field), true, scratch)

static void
set_names_from(struct rank_data *d, struct rs_advice_finding *f, size_t first, size_t len)
{
    f->n_names = 0;
    for (size_t i = first; i < first + len && f->n_names < RS_ADVICE_SEQUENCE; i++)
        rs__advice_short_name(d->names.strings[d->acts[i].name], f->names[f->n_names++],
                              RS_ADVICE_NAME_LEN);
}

/* Exposed communication, from the step metrics (kernels or their summaries). */
static void
exposed_comm(const struct rs_rank_steps *rk, struct rs_advice_finding *f, double *scratch)
{
    for (size_t i = 0; i < rk->n; i++)
        scratch[i] = (double)rk->steps[i].exposed_comm_ns;
    double exposed = rs_median(scratch, rk->n);
    for (size_t i = 0; i < rk->n; i++)
        scratch[i] = (double)rk->steps[i].comm_ns;
    f->cost_ns = (uint64_t)exposed;
    f->seen[0] = exposed / 1e6;
    f->seen[1] = rs_median(scratch, rk->n) / 1e6;
}

/* The timeline's findings, over the steps with kernels (n = d->n_valid >= 1). */
static void
findings(struct rank_data *d, struct rs_advice_finding *out, double *scratch)
{
    size_t n = d->n_valid;
    double step = (double)out[0].step_ns;
    double ms = 1e-6;

    /* input pipeline: idle at the step's start */
    size_t with_gap = 0;
    for (size_t i = 0; i < n; i++)
        with_gap += d->tally[i].start_gap > RS_ADVICE_MIN_COST_NS;
    double start_gap = MED_NS(start_gap);
    out[RS_ADVICE_INPUT].cost_ns = (uint64_t)start_gap;
    out[RS_ADVICE_INPUT].seen[0] = start_gap * ms;
    out[RS_ADVICE_INPUT].seen[1] = 100.0 * (double)with_gap / (double)n;

    /* host synchronizations: the idle after them */
    double sync_gap = MED_NS(sync_gap), syncs = MED_N(syncs);
    out[RS_ADVICE_HOST_SYNC].cost_ns = (uint64_t)sync_gap;
    out[RS_ADVICE_HOST_SYNC].seen[0] = syncs;
    out[RS_ADVICE_HOST_SYNC].seen[1] = sync_gap * ms;
    out[RS_ADVICE_HOST_SYNC].seen[2] = syncs > 0 ? sync_gap / syncs / 1e3 : 0;

    /* launch pace: the other idle between kernels */
    double launch = MED_NS(launch_gap), kernels = MED_N(kernels);
    size_t nk = 0; /* the median kernel duration */
    for (size_t i = 0; i < d->n_acts; i++)
        nk += d->acts[i].name != NO_NAME;
    double *durs = malloc((nk ? nk : 1) * sizeof *durs);
    double kernel_us = 0;
    if (durs) {
        size_t m = 0;
        for (size_t i = 0; i < d->n_acts; i++)
            if (d->acts[i].name != NO_NAME)
                durs[m++] = (double)act_dur(&d->acts[i]);
        kernel_us = rs_median(durs, m) / 1e3;
        free(durs);
    }
    out[RS_ADVICE_LAUNCH_BOUND].cost_ns = (uint64_t)launch;
    out[RS_ADVICE_LAUNCH_BOUND].seen[0] = launch * ms;
    out[RS_ADVICE_LAUNCH_BOUND].seen[1] = step > 0 ? 100.0 * launch / step : 0;
    out[RS_ADVICE_LAUNCH_BOUND].seen[2] = step > 0 ? kernels / (step * ms) : 0;
    out[RS_ADVICE_LAUNCH_BOUND].seen[3] = kernel_us;

    /* batch size: the idle a larger batch spreads over more samples (advice_batch.c scales it) */
    for (size_t i = 0; i < n; i++)
        scratch[i] = (double)(d->tally[i].launch_gap + d->tally[i].sync_gap);
    out[RS_ADVICE_BATCH_SIZE].cost_ns = (uint64_t)rs_median(scratch, n);

    /* pageable copies: their time above pinned bandwidth, and the launch idle of the steps they
     * block (the host cannot run ahead past a synchronous copy) */
    for (size_t i = 0; i < n; i++) {
        const struct step_tally *t = &d->tally[i];
        scratch[i] = t->slow_copies ? (double)(t->copy_excess_ns + t->launch_gap) : 0;
    }
    out[RS_ADVICE_PAGEABLE_COPY].cost_ns = (uint64_t)rs_median(scratch, n);
    double slow_ns = MED_NS(slow_copy_ns), slow_bytes = MED_NS(slow_bytes);
    out[RS_ADVICE_PAGEABLE_COPY].seen[0] = MED_N(slow_copies);
    out[RS_ADVICE_PAGEABLE_COPY].seen[1] = slow_bytes / 1e6;
    out[RS_ADVICE_PAGEABLE_COPY].seen[2] = slow_ns > 0 ? slow_bytes / slow_ns : 0;
    out[RS_ADVICE_PAGEABLE_COPY].seen[3] = slow_ns * ms;

    /* fp32 GEMMs: at best TF32/FP32 faster on tensor cores */
    double fp32 = MED_NS(fp32_ns), busy = MED_NS(busy_ns);
    out[RS_ADVICE_FP32_GEMM].cost_ns =
        (uint64_t)(fp32 * (1.0 - RS__ADVICE_FP32_TFLOPS / RS__ADVICE_TF32_TFLOPS));
    out[RS_ADVICE_FP32_GEMM].seen[0] = fp32 * ms;
    out[RS_ADVICE_FP32_GEMM].seen[1] = busy > 0 ? 100.0 * fp32 / busy : 0;
    out[RS_ADVICE_FP32_GEMM].seen[2] = MED_N(fp32_kernels);
    for (size_t i = 0; i < d->n_acts; i++) /* an example */
        if (d->acts[i].cls == RS__ADVICE_K_GEMM_FP32) {
            const char *nm = d->names.strings[d->acts[i].name];
            size_t len = strlen(nm) < RS_ADVICE_NAME_LEN - 1 ? strlen(nm) : RS_ADVICE_NAME_LEN - 1;
            while (len > 0 && ((unsigned char)nm[len] & 0xC0) == 0x80)
                len--;
            memcpy(out[RS_ADVICE_FP32_GEMM].names[0], nm, len);
            out[RS_ADVICE_FP32_GEMM].names[0][len] = '\0';
            out[RS_ADVICE_FP32_GEMM].n_names = 1;
            break;
        }

    /* elementwise chains seen in most steps: all but the longest kernel of each would go */
    uint64_t cost = 0, ns = 0;
    uint32_t chains = 0, in_chains = 0;
    const struct chain_sig *worst = NULL;
    for (size_t i = 0; i < d->n_sigs; i++) {
        const struct chain_sig *s = &d->sigs[i];
        if ((double)s->count < RS__ADVICE_CHAIN_EVERY * (double)n)
            continue;
        cost += s->cost_ns;
        ns += s->total_ns;
        chains += s->count;
        in_chains += s->count * s->len;
        if (!worst || s->cost_ns > worst->cost_ns)
            worst = s;
    }
    out[RS_ADVICE_UNFUSED].cost_ns = cost / n;
    out[RS_ADVICE_UNFUSED].seen[0] = (double)chains / (double)n;
    out[RS_ADVICE_UNFUSED].seen[1] = (double)in_chains / (double)n;
    out[RS_ADVICE_UNFUSED].seen[2] = (double)ns / (double)n * ms;
    if (worst)
        set_names_from(d, &out[RS_ADVICE_UNFUSED], worst->first, worst->len);

    /* memory-bound: the share of PC samples stalled on memory, of the GPU's busy time */
    if (d->stall_total > 0) {
        double share = (double)d->stall_memory / (double)d->stall_total;
        out[RS_ADVICE_MEMORY_BOUND].cost_ns = share >= 0.5 ? (uint64_t)(busy * (share - 0.5)) : 0;
        out[RS_ADVICE_MEMORY_BOUND].seen[0] = 100.0 * share;
        out[RS_ADVICE_MEMORY_BOUND].seen[1] = busy * ms;
        out[RS_ADVICE_MEMORY_BOUND].seen[2] = (double)d->stall_total;
    }
}

int
rs__advice_rank(rs_store_read *r, const char *job, const struct rs_rank_steps *rk,
                struct rs_advice_finding out[RS_ADVICE_KIND_COUNT], bool *stalls_seen,
                bool *no_kernels)
{
    struct rank_data d = {.rk = rk};
    double *scratch = NULL;
    int rc = 0;

    for (int k = 0; k < RS_ADVICE_KIND_COUNT; k++)
        out[k] = (struct rs_advice_finding){.kind = (enum rs_advice_kind)k, .rank = rk->rank};
    if (rk->n == 0)
        return 0;
    d.t0 = rk->steps[0].start_ns;
    d.t1 = rk->steps[rk->n - 1].end_ns;
    rs_strtab_init(&d.names);
    if ((rc = rs_store_kernels_scan(r, job, rk->rank, rs_store_kernel_scan_from(d.t0), d.t1,
                                    on_kernel, &d)) != 0 ||
        (rc = rs_store_memcpys_scan(r, job, rk->rank, rs_store_kernel_scan_from(d.t0), d.t1,
                                    on_memcpy, &d)) != 0 ||
        (rc = rs_store_collectives_scan_range(r, job, d.t0, d.t1, on_collective, &d)) != 0 ||
        (rc = rs_store_stalls_scan(r, job, rk->rank,
                                   d.t1 > RS__ADVICE_STALL_SPAN_NS ? d.t1 - RS__ADVICE_STALL_SPAN_NS
                                                                   : 0,
                                   d.t1 + RS__ADVICE_STALL_LAG_NS, on_stall, &d)) != 0)
        goto out;
    rc = -ENOMEM;
    if (!(d.tally = calloc(rk->n, sizeof *d.tally)) ||
        !(scratch = malloc((rk->n + d.n_acts + 1) * sizeof *scratch)))
        goto out;
    if (d.n_acts) /* qsort's array may not be NULL, even empty */
        qsort(d.acts, d.n_acts, sizeof *d.acts, by_act_start);
    if (d.n_syncs)
        qsort(d.sync_end, d.n_syncs, sizeof *d.sync_end, by_u64);
    for (size_t i = 0, si = 0; i < d.n_syncs; i++) { /* syncs per step, by their end */
        while (si < rk->n && d.sync_end[i] >= rk->steps[si].end_ns)
            si++;
        if (si < rk->n && d.sync_end[i] >= rk->steps[si].start_ns)
            d.tally[si].syncs++;
    }
    if ((rc = walk(&d)) != 0)
        goto out;
    for (size_t i = 0; i < rk->n; i++)
        scratch[i] = (double)(rk->steps[i].end_ns - rk->steps[i].start_ns);
    uint64_t step = (uint64_t)rs_median(scratch, rk->n);
    for (int k = 0; k < RS_ADVICE_KIND_COUNT; k++)
        out[k] = (struct rs_advice_finding){
            .kind = (enum rs_advice_kind)k, .rank = rk->rank, .step_ns = step};
    exposed_comm(rk, &out[RS_ADVICE_EXPOSED_COMM], scratch);
    /* steps without kernel records (an agent that summarizes, records rolled up) say nothing
     * about idle: left out; a rank with none of them gets no timeline findings */
    for (size_t i = 0; i < rk->n; i++)
        if (d.tally[i].kernels > 0)
            d.tally[d.n_valid++] = d.tally[i];
    if (d.n_valid > 0)
        findings(&d, out, scratch);
    else
        *no_kernels = true;
    *stalls_seen |= d.stall_total > 0;
    rc = 0;
out:
    free(scratch);
    free(d.tally);
    free(d.acts);
    free(d.sync_end);
    free(d.sigs);
    rs_strtab_fini(&d.names);
    return rc;
}
