/* Evaluator-triggered captures (issue 25 item 4, docs/collector.md "Captures"): when the
 * evaluator raises a straggler verdict without per-kernel evidence, sees a suspect, or the hang
 * watch raises a hang, the server asks for a capture of the suspect rank and one healthy peer
 * (kernels and PC sampling, --auto-capture-s seconds), so that the verdict's cause can be told
 * from their kernels and stalls (capture_evidence.h, hang_evidence.h). At most one per job every
 * --auto-capture-every-s for stragglers and one for hangs, at most a quarter of the capture table
 * open at once (what collectors report must not crowd out people's captures), within the job's capture rate (captures.h); --auto-capture=false turns it
 * off. Each request is logged (RS-CAPTURE-AUTO) and audited (who=evaluator). Loop thread. Not a
 * public API: server/ only. */
#ifndef RS_SERVER_AUTO_CAPTURE_H
#define RS_SERVER_AUTO_CAPTURE_H

#include "query/hangs.h"
#include "query/stragglers.h"

#include <stdint.h>

struct rs_server;

/* After an evaluation of `job`: asks for a capture when a verdict lacks per-kernel evidence (no
 * kernel evidence and no capture of its rank done within --auto-capture-every-s), or, without
 * verdicts, for the first suspect. The healthy peer is the rank whose slowdown is nearest 1 among
 * those neither a verdict nor a suspect. */
void rs__server_auto_capture_stragglers(struct rs_server *srv, const char *job,
                                        const struct rs_straggler_report *rep, uint64_t now_ns);

/* A hang was raised: captures the first rank that never arrived (what it does instead) and the
 * first waiting rank, or two waiting ranks when every member's rank is unknown. */
void rs__server_auto_capture_hang(struct rs_server *srv, const char *job, const struct rs_hang *h,
                                  uint64_t now_ns);

#endif
