/* A verdict's cause from a capture (issue 25 item 4, docs/collector.md "Captures"): between
 * kernel windows a straggler verdict may have no per-kernel evidence (its cause then rests on
 * step times and arrivals alone: "host_side" or "unknown"). When a capture of its rank ended done
 * with kernels (captures.h; the evaluator asks for one, auto_capture.h), the rule is applied again
 * over the steps the capture covered, and the verdict takes that cause and evidence — in the
 * typed report itself, so that every answer built from it agrees: the streaming evaluator's log
 * lines (RS-STRAGGLER-RAISED/-CAUSE) and /metrics, REST and the CLI (which reads REST). The JSON
 * says where the cause came from: "evidence_source": "from capture <id>", "cause_without_capture"
 * the cause it had. Runs in the thread pool (it reads the store). Not a public API: server/ only. */
#ifndef RS_SERVER_CAPTURE_EVIDENCE_H
#define RS_SERVER_CAPTURE_EVIDENCE_H

#include "server/captures.h"
#include "storage/store.h"
#include "query/stragglers.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One verdict whose cause a capture gave. */
struct rs_capture_cause {
    uint32_t rank;
    uint64_t capture_id, started_ns, ended_ns;
    uint64_t first_step, last_step;  /* the steps of the capture the rule compared */
    enum rs_straggler_cause without; /* the cause the rule gave without the capture */
    bool pending; /* the capture runs: the verdict's cause is unknown until it ends (below) */
};

/* For each verdict of `rep` whose rank has a capture that ended done with kernels, when the
 * verdict has no kernel evidence, or kernel evidence that may be one-sided (cause extra_work)
 * from a newest window that the capture overlaps (the captured rank compared with peers that
 * traced nothing): the rule over the
 * capture's steps, on the ranks captured then; when that finds the rank
 * with kernel evidence, the verdict in `rep` takes its cause, kernel evidence and excess per step,
 * and the action the policy of `o` gives that cause (a drain candidate stays one); rep->action
 * follows. A verdict with extra_work kernel evidence from a newest window in which a capture of its
 * rank runs (none of it done yet) compared the rank's captured kernels with peers that traced none
 * (extra_work, wrongly): its cause becomes unknown, evidence none, until the capture ends (listed
 * with `pending`; the evaluator logs no change to unknown). `o` are the options rep was evaluated
 * with. *out (to free(); NULL when *n_out is 0)
 * says which verdicts changed. Returns 0 or a storage error / -ENOMEM; on an error the verdicts
 * changed before it stay changed and are listed. */
int rs__server_capture_causes(rs_captures *cs, rs_store_read *r, const char *job,
                              const struct rs_straggler_options *o,
                              struct rs_straggler_report *rep, struct rs_capture_cause **out,
                              size_t *n_out);

/* The one taken from a capture for `rank` among cc[0..n), or NULL. */
const struct rs_capture_cause *rs__server_capture_cause_of(const struct rs_capture_cause *cc,
                                                           size_t n, uint32_t rank);

/* Marks the verdicts of `doc` (rs_straggler_report_json of the report rs__server_capture_causes
 * changed) that cc[0..n) names: "evidence_source", "cause_without_capture" and "capture" (id,
 * started_ns, ended_ns, first_step, last_step; pending: id and started_ns). Returns 0 or
 * -ENOMEM. */
int rs__server_capture_causes_json(const struct rs_capture_cause *cc, size_t n, json_t *doc);

#endif
