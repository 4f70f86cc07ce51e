/* A verdict's cause from a capture (see capture_evidence.h). */
#include "server/capture_evidence.h"

#include "common/error.h"
#include "query/steps.h"

#include <stdio.h>
#include <string.h>

/* The step the rank was at when the capture ended, from the report's newest window: steps are
 * taken as evenly spaced within it (an estimate; the window's own steps say how long one is). */
static uint64_t
step_at(const struct rs_straggler_report *rep, uint64_t t_ns, uint64_t *step_ns)
{
    const struct rs_straggler_span *w = &rep->window;
    uint64_t steps = w->last_step - w->first_step + 1;

    *step_ns = steps ? (w->until_ns - w->since_ns) / steps : 0;
    if (*step_ns == 0 || t_ns >= w->until_ns)
        return w->last_step;
    uint64_t back = (w->until_ns - t_ns) / *step_ns;
    return back > w->last_step ? 0 : w->last_step - back;
}

static json_t *
verdict_json_of(json_t *doc, uint32_t rank)
{
    json_t *list = json_object_get(doc, "stragglers"), *v;
    size_t i;

    json_array_foreach(list, i, v)
    {
        if (json_integer_value(json_object_get(v, "rank")) == rank)
            return v;
    }
    return NULL;
}

/* The rule over the capture's steps of the ranks captured then (the suspect and its healthy peer:
 * the others have no kernels there, and would read as ranks that run less); when it finds the
 * rank with kernel evidence, that verdict's cause and evidence go into `target`. */
static int
from_capture(rs_captures *cs, rs_store_read *r, const char *job,
             const struct rs_straggler_options *o, const struct rs_straggler_report *rep,
             const struct rs_capture_info *c, json_t *target)
{
    struct rs_straggler_options co = *o;
    struct rs_straggler_report alt = {0};
    uint64_t step_ns, end = step_at(rep, c->ended_ns, &step_ns);
    uint64_t steps = step_ns ? (c->ended_ns - c->started_ns) / step_ns : 0;
    int rc;

    if (steps < 8)
        return 0; /* too few steps traced for two windows of four */
    co.window_steps = steps / co.windows_required;
    co.window_s = 0;
    co.fit_short = false;
    co.until_step = end;
    uint32_t captured[64];
    uint32_t n_captured =
        rs_captures_ranks_during(cs, job, c->started_ns, c->ended_ns, captured, 64);
    struct rs_rank_steps *ranks;
    size_t n, k = 0;
    if (n_captured < 2)
        return 0; /* no peer traced with it: nothing to compare its kernels with */
    if ((rc = rs_query_job_steps_until(r, job, rs_straggler_steps_needed(&co), co.until_step,
                                       &ranks, &n)) != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc;
    for (size_t i = 0; i < n; i++) /* the captured ranks first; all n are freed below */
        for (uint32_t j = 0; j < n_captured; j++)
            if (ranks[i].rank == captured[j]) {
                struct rs_rank_steps t = ranks[k];
                ranks[k++] = ranks[i];
                ranks[i] = t;
                break;
            }
    rc = k >= 2 ? rs_stragglers_evaluate(r, job, &co, ranks, k, &alt) : RS_E_NOT_FOUND;
    rs_job_steps_free(ranks, n);
    if (rc != 0)
        return rc == RS_E_NOT_FOUND ? 0 : rc;
    json_t *alt_doc = rs_straggler_report_json(&alt);
    const struct rs_straggler_verdict *v = NULL;
    for (size_t i = 0; i < alt.n_verdicts && !v; i++)
        if (alt.verdicts[i].rank == c->rank && alt.verdicts[i].n_kernels > 0)
            v = &alt.verdicts[i];
    json_t *av = v && alt_doc ? verdict_json_of(alt_doc, c->rank) : NULL;
    if (av) {
        char source[96];
        snprintf(source, sizeof source, "from capture %llu", (unsigned long long)c->id);
        json_object_set(target, "cause_without_capture", json_object_get(target, "cause"));
        json_object_set(target, "cause", json_object_get(av, "cause"));
        json_object_set(target, "evidence", json_object_get(av, "evidence"));
        json_object_set_new(target, "evidence_source", json_string(source));
        json_object_set_new(target, "capture",
                            json_pack("{s:I,s:I,s:I,s:I,s:I}", "id", (json_int_t)c->id,
                                      "started_ns", (json_int_t)c->started_ns, "ended_ns",
                                      (json_int_t)c->ended_ns, "first_step",
                                      (json_int_t)alt.window.first_step, "last_step",
                                      (json_int_t)alt.window.last_step));
    }
    json_decref(alt_doc);
    rs_straggler_report_fini(&alt);
    return 0;
}

int
rs__server_capture_evidence(rs_captures *cs, rs_store_read *r, const char *job,
                            const struct rs_straggler_options *o,
                            const struct rs_straggler_report *rep, json_t *doc)
{
    int rc = 0;

    if (!rep->has_window)
        return 0;
    for (size_t i = 0; i < rep->n_verdicts && rc == 0; i++) {
        const struct rs_straggler_verdict *v = &rep->verdicts[i];
        struct rs_capture_info c;
        json_t *target;
        if (v->n_kernels > 0 ||
            rs_captures_latest_done(cs, job, v->rank, RS_CAPTURE_KERNELS, 0, &c) != 0 ||
            !(target = verdict_json_of(doc, v->rank)))
            continue;
        rc = from_capture(cs, r, job, o, rep, &c, target);
    }
    return rc;
}
