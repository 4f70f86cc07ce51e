/* The collector's capture state machine (see capture_run.h). */
#include "node-agent/capture_run.h"

#include <stdio.h>
#include <string.h>

void
rs_capture_run_init(struct rs_capture_run *r, const char *job, uint32_t rank,
                    const struct rs_capture_ops *ops)
{
    memset(r, 0, sizeof *r);
    r->ops = *ops;
    snprintf(r->job, sizeof r->job, "%s", job);
    r->rank = rank;
}

static void
report(rs_collector *c, uint64_t id, uint32_t state, uint32_t kinds, uint64_t now, const char *text)
{
    struct rs_capture_report rep = {.id = id, .state = state, .kinds = kinds, .time_ns = now};

    rs_capture_report_set_message(&rep, text);
    rs_collector_report_capture(c, &rep);
}

static bool
seen_before(struct rs_capture_run *r, uint64_t id)
{
    for (unsigned i = 0; i < RS_CAPTURE_RUN_SEEN; i++)
        if (r->seen[i] == id)
            return true;
    r->seen[r->n_seen++ % RS_CAPTURE_RUN_SEEN] = id;
    return false;
}

static void
end(struct rs_capture_run *r, rs_collector *c, uint64_t now, const char *how)
{
    char text[RS_CAPTURE_MAX_MESSAGE + 1], kinds[32];

    r->ops.stop(r->ops.arg, r->ran);
    r->active = false;
    r->done++;
    r->clear_mark_id = r->order.id;
    r->held = 0;
    r->one_more = false;
    rs_capture_kinds_format(r->ran, kinds, sizeof kinds);
    snprintf(text, sizeof text, "%s traced %s", kinds, how);
    report(c, r->order.id, RS_CAPTURE_DONE, r->ran, now, text);
}

static void
start(struct rs_capture_run *r, rs_collector *c, const struct rs_capture_order *o, uint64_t mono,
      uint64_t now)
{
    char why[RS_CAPTURE_MAX_MESSAGE + 1] = "", text[RS_CAPTURE_MAX_MESSAGE + 1];
    uint32_t ran = 0;

    if (o->rank != r->rank || strcmp(o->job, r->job) != 0) {
        r->ignored++; /* not ours: the agent's mistake or a stale connection */
        return;
    }
    if (seen_before(r, o->id))
        return;
    if (r->active) {
        snprintf(text, sizeof text, "this rank is busy with capture %llu",
                 (unsigned long long)r->order.id);
        report(c, o->id, RS_CAPTURE_FAILED, 0, now, text);
        r->failed++;
        return;
    }
    if (r->ops.start(r->ops.arg, o->kinds, o->seconds, &ran, why, sizeof why) != 0 || ran == 0) {
        report(c, o->id, RS_CAPTURE_FAILED, 0, now, why[0] ? why : "the collector refused it");
        r->failed++;
        return;
    }
    r->active = true;
    r->order = *o;
    r->ran = ran;
    r->end_mono_ns = mono + (uint64_t)o->seconds * 1000000000ull;
    r->clear_mark_id = 0;
    r->started++;
    rs_collector_set_capture(c, o->id);
    if (ran != o->kinds) { /* part of it runs: say which part does not, and why */
        char missing[32];
        rs_capture_kinds_format(o->kinds & ~ran, missing, sizeof missing);
        snprintf(text, sizeof text, "%s not available%s%s", missing, why[0] ? ": " : "", why);
        report(c, o->id, RS_CAPTURE_STARTED, ran, now, text);
    } else
        report(c, o->id, RS_CAPTURE_STARTED, ran, now, "");
}

void
rs_capture_run_tick(struct rs_capture_run *r, rs_collector *c, uint64_t mono_ns,
                    uint64_t realtime_ns)
{
    struct rs_capture_order orders[RS_CAPTURE_MAX_ORDERS];
    uint32_t n = 0;

    if (r->clear_mark_id) { /* one flush after the end: the records CUPTI still held went */
        if (r->ops.pending && r->held < RS_CAPTURE_RUN_MAX_HELD &&
            r->ops.pending(r->ops.arg, r->ran)) {
            r->held++; /* still to come (a PC-sampling window not drained yet) */
            r->one_more = true;
        } else if (r->one_more) {
            r->one_more = false; /* they came: this flush sends them */
        } else {
            rs_collector_set_capture(c, 0);
            r->clear_mark_id = 0;
        }
    }
    if (r->active && mono_ns >= r->end_mono_ns)
        end(r, c, realtime_ns, "for the seconds asked");
    rs_collector_poll_control(c, orders, RS_CAPTURE_MAX_ORDERS, &n);
    for (uint32_t i = 0; i < n; i++)
        start(r, c, &orders[i], mono_ns, realtime_ns);
}

void
rs_capture_run_finish(struct rs_capture_run *r, rs_collector *c, uint64_t realtime_ns)
{
    if (r->active)
        end(r, c, realtime_ns, "until the process finished");
}
