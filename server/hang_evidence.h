/* The captures behind a hang verdict (issue 25: "when it suspects a straggler or a hang it
 * captures the suspect and a healthy peer"). When the hang watch raises a hang it asks for a
 * capture of the first rank that never arrived and of a waiting rank (auto_capture.h): a hung
 * rank's collector still answers (its flush thread runs while the training thread is stuck), so
 * the capture tells what that rank does instead of arriving — kernels (busy with other work: late,
 * not stuck) or none (its process gives the GPU no work: stuck on the host, or in a kernel that
 * never ends). This adds to each hang of a GET /v1/jobs/{job}/hangs answer the captures of its
 * ranks asked for since the hang began, each with its role and that reading. Thread-safe (the
 * capture table locks). Not a public API: server/ only. */
#ifndef RS_SERVER_HANG_EVIDENCE_H
#define RS_SERVER_HANG_EVIDENCE_H

#include "server/captures.h"

#include <jansson.h>

/* For each object of doc["hangs"] (rs_hang_report_json): "captures", a list of the captures of
 * `job` asked for at or after its since_ns of a rank in its "waiting" or "never_arrived" lists,
 * oldest first (docs/openapi.yaml HangCapture): the capture (as in CaptureList), "role"
 * ("never_arrived" or "waiting") and "reading" (what the capture says, or why it says nothing
 * yet). Returns 0 or -ENOMEM. */
int rs__server_hang_captures(rs_captures *cs, const char *job, json_t *doc);

#endif
