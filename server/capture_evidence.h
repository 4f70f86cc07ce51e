/* A verdict's cause from a capture (issue 25 item 4, docs/collector.md "Captures"): between
 * kernel windows a straggler verdict may have no per-kernel evidence (its cause then rests on
 * step times and arrivals alone: "host_side" or "unknown"). When a capture of its rank ended done
 * with kernels (captures.h; the evaluator asks for one, auto_capture.h), the rule is applied again
 * over the steps the capture covered, and the verdict's answer takes that cause and evidence,
 * saying so: "evidence_source": "from capture <id>", "cause_without_capture" the cause it had.
 * Runs in the query pool (it reads the store). Not a public API: server/ only. */
#ifndef RS_SERVER_CAPTURE_EVIDENCE_H
#define RS_SERVER_CAPTURE_EVIDENCE_H

#include "server/captures.h"
#include "storage/store.h"
#include "query/stragglers.h"

#include <jansson.h>

/* For each verdict of `rep` without kernel evidence whose rank has a done capture with kernels,
 * rewrites its object in doc["stragglers"] as above. `o` are the options rep was evaluated with.
 * Returns 0 or a storage error / -ENOMEM (doc is then left as it was for the verdicts not done). */
int rs__server_capture_evidence(rs_captures *cs, rs_store_read *r, const char *job,
                                const struct rs_straggler_options *o,
                                const struct rs_straggler_report *rep, json_t *doc);

#endif
