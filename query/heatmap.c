/* The rank x step heatmap (heatmap.h): steps binned into columns, per-column median and slowest
 * rank, for the dashboard's job overview. */
#include "query/heatmap.h"

#include "query/stats.h"

#include <errno.h>
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

/* One column's sums while binning: per rank, the metric's sum and count in the column. */
struct cell {
    double sum_ms;
    uint32_t n;
};

static json_t *
number_or_null(double v, bool has)
{
    return has ? json_real(v) : json_null();
}

json_t *
rs_heatmap_json(const char *job, const struct rs_rank_steps *ranks, size_t n_ranks, int metric,
                size_t columns)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    struct cell *cells = NULL;
    double *col_values = NULL;
    uint64_t *col_start = NULL;
    json_t *out = NULL, *cols = NULL, *rank_list = NULL, *values = NULL;

    for (size_t i = 0; i < n_ranks; i++)
        if (ranks[i].n) {
            lo = ranks[i].steps[0].step < lo ? ranks[i].steps[0].step : lo;
            hi =
                ranks[i].steps[ranks[i].n - 1].step > hi ? ranks[i].steps[ranks[i].n - 1].step : hi;
        }
    uint64_t span = lo <= hi ? hi - lo + 1 : 0;
    uint64_t per = span ? (span + columns - 1) / columns : 1;
    size_t n_cols = span ? (size_t)((span + per - 1) / per) : 0;

    cells = calloc(n_cols * n_ranks > 0 ? n_cols * n_ranks : 1, sizeof *cells);
    col_values = calloc(n_ranks ? n_ranks : 1, sizeof *col_values);
    col_start = malloc((n_cols ? n_cols : 1) * sizeof *col_start);
    cols = json_array();
    rank_list = json_array();
    values = json_array();
    if (!cells || !col_values || !col_start || !cols || !rank_list || !values)
        goto fail;
    for (size_t c = 0; c < n_cols; c++)
        col_start[c] = UINT64_MAX;
    for (size_t i = 0; i < n_ranks; i++)
        for (size_t k = 0; k < ranks[i].n; k++) {
            const struct rs_step_summary *s = &ranks[i].steps[k];
            size_t c = (size_t)((s->step - lo) / per);
            cells[i * n_cols + c].sum_ms += (double)metric_ns(s, metric) / 1e6;
            cells[i * n_cols + c].n++;
            if (s->start_ns < col_start[c])
                col_start[c] = s->start_ns;
        }
    for (size_t i = 0; i < n_ranks; i++) {
        json_t *row = json_array();
        if (!row || json_array_append_new(values, row) != 0 ||
            json_array_append_new(rank_list, json_integer((json_int_t)ranks[i].rank)) != 0)
            goto fail;
        for (size_t c = 0; c < n_cols; c++) {
            const struct cell *x = &cells[i * n_cols + c];
            if (json_array_append_new(row, number_or_null(x->sum_ms / (x->n ? x->n : 1), x->n)))
                goto fail;
        }
    }
    for (size_t c = 0; c < n_cols; c++) {
        size_t n = 0, slowest = 0;
        for (size_t i = 0; i < n_ranks; i++) {
            const struct cell *x = &cells[i * n_cols + c];
            if (!x->n)
                continue;
            col_values[n] = x->sum_ms / x->n;
            if (n == 0 ||
                col_values[n] > cells[slowest * n_cols + c].sum_ms / cells[slowest * n_cols + c].n)
                slowest = i;
            n++;
        }
        double max = n ? cells[slowest * n_cols + c].sum_ms / cells[slowest * n_cols + c].n : 0;
        double median = n ? rs_quantile(col_values, n, 0.5) : 0;
        uint64_t first = lo + c * per, last = first + per - 1 < hi ? first + per - 1 : hi;
        json_t *col = json_pack(
            "{s:I, s:I, s:o, s:o, s:o, s:o}", "first_step", (json_int_t)first, "last_step",
            (json_int_t)last, "start_ns", n ? json_integer((json_int_t)col_start[c]) : json_null(),
            "median_ms", number_or_null(median, n), "max_ms", number_or_null(max, n), "max_rank",
            n ? json_integer((json_int_t)ranks[slowest].rank) : json_null());
        if (!col || json_array_append_new(cols, col) != 0)
            goto fail;
    }
    out = json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:o, s:o, s:o}", "job", job, "metric",
                    metric_names[metric], "steps_source", rs_steps_source(ranks, n_ranks),
                    "first_step", span ? json_integer((json_int_t)lo) : json_null(), "last_step",
                    span ? json_integer((json_int_t)hi) : json_null(), "steps_per_column",
                    (json_int_t)per, "columns", cols, "ranks", rank_list, "values", values);
    cols = rank_list = values = NULL;
fail:
    json_decref(cols);
    json_decref(rank_list);
    json_decref(values);
    free(cells);
    free(col_values);
    free(col_start);
    return out;
}

int
rs_query_heatmap(rs_store_read *r, const char *job, size_t last_steps, int metric, size_t columns,
                 json_t **out)
{
    struct rs_rank_steps *ranks;
    struct rs_job_info info;
    size_t n;
    int rc;

    if (last_steps == 0) {
        if ((rc = rs_store_job_get(r, job, &info)) != 0)
            return rc;
        last_steps = RS_HEATMAP_AUTO_RANK_STEPS / (info.n_ranks ? info.n_ranks : 1);
        last_steps = last_steps < RS_HEATMAP_AUTO_MIN_STEPS   ? RS_HEATMAP_AUTO_MIN_STEPS
                     : last_steps > RS_HEATMAP_AUTO_MAX_STEPS ? RS_HEATMAP_AUTO_MAX_STEPS
                                                              : last_steps;
    }
    if ((rc = rs_query_job_steps(r, job, last_steps, &ranks, &n)) != 0)
        return rc;
    *out = rs_heatmap_json(job, ranks, n, metric, columns);
    rs_job_steps_free(ranks, n);
    if (*out &&
        json_object_set_new(*out, "last_steps", json_integer((json_int_t)last_steps)) != 0) {
        json_decref(*out);
        *out = NULL;
    }
    return *out ? 0 : -ENOMEM;
}
