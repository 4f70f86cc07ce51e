/* Straggler evaluation (docs/analysis.md "Straggler", issue: "the server re-evaluates running
 * jobs continuously, not only on request"). Every `period_ms` the server evaluates, in the libuv
 * thread pool, every job that received data in the last `active_s` seconds, and keeps per job the
 * history of its verdicts on the loop thread:
 *   raised   the first evaluation that found rank r a straggler (detected_ns, server clock)
 *   cleared  the first evaluation after that which no longer did (cleared_ns)
 * Each change is logged once (RS-STRAGGLER-RAISED / RS-STRAGGLER-CLEARED) and counted, and so is
 * a change of an active verdict's cause (RS-STRAGGLER-CAUSE: a summarized job's verdict may be
 * raised with cause "unknown" before its agents' kernel windows of the same steps arrive). The
 * stragglers endpoint adds this history to its answer, and `?since_ns=` lets a scheduler poll for
 * changes only. State is in memory: after a restart, verdicts are raised again by the first
 * evaluation (with a new detected_ns). Each raise, clear and change of slowdown is also recorded
 * in the store (verdict_history.h), where a verdict raised again after a restart continues the one
 * that was open: the fleet view's lasting history.
 *
 * Share limit: an evaluation starts no sooner than RS_EVALUATOR_SHARE_DIVISOR - 1 times its
 * predecessor's duration after that one ended, so evaluations take at most 1 /
 * RS_EVALUATOR_SHARE_DIVISOR of one core however large the jobs are; ingest, which must not fall
 * behind, keeps the rest. Small jobs are still evaluated every period_ms; the verdicts of a very
 * large one come less often (measured: docs/BENCHMARKS.md "Rank-window summaries").
 *
 * Kept steps: per running job the evaluator keeps the final steps (summary stored, or being
 * stored) of its last load in memory, so that the next evaluation reads only the steps that came
 * since (rs_query_job_steps_kept; every 16th load reads all of them again): the 120 newest steps
 * per rank at most, freed when the job stops sending (active_s) or is deleted.
 *
 * The steps an evaluation loads also feed the step summaries (step_summaries.h): while the list
 * of one evaluation is with the writer, evaluations give verdicts only and collect no more. */
#ifndef RS_SERVER_EVALUATOR_H
#define RS_SERVER_EVALUATOR_H

#include "query/stragglers.h"

#include <jansson.h>
#include <stdint.h>

#define RS_EVALUATOR_SHARE_DIVISOR 6

struct rs_server;
typedef struct rs_evaluator rs_evaluator;

struct rs_evaluator_options {
    unsigned period_ms; /* evaluate this often; 0 = never (on-request evaluation only) */
    unsigned active_s;  /* a job is running while it received data this recently */
};

/* Starts the timer on srv's loop. Returns 0 or -ENOMEM. */
int rs_evaluator_start(struct rs_server *srv, const struct rs_evaluator_options *o,
                       rs_evaluator **out);

/* Stops the timer (loop thread); freed once the evaluation in flight, if any, has finished.
 * NULL is fine. */
void rs_evaluator_close(rs_evaluator *e);

/* Loop thread. Adds the streaming history of `job` to `doc`, the stragglers answer of `rep`
 * (rs_straggler_report_json(rep): its "stragglers" in rep's order; rep is read only):
 * "detected_ns" on each verdict (null when no streaming evaluation has
 * raised it yet), "cleared" (ranks whose verdict was cleared: rank, detected_ns, cleared_ns), and
 * "events_ns" (time of the newest raise or clear; pass it back as since_ns). With since_ns > 0 only
 * verdicts raised after since_ns (by detected_ns, or by their data time `since_ns` when no
 * streaming evaluation has seen them) and clears after since_ns are kept. e may be NULL (no
 * history). Returns 0 or -ENOMEM. */
int rs_evaluator_annotate(const rs_evaluator *e, const char *job, uint64_t since_ns,
                          const struct rs_straggler_report *rep, json_t *doc);

/* Loop thread: forgets the history of `job` (it was deleted). NULL is fine. */
void rs_evaluator_forget(rs_evaluator *e, const char *job);

/* Evaluations run and verdict changes seen since the start (loop thread). */
struct rs_evaluator_stats {
    uint64_t evaluations, jobs_evaluated, raised, cleared, active_stragglers, errors;
    uint64_t last_duration_ms; /* of the newest evaluation */
    uint64_t catchup_steps;    /* rank-steps loaded to summarize steps the windows left behind */
};
void rs_evaluator_get_stats(const rs_evaluator *e, struct rs_evaluator_stats *out);

/* An active straggler verdict, as the streaming evaluation keeps it. */
struct rs_evaluator_verdict {
    const char *job;
    uint32_t rank;
    double slowdown;               /* of the newest evaluation */
    uint64_t detected_ns;          /* when it was raised */
    enum rs_straggler_cause cause; /* as logged last (RS-STRAGGLER-RAISED / -CAUSE) */
    uint64_t capture_id;           /* the capture that cause came from; 0: the rule's own */
};

/* Loop thread: calls fn for the first `max` active straggler verdicts and returns how many are
 * active in all. */
typedef void (*rs_evaluator_verdict_fn)(void *arg, const struct rs_evaluator_verdict *v);
size_t rs_evaluator_foreach_active(const rs_evaluator *e, size_t max, rs_evaluator_verdict_fn fn,
                                   void *arg);


#endif
