/* The rank x step heatmap (heatmap.h): steps binned into columns, per-column median and slowest
 * rank, for the dashboard's job overview. */
#include "query/heatmap.h"
#include "query/heatmap_int.h"

#include "common/array.h"
#include "query/stats.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_names[RS_HEATMAP_METRICS] = {
    "step_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "idle_ms", "host_gap_ms"};

int
rs_heatmap_metric_of(const char *name)
{
    for (int m = 0; m < RS_HEATMAP_METRICS; m++)
        if (strcmp(name, metric_names[m]) == 0)
            return m;
    return -1;
}

const char *
rs_heatmap_metric_name(int m)
{
    return metric_names[m];
}

static uint64_t
metric_ns(const struct rs_step_summary *s, int m)
{
    switch (m) {
    case RS_HEATMAP_COMPUTE:
        return s->compute_ns;
    case RS_HEATMAP_COMM:
        return s->comm_ns;
    case RS_HEATMAP_EXPOSED_COMM:
        return s->exposed_comm_ns;
    case RS_HEATMAP_IDLE:
        return s->idle_ns;
    case RS_HEATMAP_HOST_GAP:
        return s->host_gap_ns;
    default:
        return s->step_ns;
    }
}

/* One cell's sums while binning: a rank's metric sum and count in a column. */
struct cell {
    double sum_ms;
    uint32_t n;
};

/* The grid being filled: columns of `per` consecutive steps from `lo` to `hi`, per rank; the
 * first column may begin before the lowest step, `shown_lo` (columns aligned on cached bins). */
struct bins {
    uint64_t lo, hi, per, shown_lo;
    size_t n_cols, n_ranks;
    struct cell *cells; /* rank-major: cells[i * n_cols + c] */
    uint64_t *col_start; /* the earliest step start in each column (UINT64_MAX: none yet) */
};

static void
bins_fini(struct bins *b)
{
    free(b->cells);
    free(b->col_start);
    memset(b, 0, sizeof *b);
}

/* An empty grid over steps lo..hi (none when lo > hi) in at most `columns` columns; with `align`
 * (a power of two) > 1, every column begins at a multiple of it and spans a multiple of it. */
static int
bins_init(struct bins *b, uint64_t lo, uint64_t hi, size_t columns, uint64_t align, size_t n_ranks)
{
    memset(b, 0, sizeof *b);
    b->shown_lo = lo;
    if (lo <= hi && align > 1)
        lo -= lo % align;
    uint64_t span = lo <= hi ? hi - lo + 1 : 0;
    b->lo = lo;
    b->hi = hi;
    if (align > 1 && span) {
        uint64_t units = (hi - lo) / align + 1;
        b->per = align * ((units + columns - 1) / columns);
    } else {
        b->per = span ? (span + columns - 1) / columns : 1;
    }
    if (span && b->per == 0) /* span 2^64 (steps 0..UINT64_MAX): one column */
        b->per = UINT64_MAX;
    b->n_cols = span ? (size_t)((span - 1) / b->per + 1) : 0;
    b->n_ranks = n_ranks;
    b->cells = calloc(b->n_cols * n_ranks > 0 ? b->n_cols * n_ranks : 1, sizeof *b->cells);
    b->col_start = malloc((b->n_cols ? b->n_cols : 1) * sizeof *b->col_start);
    if (!b->cells || !b->col_start) {
        bins_fini(b);
        return -ENOMEM;
    }
    for (size_t c = 0; c < b->n_cols; c++)
        b->col_start[c] = UINT64_MAX;
    return 0;
}

/* Adds one step of rank i (outside lo..hi: ignored). */
static void
bins_add(struct bins *b, size_t i, uint64_t step, uint64_t start_ns, uint64_t value_ns)
{
    if (step < b->lo || step > b->hi || !b->n_cols)
        return;
    size_t c = (size_t)((step - b->lo) / b->per);
    b->cells[i * b->n_cols + c].sum_ms += (double)value_ns / 1e6;
    b->cells[i * b->n_cols + c].n++;
    if (start_ns < b->col_start[c])
        b->col_start[c] = start_ns;
}

/* Adds a cached bin of rank i: `count` steps from `step` on (within one column) summing sum_ms. */
static void
bins_add_sum(struct bins *b, size_t i, uint64_t step, double sum_ms, uint32_t count,
             uint64_t start_ns)
{
    if (!count || step < b->lo || step > b->hi || !b->n_cols)
        return;
    size_t c = (size_t)((step - b->lo) / b->per);
    b->cells[i * b->n_cols + c].sum_ms += sum_ms;
    b->cells[i * b->n_cols + c].n += count;
    if (start_ns < b->col_start[c])
        b->col_start[c] = start_ns;
}

/* A cell's mean, rounded to the microsecond (enough for a colour and a tooltip; the answer of a
 * 1,024-rank job is ~200,000 of these numbers). */
static double
cell_ms(const struct cell *x)
{
    return round(x->sum_ms / x->n * 1000.0) / 1000.0;
}

static json_t *
number_or_null(double v, bool has)
{
    return has ? json_real(v) : json_null();
}

/* The answer's shape (heatmap.h) from a filled grid; rank_of(arg, i) names row i. */
static json_t *
bins_json(const struct bins *b, const char *job, int metric, const char *source,
          uint32_t (*rank_of)(const void *arg, size_t i), const void *arg)
{
    double *col_values = calloc(b->n_ranks ? b->n_ranks : 1, sizeof *col_values);
    json_t *out = NULL, *cols = json_array(), *rank_list = json_array(), *values = json_array();

    if (!col_values || !cols || !rank_list || !values)
        goto fail;
    for (size_t i = 0; i < b->n_ranks; i++) {
        json_t *row = json_array();
        if (!row || json_array_append_new(values, row) != 0 ||
            json_array_append_new(rank_list, json_integer((json_int_t)rank_of(arg, i))) != 0)
            goto fail;
        for (size_t c = 0; c < b->n_cols; c++) {
            const struct cell *x = &b->cells[i * b->n_cols + c];
            if (json_array_append_new(row, number_or_null(x->n ? cell_ms(x) : 0, x->n)))
                goto fail;
        }
    }
    for (size_t c = 0; c < b->n_cols; c++) {
        size_t n = 0, slowest = 0;
        double max = 0;
        for (size_t i = 0; i < b->n_ranks; i++) {
            const struct cell *x = &b->cells[i * b->n_cols + c];
            if (!x->n)
                continue;
            col_values[n] = cell_ms(x);
            if (n == 0 || col_values[n] > max) {
                slowest = i;
                max = col_values[n];
            }
            n++;
        }
        double median = n ? rs_quantile(col_values, n, 0.5) : 0;
        uint64_t col_lo = b->lo + c * b->per;
        uint64_t first = col_lo < b->shown_lo ? b->shown_lo : col_lo;
        uint64_t last = b->hi - col_lo >= b->per - 1 ? col_lo + b->per - 1 : b->hi;
        json_t *col = json_pack(
            "{s:I, s:I, s:o, s:o, s:o, s:o}", "first_step", (json_int_t)first, "last_step",
            (json_int_t)last, "start_ns", n ? json_integer((json_int_t)b->col_start[c]) : json_null(),
            "median_ms", number_or_null(median, n), "max_ms", number_or_null(max, n), "max_rank",
            n ? json_integer((json_int_t)rank_of(arg, slowest)) : json_null());
        if (!col || json_array_append_new(cols, col) != 0)
            goto fail;
    }
    out = json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:o, s:o, s:o}", "job", job, "metric",
                    metric_names[metric], "steps_source", source, "first_step",
                    b->n_cols ? json_integer((json_int_t)b->shown_lo) : json_null(), "last_step",
                    b->n_cols ? json_integer((json_int_t)b->hi) : json_null(), "steps_per_column",
                    (json_int_t)b->per, "columns", cols, "ranks", rank_list, "values", values);
    cols = rank_list = values = NULL;
fail:
    json_decref(cols);
    json_decref(rank_list);
    json_decref(values);
    free(col_values);
    return out;
}

static uint32_t
loaded_rank(const void *arg, size_t i)
{
    return ((const struct rs_rank_steps *)arg)[i].rank;
}

/* Lowest and highest step of the loaded steps within from..to (*lo > *hi when none). */
static void
loaded_span(const struct rs_rank_steps *ranks, size_t n_ranks, uint64_t from, uint64_t to,
            uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (size_t i = 0; i < n_ranks; i++)
        for (size_t k = 0; k < ranks[i].n; k++) {
            uint64_t s = ranks[i].steps[k].step;
            if (s < from || s > to)
                continue;
            *lo = s < *lo ? s : *lo;
            *hi = s > *hi ? s : *hi;
        }
    if (*lo > *hi) {
        *lo = 1;
        *hi = 0;
    }
}

static void
bins_add_loaded(struct bins *b, const struct rs_rank_steps *ranks, size_t n_ranks, int metric)
{
    for (size_t i = 0; i < n_ranks; i++)
        for (size_t k = 0; k < ranks[i].n; k++) {
            const struct rs_step_summary *s = &ranks[i].steps[k];
            bins_add(b, i, s->step, s->start_ns, metric_ns(s, metric));
        }
}

json_t *
rs_heatmap_json(const char *job, const struct rs_rank_steps *ranks, size_t n_ranks, int metric,
                size_t columns)
{
    struct bins b;
    uint64_t lo, hi;
    json_t *out;

    loaded_span(ranks, n_ranks, 0, UINT64_MAX, &lo, &hi);
    if (bins_init(&b, lo, hi, columns, 1, n_ranks) != 0)
        return NULL;
    bins_add_loaded(&b, ranks, n_ranks, metric);
    out = bins_json(&b, job, metric, rs_steps_source(ranks, n_ranks), loaded_rank, ranks);
    bins_fini(&b);
    return out;
}

/* ---- older steps, from what the store keeps per step ------------------------------------- */

/* The first step numbered `from` or higher that a scan passes (stops at once). */
struct first_ctx {
    uint64_t step;
    bool found;
};

static int
first_record(void *arg, const struct rs_step_record *st)
{
    struct first_ctx *c = arg;
    c->step = st->step;
    c->found = true;
    return 1;
}

static int
first_summary(void *arg, const struct rs_step_summary *s)
{
    struct first_ctx *c = arg;
    c->step = s->step;
    c->found = true;
    return 1;
}

/* One rank's older steps (from..until) in step order: stored summaries, merged with the step
 * records whose agent measured them (and that have no summary); records with neither go to the
 * sink without a value. */
struct older_sum {
    uint64_t step, start_ns, value_ns;
};

struct older_ctx {
    rs__heatmap_sink sink;
    void *arg;
    int metric;
    uint64_t until;
    struct older_sum *sums; /* the summaries, in step order */
    size_t n_sums, cap_sums, k;
    struct rs_step_record prev; /* the record waiting for the next one's start */
    bool has_prev;
};

static int
older_summary(void *arg, const struct rs_step_summary *s)
{
    struct older_ctx *c = arg;
    if (s->step > c->until)
        return 1;
    if (RS_ARRAY_RESERVE(c->sums, c->cap_sums, c->n_sums, 1) != 0)
        return -ENOMEM;
    c->sums[c->n_sums++] = (struct older_sum){s->step, s->start_ns, metric_ns(s, c->metric)};
    return 0;
}

/* Passes the summaries of steps below `step` (all: UINT64_MAX). */
static void
older_flush(struct older_ctx *c, uint64_t step)
{
    for (; c->k < c->n_sums && c->sums[c->k].step < step; c->k++)
        c->sink(c->arg, c->sums[c->k].step, c->sums[c->k].start_ns, c->sums[c->k].value_ns, true);
}

static uint64_t
measured_ns(const struct rs_step_metrics *m, int metric)
{
    switch (metric) {
    case RS_HEATMAP_COMPUTE:
        return m->compute_ns;
    case RS_HEATMAP_COMM:
        return m->comm_ns;
    case RS_HEATMAP_EXPOSED_COMM:
        return m->exposed_comm_ns;
    case RS_HEATMAP_IDLE:
        return m->idle_ns;
    default:
        return m->host_gap_ns;
    }
}

/* Passes record p, whose successor (NULL: none) is `next`, or its summary. As query/steps.h
 * takes steps: skipped when empty; a step lasts until the next one starts when that is later
 * than its marker's end. */
static void
older_finish(struct older_ctx *c, const struct rs_step_record *p, const struct rs_step_record *next)
{
    older_flush(c, p->step);
    if (c->k < c->n_sums && c->sums[c->k].step == p->step) {
        older_flush(c, p->step + 1); /* its summary */
        return;
    }
    if (p->end_ns <= p->start_ns)
        return;
    if (!p->measured) {
        c->sink(c->arg, p->step, p->start_ns, 0, false);
        return;
    }
    uint64_t end = p->end_ns;
    if (next && next->step == p->step + 1 && next->start_ns > end)
        end = next->start_ns;
    c->sink(c->arg, p->step, p->start_ns,
            c->metric == RS_HEATMAP_STEP ? end - p->start_ns : measured_ns(&p->metrics, c->metric),
            true);
}

static int
older_record(void *arg, const struct rs_step_record *st)
{
    struct older_ctx *c = arg;
    if (c->has_prev)
        older_finish(c, &c->prev, st);
    c->has_prev = st->step <= c->until;
    if (!c->has_prev)
        return 1;
    c->prev = *st;
    return 0;
}

int
rs__heatmap_scan_older(rs_store_read *r, const char *job, uint32_t rank, int metric, uint64_t from,
                       uint64_t until, rs__heatmap_sink sink, void *arg)
{
    struct older_ctx c = {.sink = sink, .arg = arg, .metric = metric, .until = until};
    int rc;

    if (from > until)
        return 0;
    if ((rc = rs_store_step_summaries_scan(r, job, rank, from, older_summary, &c)) < 0 ||
        (rc = rs_store_steps_scan(r, job, rank, from, older_record, &c)) < 0)
        goto out;
    if (c.has_prev)
        older_finish(&c, &c.prev, NULL);
    older_flush(&c, UINT64_MAX);
    rc = 0;
out:
    free(c.sums);
    return rc;
}

/* The sink of one rank's older steps straight into the answer's grid. */
struct direct_sink {
    struct bins *b;
    size_t i;
    uint64_t stored, without;
};

static void
direct_add(void *arg, uint64_t step, uint64_t start_ns, uint64_t value_ns, bool has_value)
{
    struct direct_sink *d = arg;
    if (!has_value) {
        d->without++;
        return;
    }
    bins_add(d->b, d->i, step, start_ns, value_ns);
    d->stored++;
}

int
rs__heatmap_first_stored(rs_store_read *r, const char *job, uint32_t rank, uint64_t from, uint64_t until,
             uint64_t *out)
{
    struct first_ctx a = {0}, s = {0};
    int rc;

    *out = UINT64_MAX;
    if (from > until)
        return 0;
    if ((rc = rs_store_steps_scan(r, job, rank, from, first_record, &a)) < 0 ||
        (rc = rs_store_step_summaries_scan(r, job, rank, from, first_summary, &s)) < 0)
        return rc;
    if (a.found && a.step <= until)
        *out = a.step;
    if (s.found && s.step <= until && s.step < *out)
        *out = s.step;
    return 0;
}

static int
set_integer(json_t *o, const char *key, uint64_t v)
{
    return json_object_set_new(o, key, json_integer((json_int_t)v));
}

/* Bins the older steps held by the cache (and those not final yet) into b. */
static void
bins_add_older(struct bins *b, const struct rs__heatmap_older *o)
{
    for (size_t i = 0; i < o->n_ranks; i++)
        for (size_t k = 0; k < o->n_bins; k++)
            bins_add_sum(b, i, (o->first_bin + k) * o->width, o->sum_ms[i * o->n_bins + k],
                         o->count[i * o->n_bins + k], o->bin_start[k]);
    for (size_t x = 0; x < o->n_extra; x++)
        bins_add(b, o->extra[x].i, o->extra[x].step, o->extra[x].start_ns, o->extra[x].value_ns);
}

/* The steps the cache found without a value that may still get one (not summarized yet), measured
 * now as the newest steps are: one load of the steps they span (at most RS_HEATMAP_AUTO_RANK_STEPS
 * over the ranks; beyond that they stay out, counted). */
static int
bins_add_pending(struct bins *b, rs_store_read *r, const char *job, int metric,
                 const struct rs__heatmap_older *o, const struct rs_rank_steps *loaded,
                 uint64_t *exact, uint64_t *without)
{
    struct rs_rank_steps *ranks = NULL;
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t n = 0, found = 0;
    int rc;

    if (!o->n_pending)
        return 0;
    for (size_t x = 0; x < o->n_pending; x++) {
        lo = o->pending[x].step < lo ? o->pending[x].step : lo;
        hi = o->pending[x].step > hi ? o->pending[x].step : hi;
    }
    if ((hi - lo + 1) * o->n_ranks > RS_HEATMAP_AUTO_RANK_STEPS) {
        *without += o->n_pending;
        return 0;
    }
    if ((rc = rs_query_job_steps_until(r, job, (size_t)(hi - lo + 1), hi, &ranks, &n)) != 0)
        return rc;
    /* pending holds each rank's steps in step order, ranks in load order (as the load's) */
    for (size_t x = 0, k = 0, i = SIZE_MAX; x < o->n_pending; x++) {
        const struct rs__heatmap_extra *p = &o->pending[x];
        if (p->i != i) {
            i = p->i;
            k = 0;
        }
        if (i >= n || ranks[i].rank != loaded[i].rank) /* the job's ranks changed in between */
            continue;
        while (k < ranks[i].n && ranks[i].steps[k].step < p->step)
            k++;
        if (k < ranks[i].n && ranks[i].steps[k].step == p->step) {
            const struct rs_step_summary *s = &ranks[i].steps[k];
            bins_add(b, i, s->step, s->start_ns, metric_ns(s, metric));
            found++;
        }
    }
    *exact += found;
    *without += o->n_pending - found;
    rs_job_steps_free(ranks, n);
    return 0;
}

int
rs_query_heatmap(rs_store_read *r, const char *job, const struct rs_heatmap_window *w, int metric,
                 size_t columns, rs_heatmap_cache *cache, json_t **out)
{
    struct rs_rank_steps *ranks = NULL;
    struct rs_job_info info;
    struct rs__heatmap_older o = {.lowest = UINT64_MAX};
    struct bins b = {0};
    uint64_t *older_end = NULL, lo, hi, stored = 0, without = 0, exact = 0;
    size_t n = 0, last = w->last_steps;
    bool whole = !w->last_steps && w->from_step == 0 && w->to_step == UINT64_MAX, cached = false;
    json_t *doc = NULL;
    int rc;

    if (!last) {
        if ((rc = rs_store_job_get(r, job, &info)) != 0)
            return rc;
        last = RS_HEATMAP_AUTO_RANK_STEPS / (info.n_ranks ? info.n_ranks : 1);
        last = last < RS_HEATMAP_AUTO_MIN_STEPS   ? RS_HEATMAP_AUTO_MIN_STEPS
               : last > RS_HEATMAP_AUTO_MAX_STEPS ? RS_HEATMAP_AUTO_MAX_STEPS
                                                  : last;
        /* with the cache holding the older steps, only the newest few need loading in full:
         * those whose values the store may not hold yet */
        if (whole && cache && rs__heatmap_cache_fits(cache, info.n_ranks))
            last = RS_HEATMAP_AUTO_MIN_STEPS;
    }
    if ((rc = rs_query_job_steps_until(r, job, last, w->to_step, &ranks, &n)) != 0)
        return rc;
    /* The newest steps come exact from the load (computed where not stored yet, ending at
     * to_step); with the whole window asked for, each rank's older steps come from the store's
     * per-step values — through the cache for the whole job. Every rank with a step by to_step
     * has some in the load, so its newest step bounds the window; older ones only move its
     * start. */
    loaded_span(ranks, n, w->from_step, w->to_step, &lo, &hi);
    if (!(older_end = calloc(n ? n : 1, sizeof *older_end))) {
        rc = -ENOMEM;
        goto out;
    }
    if (whole && cache && lo <= hi) {
        rc = rs__heatmap_cache_older(cache, r, job, metric, ranks, n, &o);
        if (rc != 0 && rc != -E2BIG && rc != -EAGAIN) /* those two: read directly */
            goto out;
        cached = rc == 0;
        lo = o.lowest < lo ? o.lowest : lo;
        for (size_t x = 0; x < o.n_extra; x++)
            lo = o.extra[x].step < lo ? o.extra[x].step : lo;
        /* steps without a value yet (a job that just ran, not summarized) are measured below:
         * the grid must reach them too */
        for (size_t x = 0; x < o.n_pending; x++)
            lo = o.pending[x].step < lo ? o.pending[x].step : lo;
        stored = o.stored + o.n_extra;
        without = o.without;
    }
    for (size_t i = 0; i < n && !w->last_steps && !cached && lo <= hi; i++) {
        uint64_t f;
        older_end[i] = ranks[i].n ? ranks[i].steps[0].step : 0; /* exclusive */
        if (older_end[i] <= w->from_step)
            continue;
        if ((rc = rs__heatmap_first_stored(r, job, ranks[i].rank, w->from_step,
                                           older_end[i] - 1, &f)) != 0)
            goto out;
        lo = f < lo ? f : lo;
    }
    if ((rc = bins_init(&b, lo, hi, columns, cached ? o.width : 1, n)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < ranks[i].n; k++) {
            const struct rs_step_summary *s = &ranks[i].steps[k];
            if (s->step < w->from_step || s->step > w->to_step)
                continue;
            bins_add(&b, i, s->step, s->start_ns, metric_ns(s, metric));
            exact++;
        }
    if (cached) {
        bins_add_older(&b, &o);
        if ((rc = bins_add_pending(&b, r, job, metric, &o, ranks, &exact, &without)) != 0)
            goto out;
    }
    for (size_t i = 0; i < n && !cached; i++) {
        struct direct_sink d = {&b, i, 0, 0};
        if (older_end[i] > w->from_step &&
            (rc = rs__heatmap_scan_older(r, job, ranks[i].rank, metric, w->from_step,
                                         older_end[i] - 1, direct_add, &d)) != 0)
            goto out;
        stored += d.stored;
        without += d.without;
    }
    rc = -ENOMEM;
    if (!(doc = bins_json(&b, job, metric, rs_steps_source(ranks, n), loaded_rank, ranks)) ||
        set_integer(doc, "last_steps", last) != 0 || set_integer(doc, "exact_rank_steps", exact) ||
        set_integer(doc, "stored_rank_steps", stored) != 0 ||
        set_integer(doc, "rank_steps_without_metrics", without) != 0 ||
        json_object_set_new(doc, "window", json_string(w->last_steps ? "last" : "all")) != 0)
        goto out;
    *out = doc;
    doc = NULL;
    rc = 0;
out:
    json_decref(doc);
    bins_fini(&b);
    rs__heatmap_older_fini(&o);
    free(older_end);
    rs_job_steps_free(ranks, n);
    return rc;
}
