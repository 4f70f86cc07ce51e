/* The rank x step heatmap (heatmap.h): steps binned into columns, per-column median and slowest
 * rank, for the dashboard's job overview. */
#include "query/heatmap.h"

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

/* The grid being filled: columns of `per` consecutive steps from `lo` to `hi`, per rank. */
struct bins {
    uint64_t lo, hi, per;
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

/* An empty grid over steps lo..hi (none when lo > hi) in at most `columns` columns. */
static int
bins_init(struct bins *b, uint64_t lo, uint64_t hi, size_t columns, size_t n_ranks)
{
    uint64_t span = lo <= hi ? hi - lo + 1 : 0;

    memset(b, 0, sizeof *b);
    b->lo = lo;
    b->hi = hi;
    b->per = span ? (span + columns - 1) / columns : 1;
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
        uint64_t first = b->lo + c * b->per;
        uint64_t last = b->hi - first >= b->per - 1 ? first + b->per - 1 : b->hi;
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
                    b->n_cols ? json_integer((json_int_t)b->lo) : json_null(), "last_step",
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
    if (bins_init(&b, lo, hi, columns, n_ranks) != 0)
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

/* One rank's older steps (from..until): stored summaries first, then step records whose agent
 * measured them (and that have no summary); records with neither are only counted. */
struct older_ctx {
    struct bins *b;
    size_t i;
    int metric;
    uint64_t until;
    uint64_t *sum_steps; /* steps that had a summary, in step order */
    size_t n_sums, cap_sums, k;
    struct rs_step_record prev; /* the record waiting for the next one's start */
    bool has_prev;
    uint64_t stored, without;
};

static int
older_summary(void *arg, const struct rs_step_summary *s)
{
    struct older_ctx *c = arg;
    if (s->step > c->until)
        return 1;
    if (RS_ARRAY_RESERVE(c->sum_steps, c->cap_sums, c->n_sums, 1) != 0)
        return -ENOMEM;
    c->sum_steps[c->n_sums++] = s->step;
    bins_add(c->b, c->i, s->step, s->start_ns, metric_ns(s, c->metric));
    c->stored++;
    return 0;
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

/* Bins record p, whose successor (NULL: none) is `next`. As query/steps.h takes steps: skipped
 * when empty; a step lasts until the next one starts when that is later than its marker's end. */
static void
older_finish(struct older_ctx *c, const struct rs_step_record *p, const struct rs_step_record *next)
{
    if (p->end_ns <= p->start_ns)
        return;
    while (c->k < c->n_sums && c->sum_steps[c->k] < p->step)
        c->k++;
    if (c->k < c->n_sums && c->sum_steps[c->k] == p->step)
        return; /* binned from its summary */
    if (!p->measured) {
        c->without++;
        return;
    }
    uint64_t end = p->end_ns;
    if (next && next->step == p->step + 1 && next->start_ns > end)
        end = next->start_ns;
    bins_add(c->b, c->i, p->step, p->start_ns,
             c->metric == RS_HEATMAP_STEP ? end - p->start_ns : measured_ns(&p->metrics, c->metric));
    c->stored++;
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

/* Bins rank i's steps from..until from the store's summaries and measured step records. */
static int
bins_add_older(struct bins *b, rs_store_read *r, const char *job, uint32_t rank, size_t i,
               int metric, uint64_t from, uint64_t until, uint64_t *stored, uint64_t *without)
{
    struct older_ctx c = {.b = b, .i = i, .metric = metric, .until = until};
    int rc;

    if (from > until)
        return 0;
    if ((rc = rs_store_step_summaries_scan(r, job, rank, from, older_summary, &c)) < 0 ||
        (rc = rs_store_steps_scan(r, job, rank, from, older_record, &c)) < 0)
        goto out;
    if (c.has_prev)
        older_finish(&c, &c.prev, NULL);
    *stored += c.stored;
    *without += c.without;
    rc = 0;
out:
    free(c.sum_steps);
    return rc;
}

/* The lowest stored step of rank numbered from..until (UINT64_MAX: none). */
static int
first_stored(rs_store_read *r, const char *job, uint32_t rank, uint64_t from, uint64_t until,
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

int
rs_query_heatmap(rs_store_read *r, const char *job, const struct rs_heatmap_window *w, int metric,
                 size_t columns, json_t **out)
{
    struct rs_rank_steps *ranks = NULL;
    struct rs_job_info info;
    struct bins b = {0};
    uint64_t *older_end = NULL, lo, hi, stored = 0, without = 0, exact = 0;
    size_t n = 0, last = w->last_steps;
    json_t *doc = NULL;
    int rc;

    if (!last) {
        if ((rc = rs_store_job_get(r, job, &info)) != 0)
            return rc;
        last = RS_HEATMAP_AUTO_RANK_STEPS / (info.n_ranks ? info.n_ranks : 1);
        last = last < RS_HEATMAP_AUTO_MIN_STEPS   ? RS_HEATMAP_AUTO_MIN_STEPS
               : last > RS_HEATMAP_AUTO_MAX_STEPS ? RS_HEATMAP_AUTO_MAX_STEPS
                                                  : last;
    }
    if ((rc = rs_query_job_steps_until(r, job, last, w->to_step, &ranks, &n)) != 0)
        return rc;
    /* The newest steps come exact from the load (computed where not stored yet, ending at
     * to_step); with the whole window asked for, each rank's older steps come from the store's
     * per-step values. Every rank with a step by to_step has some in the load, so its newest
     * step bounds the window; older ones only move its start. */
    loaded_span(ranks, n, w->from_step, w->to_step, &lo, &hi);
    if (!(older_end = calloc(n ? n : 1, sizeof *older_end))) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n && !w->last_steps && lo <= hi; i++) {
        uint64_t f;
        older_end[i] = ranks[i].n ? ranks[i].steps[0].step : 0; /* exclusive */
        if (older_end[i] <= w->from_step)
            continue;
        if ((rc = first_stored(r, job, ranks[i].rank, w->from_step, older_end[i] - 1, &f)) != 0)
            goto out;
        lo = f < lo ? f : lo;
    }
    if ((rc = bins_init(&b, lo, hi, columns, n)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < ranks[i].n; k++) {
            const struct rs_step_summary *s = &ranks[i].steps[k];
            if (s->step < w->from_step || s->step > w->to_step)
                continue;
            bins_add(&b, i, s->step, s->start_ns, metric_ns(s, metric));
            exact++;
        }
    for (size_t i = 0; i < n; i++)
        if (older_end[i] > w->from_step &&
            (rc = bins_add_older(&b, r, job, ranks[i].rank, i, metric, w->from_step,
                                 older_end[i] - 1, &stored, &without)) != 0)
            goto out;
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
    free(older_end);
    rs_job_steps_free(ranks, n);
    return rc;
}
