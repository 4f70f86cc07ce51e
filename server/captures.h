/* Captures on demand, the server's side (docs/collector.md "Captures", issue 25 item 4): the table
 * of capture requests and the state machine each one goes through —
 *   requested -> delivered (put in a reply to the agent serving the rank) -> running (the
 *   collector reported it started) -> done | failed (the collector said) | expired (no word in
 *   time: the collector or its agent went away).
 * The table learns which agent serves each (job, rank) from the batches it ingests, and hands each
 * agent, in its replies, the orders for its ranks until their collector reports them started (an
 * agent that restarts, or a reply that is lost, gets them again; collectors ignore an id twice).
 * Bounded: one open capture per rank, a rate per job, at most RS_CAPTURES_MAX kept (the oldest
 * finished ones go first), RS_CAPTURES_MAX_ROUTES ranks remembered. Kept in the store too
 * (capture_store.h takes the changes every half second and reads them back at start, when the
 * open ones become expired); the routes are not: after a restart a rank can be captured once it
 * sends again. Thread-safe (one mutex): ingest's loop thread, the writer thread (replies and the
 * store) and REST use it. Not a public API: server/ only. */
#ifndef RS_SERVER_CAPTURES_H
#define RS_SERVER_CAPTURES_H

#include "proto/capture.h"
#include "proto/wire.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rs_captures rs_captures;

#define RS_CAPTURES_MAX 1024u
#define RS_CAPTURES_MAX_ROUTES 65536u
#define RS_CAPTURES_MAX_RANKS 64u /* ranks per request */

enum rs_capture_state {
    RS_CAPTURES_REQUESTED,
    RS_CAPTURES_DELIVERED,
    RS_CAPTURES_RUNNING,
    RS_CAPTURES_DONE,
    RS_CAPTURES_FAILED,
    RS_CAPTURES_EXPIRED
};

struct rs_captures_options {
    uint32_t per_job_per_min; /* rank captures a job may be asked for per minute (>= 1) */
    uint64_t timeout_ns;      /* requested/delivered longer than this, or running this long past
                               * its seconds, without word from the collector: expired */
};

/* What one capture is now (rs_captures_get). */
struct rs_capture_info {
    uint64_t id;
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint32_t rank, kinds, seconds;
    enum rs_capture_state state;
    uint64_t requested_ns, delivered_ns, started_ns, ended_ns; /* CLOCK_REALTIME, 0 = not yet */
    char who[64];                                              /* the principal, or "evaluator" */
    char reason[160];                                          /* why it was asked for */
    char message[RS_CAPTURE_MAX_MESSAGE + 1]; /* the collector's word, or why it expired */
    uint32_t ran_kinds;                       /* what the collector said ran */
    uint64_t batches, kernels, stalls;        /* records received marked with this capture */
};

int rs_captures_new(const struct rs_captures_options *o, rs_captures **out);
void rs_captures_free(rs_captures *cs);

/* "requested", "delivered", "running", "done", "failed", "expired". */
const char *rs_capture_state_name(enum rs_capture_state s);

/* Asks for a capture of each of ranks[0..n) of `job` (n 1..RS_CAPTURES_MAX_RANKS, kinds and
 * seconds as in a valid rs_capture_order). All or nothing: returns 0 with ids[i] for ranks[i], or
 *   -ENOENT   a rank this server has not heard from (why says which),
 *   -EBUSY    a rank already has an open capture (why says which and its id),
 *   RS_E_FULL the job's rate is spent, or the table is full of open captures,
 *   -EINVAL   bad arguments.
 * `who` and `reason` are copied (cut). */
int rs_captures_request(rs_captures *cs, const char *job, const uint32_t *ranks, uint32_t n,
                        uint32_t kinds, uint32_t seconds, const char *who, const char *reason,
                        uint64_t now_ns, uint64_t *ids, char *why, size_t why_len);

/* Ingest (after the batch's token was accepted): the agent `agent_id` serves the ranks of `b`;
 * their capture reports and capture-marked records are taken into account. A report or mark for
 * a capture of another (job, rank) is ignored and counted. */
void rs_captures_ingest(rs_captures *cs, uint64_t agent_id, const struct rs_agent_batch *b,
                        uint64_t now_ns);

/* Reply to agent `agent_id`: writes up to max orders for the ranks it serves (requested or
 * delivered, oldest first) into out and returns how many; they become delivered. */
uint32_t rs_captures_orders(rs_captures *cs, uint64_t agent_id, uint64_t now_ns,
                            struct rs_capture_order *out, uint32_t max);

/* Expires captures that went without word for longer than the timeout. */
void rs_captures_expire(rs_captures *cs, uint64_t now_ns);

/* How many captures asked for by `who` are open (requested, delivered or running). */
uint32_t rs_captures_open_by(rs_captures *cs, const char *who);

/* A copy of capture `id` into *out: 0 or -ENOENT. */
int rs_captures_get(rs_captures *cs, uint64_t id, struct rs_capture_info *out);

/* The newest finished capture of (job, rank) that ended done with `kinds` among what ran and
 * received records, ended at or after since_ns: 0 with *out, or -ENOENT. */
int rs_captures_latest_done(rs_captures *cs, const char *job, uint32_t rank, uint32_t kinds,
                            uint64_t since_ns, struct rs_capture_info *out);

/* The newest capture of (job, rank) with kernels asked for that is running and started before
 * until_ns: 0 with *out, or -ENOENT. */
int rs_captures_running_before(rs_captures *cs, const char *job, uint32_t rank, uint64_t until_ns,
                               struct rs_capture_info *out);

/* Ranks of `job` with a capture that ended done with kernels and overlaps [since_ns, until_ns),
 * into ranks[max] (each once); returns how many. */
uint32_t rs_captures_ranks_during(rs_captures *cs, const char *job, uint64_t since_ns,
                                  uint64_t until_ns, uint32_t *ranks, uint32_t max);

/* Copies of the captures of `job` asked for at or after since_ns (requested_ns), oldest first,
 * into out[max]; returns how many there are in all (more than max: the rest are left out). */
size_t rs_captures_list(rs_captures *cs, const char *job, uint64_t since_ns,
                        struct rs_capture_info *out, size_t max);

/* {"captures":[...]} of `job`, newest first (docs/openapi.yaml CaptureList); NULL on ENOMEM. */
json_t *rs_captures_json(rs_captures *cs, const char *job);

/* One capture as JSON (docs/openapi.yaml Capture). */
json_t *rs_capture_info_json(const struct rs_capture_info *c);

/* Persistence (capture_store.h). What changed since the last take: captures to store (a copy
 * each) and captures dropped from the table to delete (gone: only job and id set). */
struct rs_captures_change {
    struct rs_capture_info c;
    bool gone;
};
struct rs_captures_changes {
    struct rs_captures_change *v;
    size_t n;
};

/* Takes the changes (n may be 0; then nothing is outstanding). Returns 0, -EBUSY while changes
 * taken before are not done, or -ENOMEM (nothing taken). */
int rs_captures_changes_take(rs_captures *cs, struct rs_captures_changes *out);

/* The changes taken were stored, or not (then they are taken again next time, those still in the
 * table); frees them. Any thread. */
void rs_captures_changes_done(rs_captures *cs, struct rs_captures_changes *ch, bool stored);

/* At start: puts a capture read from the store back in the table; one that was open becomes
 * expired now (the server that waited for its collector's word is gone), with a message saying
 * so, and is marked changed. Ids asked for later are above it. Returns 0, -EINVAL (not a capture:
 * id 0, an unknown state, a bad job name), -EEXIST, or RS_E_FULL (the table holds open ones only). */
int rs_captures_restore(rs_captures *cs, const struct rs_capture_info *c, uint64_t now_ns);

/* The job is being deleted: its captures and routes go (the store's go with the job). */
void rs_captures_forget_job(rs_captures *cs, const char *job);

/* What one batch's RankBatch.capture_count may claim: at most what a whole capture (at most
 * RS_CAPTURE_MAX_SECONDS) could trace — kernels at 10 launches per microsecond (ten times the
 * fastest CUDA graph launch rate), stall samples at 16e9 per second (twice what PC sampling's
 * shortest interval, 2^5 cycles, gives on 132 SMs at 2 GHz). A batch claiming more keeps its
 * records but adds nothing to the capture's counts (counted in counts_refused); the counts
 * themselves saturate at UINT64_MAX. */
#define RS_CAPTURES_CLAIM_KERNELS_MAX (RS_CAPTURE_MAX_SECONDS * 10000000ull)
#define RS_CAPTURES_CLAIM_STALLS_MAX (RS_CAPTURE_MAX_SECONDS * 16000000000ull)

/* Counters for /metrics. */
struct rs_captures_stats {
    uint64_t requested, delivered, started, done, failed, expired, refused_rate, refused_busy;
    uint64_t reports_ignored; /* reports or marks for another rank's capture, or unknown ids */
    uint64_t counts_refused;  /* RankBatch.capture_count claims over the bounds below */
};
void rs_captures_get_stats(rs_captures *cs, struct rs_captures_stats *out);

#endif
