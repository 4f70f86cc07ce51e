/* Stragglers (docs/analysis.md "Straggler"), batch evaluation over the job's most recent windows of
 * `window_steps` steps, or of 60 s when that is fewer steps (aligned by step number, newest
 * first). Per window and rank:
 *   slowdown_r   = median over steps of (compute + host_gap) / r's reference: the median of the
 *                  same over its peers that are not outliers themselves (above the median of all
 *                  ranks by 3 robust spreads — 1.4826 x MAD — or threshold / 2), so that several
 *                  slow ranks do not raise each other's reference; 2 or 3 ranks: the other ranks
 *   separation_r = (r's median − its reference) / the robust spread
 *   last_frac_r  = fraction of the window's collective instances where r arrived last
 *   wait_share_r = the waits it caused (the others' median wait at the instances where r arrived
 *                  last) / the waits every rank caused, in the window
 * A rank meets the rule in a window when slowdown - 1 >= threshold with arrival evidence —
 * last_frac >= min_last_frac, wait_share >= min_last_frac / (ranks slow together), or evidence
 * shared with ranks late together — or slowdown - 1 >= 0.4 x threshold with strong evidence (last
 * at >= 80%, or that share of the waiting) and separated from the noise (max(3, sqrt(2 ln n) + 1)
 * spreads; 2 ranks: slowdown - 1 >= 0.6 x threshold) — or, among 2 ranks, with strong evidence
 * after a rise of its work over its peer's at a step inside the steps loaded (>= 0.4 x threshold
 * and 4 standard errors: the pair's own constant spread does not rise); it is a
 * straggler when it meets it in each of the newest `windows_required` windows. A rank slow on a
 * recurring share of steps gets a verdict of kind "intermittent" (query/intermittent.h); ranks near
 * the threshold with arrival evidence are listed as suspects. Each verdict carries: impact — job
 * time lost, i.e. the rank's per-step excess of compute + host gap over its reference, times the
 * steps of the run (the job runs at its pace), and that as % of wall time — and peer_wait_s, the
 * sum over the instances where it arrived last of the median wait of the other ranks (it counts
 * every gradient bucket, so it exceeds the time lost);
 * cause (gpu_slow / extra_work / host_side, or unknown) with evidence, since (the onset, in GPU
 * time, when one is found; else the oldest window of the unbroken run that meets the rule), the
 * onset (below), a calibrated confidence, NVRx-style relative and individual scores, and a
 * recommended action (observe, drain-candidate). Needs steps (records, or inferred from NCCL).
 *
 * Every figure names its window: the answer's "window" is the newest window (steps, time span),
 * over which slowdown and last_frac are measured; each verdict carries the collective instances of
 * its rank in that window, and "impact_window", the steps its impact covers.
 *
 * Onset: over the steps of the oldest window of the run and of the window before it (or, when the
 * run reaches the oldest complete window, up to a window of the steps loaded before it), each step
 * of the rank is slow when its compute + host gap is above the median of its peers' at the same
 * step number by min(threshold, half the rank's slowdown − 1 in the newest window); the onset is
 * the step that splits them into "before" and "from then on slow" with the fewest steps on the
 * wrong side of the split (the earliest such step); its start_ns is the GPU time of the step's
 * first kernel. "onset.before_search" is true when it is the first step searched: the fault may
 * have begun before. */
#ifndef RS_QUERY_STRAGGLERS_H
#define RS_QUERY_STRAGGLERS_H

#include "query/gpu_evidence.h"
#include "query/steps.h"
#include "storage/store.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* What a verdict says the slowness comes from (stragglers.c "cause"). */
enum rs_straggler_cause {
    RS_STRAGGLER_CAUSE_UNKNOWN,    /* "unknown": no excess, or the kernels not all stored yet */
    RS_STRAGGLER_CAUSE_GPU_SLOW,   /* "gpu_slow": the same kernels run slower than the peers' */
    RS_STRAGGLER_CAUSE_EXTRA_WORK, /* "extra_work": kernels the peers do not run as often */
    RS_STRAGGLER_CAUSE_HOST_SIDE,  /* "host_side": the host gap between steps' kernels is longer */
};

/* A verdict's kind: slow on most steps, or on a recurring share of them (query/intermittent.h). */
enum rs_straggler_kind {
    RS_STRAGGLER_KIND_STEADY,       /* "straggler": the rule above */
    RS_STRAGGLER_KIND_INTERMITTENT, /* "intermittent": slow on a recurring share of steps */
};

/* The recommendation, weakest first (a report's action is its verdicts' strongest). */
enum rs_straggler_action {
    RS_STRAGGLER_ACTION_NONE,            /* "none": no verdict (a report only) */
    RS_STRAGGLER_ACTION_OBSERVE,         /* "observe" */
    RS_STRAGGLER_ACTION_DRAIN_CANDIDATE, /* "drain-candidate": see the options' drain_* policy */
};

/* How the window's steps were chosen (the answer's "window_choice"). */
enum rs_straggler_window_choice {
    RS_STRAGGLER_WINDOW_DEFAULT,   /* "default": window_steps, which took under window_s */
    RS_STRAGGLER_WINDOW_TIME,      /* "time": fewer steps, as window_steps took over window_s */
    RS_STRAGGLER_WINDOW_GIVEN,     /* "given": window_steps as is (window_s 0) */
    RS_STRAGGLER_WINDOW_SHORT_JOB, /* "short_job": fitted to a short trace (fit_short) */
};

/* The JSON names of the enums above (static strings). */
const char *rs_straggler_cause_name(enum rs_straggler_cause c);
const char *rs_straggler_action_name(enum rs_straggler_action a);
const char *rs_straggler_window_choice_name(enum rs_straggler_window_choice w);
const char *rs_straggler_kind_name(enum rs_straggler_kind k);

struct rs_straggler_options {
    size_t window_steps;       /* 30 */
    double window_s;           /* 60: fewer steps when 30 steps take longer (docs/analysis.md: "the
                                  last 30 steps or 60 s"), at least 4; 0 = window_steps as is */
    unsigned windows_required; /* 2 */
    double threshold;          /* 0.03 */
    double min_last_frac;      /* 0.5 */
    unsigned lookback_windows; /* windows examined for `since`: 10 */
    uint64_t until_step;       /* evaluate the windows ending at this step (a past verdict);
                                  UINT64_MAX = the newest */
    bool fit_short;            /* false; true: when the rank with the fewest steps has fewer than
                                  windows_required windows of them, windows of its steps divided by
                                  windows_required (at least 4) — a short trace — and say so */
    /* The action policy: a verdict is a drain candidate when its cause is drain_cause and its
     * impact_pct is at least drain_min_impact_pct; every other verdict is to observe. */
    enum rs_straggler_cause drain_cause; /* RS_STRAGGLER_CAUSE_GPU_SLOW */
    double drain_min_impact_pct;         /* 5 */
};

/* Fills the defaults above. */
void rs_straggler_options_default(struct rs_straggler_options *o);

/* Steps (first_step .. last_step) and their time span [since_ns, until_ns). */
struct rs_straggler_span {
    uint64_t first_step, last_step, since_ns, until_ns;
};

#define RS_STRAGGLER_MAX_EVIDENCE 3

/* Kernel evidence (causes gpu_slow, extra_work, unknown): a kernel whose time per step exceeds the
 * peers' the most. */
struct rs_straggler_kernel_evidence {
    char *kernel; /* owned by the report */
    /* the rank's mean duration over the peers' median (0: the peers lack it) */
    double ratio_to_peers;
    double extra_ms_per_step; /* the larger of its slower-time and extra-time excess */
};

/* Host evidence (cause host_side): medians of the host gap per step (inferred steps: the GPU idle),
 * and — when collectors recorded them — the GPU's wait for its host per step (launch waits,
 * has_launch_wait) and the host's wait for its GPU per step (event, stream and context
 * synchronizations, has_sync_wait: a .item() each step shows there). */
struct rs_straggler_host_evidence {
    double host_gap_ms, peers_host_gap_ms;
    bool has_launch_wait;
    double launch_wait_ms, peers_launch_wait_ms;
    bool has_sync_wait;
    double sync_wait_ms, peers_sync_wait_ms;
};

/* The onset (see above); known is false (JSON null) when no step of the rank could be compared. */
struct rs_straggler_onset {
    bool known;
    uint64_t step, start_ns, searched_from_step, searched_to_step;
    size_t steps_searched, steps_disagreeing;
    bool before_search;
};

/* One straggler: the figures of the newest window, and of the run of windows that met the rule. */
struct rs_straggler_verdict {
    uint32_t rank;
    enum rs_straggler_kind kind;
    /* intermittent only (0 otherwise): the share of the steps examined on which the rank was slow,
     * and the median slowdown of those steps (impact_s is the time they lost) */
    double duty, tail_slowdown;
    /* how far the rank's work stands from its reference in robust spreads ((work − reference) /
     * (1.4826 x MAD over the ranks)); -1 when the ranks' spread is 0 */
    double separation;
    /* who it is ("" when unknown) */
    char host[RS_STORE_HOST_MAX], gpu_uuid[RS_STORE_UUID_MAX];
    /* the rule's figures in the newest window, over its collective instances there; wait_share:
     * the share of the others' waiting at collectives that this rank caused */
    double slowdown, last_frac, wait_share;
    uint64_t instances;
    /* job time lost (s, and % of wall time) over impact_window; the peers' wait for it (s) */
    double impact_s, impact_pct, peer_wait_s;
    enum rs_straggler_cause cause;
    /* evidence: host_side has host_evidence, the others kernels[0 .. n_kernels) */
    struct rs_straggler_kernel_evidence kernels[RS_STRAGGLER_MAX_EVIDENCE];
    size_t n_kernels;
    struct rs_straggler_host_evidence host_evidence;
    double excess_gpu_slow_ms, excess_extra_work_ms, excess_host_side_ms; /* per step */
    uint64_t since_step, since_ns; /* the oldest window of the run */
    size_t windows;                /* of the run */
    double confidence;
    double score_relative, score_individual;
    enum rs_straggler_action action;
    struct rs_straggler_onset onset;
    struct rs_straggler_span impact_window;
    /* what its GPU did differently from its peers' over [since_ns, the newest window's end)
     * (gpu_evidence.h; JSON "hardware"); attached by rs_stragglers_evaluate */
    struct rs_gpu_evidence hardware;
};

/* Every rank's figures in the newest window. */
struct rs_straggler_rank {
    uint32_t rank;
    double slowdown, last_frac, wait_share;
};

/* A suspect (informational, never acted on): in the newest window a rank slower than its
 * reference by at least 0.25 x threshold with arrival evidence, that is no verdict. */
struct rs_straggler_suspect {
    uint32_t rank;
    double slowdown, last_frac, wait_share;
    char reason[96]; /* static text: why it is not a verdict */
};

/* The rule's answer for one job (docs/openapi.yaml, /v1/jobs/{job}/stragglers). */
struct rs_straggler_report {
    char *job;                       /* owned */
    enum rs_straggler_action action; /* the strongest of the verdicts' */
    size_t window_steps;
    enum rs_straggler_window_choice window_choice;
    size_t windows_evaluated;
    bool has_window; /* window is the newest window (JSON null without one) */
    struct rs_straggler_span window;
    double threshold;
    const char *steps_source; /* static (rs_steps_source) */
    bool enough_data;
    char summary[256];
    struct rs_straggler_verdict *verdicts; /* rank order */
    size_t n_verdicts, cap_verdicts;
    struct rs_straggler_rank *ranks; /* empty without enough data */
    size_t n_ranks, cap_ranks;
    struct rs_straggler_suspect *suspects; /* rank order */
    size_t n_suspects, cap_suspects;
};

/* The rule over steps the caller loaded already with
 * rs_query_job_steps_until(r, job, rs_straggler_steps_needed(o), o->until_step, ...) (`ranks` is
 * borrowed; opts NULL = the defaults). Fills *out (caller-allocated), to be released with
 * rs_straggler_report_fini, only on success. Returns 0, -ENOMEM, or a storage error. A job without
 * enough steps gets no verdicts, enough_data false and a summary saying why. No shared state:
 * calls on distinct read transactions and reports may run on any threads at once. */
int rs_stragglers_evaluate(rs_store_read *r, const char *job, const struct rs_straggler_options *o,
                           struct rs_rank_steps *ranks, size_t n_ranks,
                           struct rs_straggler_report *out);

/* rs_stragglers_evaluate over the job's steps, which it loads. Returns 0, RS_E_NOT_FOUND, or an
 * error as above. */
int rs_stragglers_evaluate_job(rs_store_read *r, const char *job,
                               const struct rs_straggler_options *o,
                               struct rs_straggler_report *out);

/* The report as the REST API answers it (docs/openapi.yaml), or NULL without memory. */
json_t *rs_straggler_report_json(const struct rs_straggler_report *rep);

/* Frees what the report holds (not the struct). Idempotent; a zeroed report is fine. */
void rs_straggler_report_fini(struct rs_straggler_report *rep);

/* The verdicts for `job` as JSON (opts NULL = the defaults): rs_stragglers_evaluate_job, then
 * rs_straggler_report_json. Returns 0, RS_E_NOT_FOUND, or a storage error. */
int rs_query_stragglers(rs_store_read *r, const char *job, const struct rs_straggler_options *o,
                        json_t **out);

/* Steps each rank needs for the rule with options `o`: the lookback windows. */
size_t rs_straggler_steps_needed(const struct rs_straggler_options *o);

/* Whether steps loaded as rs_stragglers_evaluate wants them (each rank's newest
 * rs_straggler_steps_needed) have a rank ahead of the newest step every rank has by more than
 * half a window — its node's agent delivered further than the others' — so that the windows,
 * which end at that step, would lack its steps ("not enough data"). Then writes that step to
 * *common: load again with until_step *common. No rank, or one without steps: false. */
bool rs_straggler_steps_misaligned(const struct rs_rank_steps *ranks, size_t n_ranks,
                                   const struct rs_straggler_options *o, uint64_t *common);

/* rs_query_stragglers over steps the caller loaded already (as rs_stragglers_evaluate). */
int rs_query_stragglers_on(rs_store_read *r, const char *job, const struct rs_straggler_options *o,
                           struct rs_rank_steps *ranks, size_t n_ranks, json_t **out);

/* Inside query/: attaches each verdict's hardware evidence (straggler_hardware.c) over the run of
 * windows it covers, and makes a verdict whose GPU reports errors its peers do not (ECC, XID) a
 * drain candidate. Returns 0, -ENOMEM or a storage error. */
int rs__query_straggler_hardware(rs_store_read *r, struct rs_straggler_report *rep);

#endif
