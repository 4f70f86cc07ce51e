/* Evaluator-triggered captures (see auto_capture.h): the choice of suspect and peer, and the
 * per-job pace. */
#include "server/auto_capture.h"

#include "common/error.h"
#include "common/log.h"
#include "server/server_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PACE_JOBS 1024u
/* Open captures the evaluator may hold at once: the rest of the table stays for people. Hangs and
 * suspects come from what collectors report, and an ingest token may report them for any number
 * of made-up jobs — without this bound, enough of them kept the table full of the evaluator's
 * captures, and an admin's POST got 429. */
#define EVALUATOR_OPEN_MAX (RS_CAPTURES_MAX / 4)

/* When each job was last asked for, for stragglers and for hangs apart: a capture of a suspect
 * must not keep a hang that follows from being captured (a small table; the oldest entry is
 * reused when full). */
static struct pace {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    bool hang;
    uint64_t last_ns;
} paces[PACE_JOBS];

static struct pace *
pace_of(const char *job, bool hang)
{
    struct pace *oldest = &paces[0];

    for (size_t i = 0; i < PACE_JOBS; i++) {
        if (paces[i].hang == hang && strcmp(paces[i].job, job) == 0)
            return &paces[i];
        if (paces[i].last_ns < oldest->last_ns)
            oldest = &paces[i];
    }
    snprintf(oldest->job, sizeof oldest->job, "%s", job);
    oldest->hang = hang;
    oldest->last_ns = 0;
    return oldest;
}

/* Asks for (suspect, peer), paced per job; `why` says what triggered it. */
static void
request(struct rs_server *srv, const char *job, bool hang, uint32_t suspect, int64_t peer,
        const char *why, uint64_t now)
{
    const struct rs_server_config *cfg = srv->cfg;
    uint64_t every = (uint64_t)cfg->auto_capture_every_s * 1000000000ull;
    struct pace *p = pace_of(job, hang);
    uint32_t ranks[2] = {suspect, (uint32_t)peer};
    uint32_t n = peer >= 0 ? 2 : 1;
    uint64_t ids[2];
    char err[256] = "", reason[160];
    struct rs_auth_who who = {"evaluator", RS_AUTH_ROLE_NONE, "local"};

    if (p->last_ns && now - p->last_ns < every)
        return;
    p->last_ns = now; /* refused or not: no second try before the next period */
    snprintf(reason, sizeof reason, "evaluator: %s", why);
    int rc = RS_E_FULL;
    if (rs_captures_open_by(srv->captures, "evaluator") + n > EVALUATOR_OPEN_MAX)
        snprintf(err, sizeof err, "the evaluator holds %u open captures already (at most %u)",
                 rs_captures_open_by(srv->captures, "evaluator"), EVALUATOR_OPEN_MAX);
    else
        rc = rs_captures_request(srv->captures, job, ranks, n,
                                 RS_CAPTURE_KERNELS | RS_CAPTURE_PC_SAMPLING,
                                 (uint32_t)cfg->auto_capture_s, "evaluator", reason, now, ids, err,
                                 sizeof err);
    rs__server_audit(&who, "capture",
                     "job=%s ranks=%u first_rank=%u kinds=kernels,pc_sampling "
                     "seconds=%u result=%s",
                     job, n, suspect, (unsigned)cfg->auto_capture_s, rc == 0 ? "202" : "refused");
    if (rc == 0)
        rs_log(RS_LOG_INFO, "RS-CAPTURE-AUTO",
               "job %s: capture %llu of rank %u (and %llu of healthy peer %lld) for %lld s: %s",
               job, (unsigned long long)ids[0], suspect, n == 2 ? (unsigned long long)ids[1] : 0ull,
               (long long)peer, (long long)cfg->auto_capture_s, why);
    else
        rs_log(RS_LOG_INFO, "RS-CAPTURE-AUTO", "job %s: no capture of rank %u (%s): %s", job,
               suspect, why, err);
}

static bool
flagged(const struct rs_straggler_report *rep, uint32_t rank)
{
    for (size_t i = 0; i < rep->n_verdicts; i++)
        if (rep->verdicts[i].rank == rank)
            return true;
    for (size_t i = 0; i < rep->n_suspects; i++)
        if (rep->suspects[i].rank == rank)
            return true;
    return false;
}

/* The rank nearest its reference (slowdown nearest 1) that is neither verdict nor suspect. */
static int64_t
healthy_peer(const struct rs_straggler_report *rep)
{
    int64_t best = -1;
    double best_d = 0;

    for (size_t i = 0; i < rep->n_ranks; i++) {
        double d = rep->ranks[i].slowdown - 1;
        d = d < 0 ? -d : d;
        if (!flagged(rep, rep->ranks[i].rank) && (best < 0 || d < best_d)) {
            best = rep->ranks[i].rank;
            best_d = d;
        }
    }
    return best;
}

/* Whether the evaluator may capture: configured so, and a capture table to file the request in
 * (an evaluator run without one, as its unit tests do, captures nothing). */
static bool
enabled(const struct rs_server *srv)
{
    return srv->cfg != NULL && srv->cfg->auto_capture && srv->captures != NULL;
}

void
rs__server_auto_capture_stragglers(struct rs_server *srv, const char *job,
                                   const struct rs_straggler_report *rep, uint64_t now_ns)
{
    struct rs_capture_info done;
    char why[160];

    if (!enabled(srv))
        return;
    uint64_t every = (uint64_t)srv->cfg->auto_capture_every_s * 1000000000ull;
    for (size_t i = 0; i < rep->n_verdicts; i++) {
        const struct rs_straggler_verdict *v = &rep->verdicts[i];
        if (v->n_kernels > 0 ||
            rs_captures_latest_done(srv->captures, job, v->rank, RS_CAPTURE_KERNELS,
                                    now_ns > every ? now_ns - every : 0, &done) == 0)
            continue; /* per-kernel evidence there, or a capture of it recent enough */
        snprintf(why, sizeof why,
                 "%s verdict on rank %u (%+.1f%%, cause %s) without per-kernel "
                 "evidence",
                 rs_straggler_kind_name(v->kind), v->rank, 100 * (v->slowdown - 1),
                 rs_straggler_cause_name(v->cause));
        request(srv, job, false, v->rank, healthy_peer(rep), why, now_ns);
        return;
    }
    if (rep->n_verdicts == 0 && rep->n_suspects > 0) {
        const struct rs_straggler_suspect *s = &rep->suspects[0];
        if (rs_captures_latest_done(srv->captures, job, s->rank, RS_CAPTURE_KERNELS,
                                    now_ns > every ? now_ns - every : 0, &done) == 0)
            return;
        snprintf(why, sizeof why, "suspect rank %u (%+.1f%%, last to arrive %.0f%% of the time)",
                 s->rank, 100 * (s->slowdown - 1), 100 * s->last_frac);
        request(srv, job, false, s->rank, healthy_peer(rep), why, now_ns);
    }
}

void
rs__server_auto_capture_hang(struct rs_server *srv, const char *job, const struct rs_hang *h,
                             uint64_t now_ns)
{
    char why[160];

    if (!enabled(srv) || h->n_waiting == 0)
        return;
    snprintf(why, sizeof why, "hang: %s seq %llu in flight", h->op, (unsigned long long)h->seq);
    if (h->n_absent > 0)
        request(srv, job, true, h->absent[0].rank, h->waiting[0].rank, why, now_ns);
    else
        request(srv, job, true, h->waiting[0].rank, h->n_waiting > 1 ? (int64_t)h->waiting[1].rank : -1,
                why, now_ns);
}
