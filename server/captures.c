/* The capture table and its state machine (see captures.h). Captures live in an array (at most
 * RS_CAPTURES_MAX, so scans are cheap); ranks' agents in a chained hash table. */
#include "server/captures.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/hash.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUTE_BUCKETS 4096u
#define RATE_JOBS 1024u
#define MINUTE_NS 60000000000ull

struct route {
    struct route *next;
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint32_t rank;
    uint64_t agent_id, seen_ns;
};

/* Requests of one job in the current minute. */
struct rate {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint64_t minute_start_ns;
    uint32_t count;
};

/* A capture dropped from the table (its slot reused), to delete from the store. */
struct gone {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint64_t id;
};

struct rs_captures {
    pthread_mutex_t lock;
    struct rs_captures_options o;
    struct rs_capture_info caps[RS_CAPTURES_MAX];
    bool dirty[RS_CAPTURES_MAX]; /* changed since the store last took it */
    uint32_t n_caps;
    struct gone gone[RS_CAPTURES_MAX];
    uint32_t n_gone;
    bool taken; /* changes are with the store (rs_captures_changes_take) */
    uint64_t next_id;
    struct route *routes[ROUTE_BUCKETS];
    uint32_t n_routes;
    struct rate rates[RATE_JOBS];
    uint32_t n_rates;
    struct rs_captures_stats stats;
};

int
rs_captures_new(const struct rs_captures_options *o, rs_captures **out)
{
    rs_captures *cs = calloc(1, sizeof *cs);

    if (!cs)
        return -ENOMEM;
    pthread_mutex_init(&cs->lock, NULL);
    cs->o = *o;
    if (cs->o.per_job_per_min == 0)
        cs->o.per_job_per_min = 1;
    /* ids stay below 2^53 (exact in JSON numbers) and do not repeat across restarts: a
     * collector ignores an id it has seen */
    cs->next_id = rs_clock_realtime_ns() / 1000000u * 1000u;
    *out = cs;
    return 0;
}

void
rs_captures_free(rs_captures *cs)
{
    if (!cs)
        return;
    for (uint32_t b = 0; b < ROUTE_BUCKETS; b++)
        for (struct route *r = cs->routes[b], *next; r; r = next) {
            next = r->next;
            free(r);
        }
    pthread_mutex_destroy(&cs->lock);
    free(cs);
}

const char *
rs_capture_state_name(enum rs_capture_state s)
{
    static const char *const names[] = {"requested", "delivered", "running",
                                        "done",      "failed",    "expired"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

static bool
is_open(const struct rs_capture_info *c)
{
    return c->state <= RS_CAPTURES_RUNNING;
}

static uint32_t
bucket(const char *job, uint32_t rank)
{
    return (uint32_t)((rs_hash_fnv1a64(job, strlen(job)) ^ (rank * 0x9e3779b97f4a7c15ull)) %
                      ROUTE_BUCKETS);
}

static struct route *
route_find(rs_captures *cs, const char *job, uint32_t rank)
{
    for (struct route *r = cs->routes[bucket(job, rank)]; r; r = r->next)
        if (r->rank == rank && strcmp(r->job, job) == 0)
            return r;
    return NULL;
}

/* Remembers that agent_id serves (job, rank); past the bound, unknown ranks are not remembered
 * (they cannot be captured; the table does not grow without end). */
static void
route_seen(rs_captures *cs, const char *job, uint32_t rank, uint64_t agent_id, uint64_t now)
{
    struct route *r = route_find(cs, job, rank);

    if (!r) {
        uint32_t b = bucket(job, rank);
        if (cs->n_routes >= RS_CAPTURES_MAX_ROUTES || !(r = calloc(1, sizeof *r)))
            return;
        snprintf(r->job, sizeof r->job, "%s", job);
        r->rank = rank;
        r->next = cs->routes[b];
        cs->routes[b] = r;
        cs->n_routes++;
    }
    r->agent_id = agent_id;
    r->seen_ns = now;
}

/* Capture c changed: the store takes it next time. */
static void
touch(rs_captures *cs, const struct rs_capture_info *c)
{
    cs->dirty[c - cs->caps] = true;
}

static struct rs_capture_info *
find(rs_captures *cs, uint64_t id)
{
    for (uint32_t i = 0; i < cs->n_caps; i++)
        if (cs->caps[i].id == id)
            return &cs->caps[i];
    return NULL;
}

/* A free slot: a new one, or the oldest finished capture's. NULL when all are open. */
static struct rs_capture_info *
slot(rs_captures *cs)
{
    struct rs_capture_info *oldest = NULL;

    if (cs->n_caps < RS_CAPTURES_MAX)
        return &cs->caps[cs->n_caps++];
    for (uint32_t i = 0; i < cs->n_caps; i++)
        if (!is_open(&cs->caps[i]) && (!oldest || cs->caps[i].id < oldest->id))
            oldest = &cs->caps[i];
    if (oldest && cs->n_gone < RS_CAPTURES_MAX) { /* (past that, the store keeps it: loads skip it) */
        snprintf(cs->gone[cs->n_gone].job, sizeof cs->gone[0].job, "%s", oldest->job);
        cs->gone[cs->n_gone++].id = oldest->id;
    }
    return oldest;
}

/* The job's rate: true when n more captures fit in its current minute (and counts them). */
static bool
rate_take(rs_captures *cs, const char *job, uint32_t n, uint64_t now)
{
    struct rate *r = NULL, *stale = NULL;

    for (uint32_t i = 0; i < cs->n_rates && !r; i++) {
        if (strcmp(cs->rates[i].job, job) == 0)
            r = &cs->rates[i];
        else if (now - cs->rates[i].minute_start_ns >= MINUTE_NS)
            stale = &cs->rates[i];
    }
    if (!r) {
        r = cs->n_rates < RATE_JOBS ? &cs->rates[cs->n_rates++] : stale;
        if (!r)
            return false; /* a thousand jobs captured this minute: refuse */
        snprintf(r->job, sizeof r->job, "%s", job);
        r->minute_start_ns = now;
        r->count = 0;
    }
    if (now - r->minute_start_ns >= MINUTE_NS) {
        r->minute_start_ns = now;
        r->count = 0;
    }
    if (r->count + n > cs->o.per_job_per_min)
        return false;
    r->count += n;
    return true;
}

int
rs_captures_request(rs_captures *cs, const char *job, const uint32_t *ranks, uint32_t n,
                    uint32_t kinds, uint32_t seconds, const char *who, const char *reason,
                    uint64_t now_ns, uint64_t *ids, char *why, size_t why_len)
{
    int rc = 0;

    if (n == 0 || n > RS_CAPTURES_MAX_RANKS || !rs_wire_job_valid(job) || kinds == 0 ||
        (kinds & ~(uint32_t)RS_CAPTURE_KINDS_ALL) || seconds == 0 ||
        seconds > RS_CAPTURE_MAX_SECONDS) {
        snprintf(why, why_len, "invalid capture request");
        return -EINVAL;
    }
    pthread_mutex_lock(&cs->lock);
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        if (!route_find(cs, job, ranks[i])) {
            snprintf(why, why_len,
                     "rank %u of job %s has not sent anything to this server since it started "
                     "(captures go to live ranks)",
                     ranks[i], job);
            rc = -ENOENT;
        }
        for (uint32_t j = 0; j < i && rc == 0; j++)
            if (ranks[j] == ranks[i]) {
                snprintf(why, why_len, "rank %u is listed twice", ranks[i]);
                rc = -EINVAL;
            }
        for (uint32_t j = 0; j < cs->n_caps && rc == 0; j++) {
            const struct rs_capture_info *c = &cs->caps[j];
            if (is_open(c) && c->rank == ranks[i] && strcmp(c->job, job) == 0) {
                snprintf(why, why_len, "rank %u has an open capture already: %llu (%s)", ranks[i],
                         (unsigned long long)c->id, rs_capture_state_name(c->state));
                cs->stats.refused_busy++;
                rc = -EBUSY;
            }
        }
    }
    uint32_t open = 0;
    for (uint32_t j = 0; j < cs->n_caps; j++)
        open += is_open(&cs->caps[j]);
    if (rc == 0 && open + n > RS_CAPTURES_MAX) {
        snprintf(why, why_len, "%u captures are open on this server: try again later", open);
        rc = RS_E_FULL;
    }
    if (rc == 0 && !rate_take(cs, job, n, now_ns)) {
        snprintf(why, why_len,
                 "job %s may be captured on at most %u ranks a minute "
                 "(--capture-per-job-per-min): try again later",
                 job, cs->o.per_job_per_min);
        cs->stats.refused_rate++;
        rc = RS_E_FULL;
    }
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        struct rs_capture_info *c = slot(cs);
        memset(c, 0, sizeof *c);
        c->id = ++cs->next_id;
        snprintf(c->job, sizeof c->job, "%s", job);
        c->rank = ranks[i];
        c->kinds = kinds;
        c->seconds = seconds;
        c->state = RS_CAPTURES_REQUESTED;
        c->requested_ns = now_ns;
        snprintf(c->who, sizeof c->who, "%s", who);
        snprintf(c->reason, sizeof c->reason, "%s", reason);
        ids[i] = c->id;
        touch(cs, c);
        cs->stats.requested++;
    }
    pthread_mutex_unlock(&cs->lock);
    return rc;
}

static void expire_locked(rs_captures *cs, uint64_t now_ns);

/* The time a collector gave for a report, or `now` when it lies outside [from, now + 1 s]: the
 * collector's clock is its host's, and a hostile or broken one must not make a capture end before
 * it began or in ten years (the evaluator would size its reading of steps by that span). */
static uint64_t
report_time(uint64_t t, uint64_t from, uint64_t now)
{
    return t && t >= from && t <= now + 1000000000ull ? t : now;
}

static void
take_report(rs_captures *cs, const char *job, uint32_t rank, const struct rs_capture_report *r,
            uint64_t now)
{
    struct rs_capture_info *c = find(cs, r->id);

    if (!c || c->rank != rank || strcmp(c->job, job) != 0) {
        cs->stats.reports_ignored++; /* not this rank's: a confused or hostile collector */
        return;
    }
    if (!is_open(c))
        return; /* a late or repeated word about a finished capture */
    touch(cs, c);
    if (r->message[0])
        snprintf(c->message, sizeof c->message, "%s", r->message);
    c->ran_kinds |= r->kinds;
    if (c->state != RS_CAPTURES_RUNNING &&
        (r->state == RS_CAPTURE_STARTED || r->state == RS_CAPTURE_DONE)) {
        c->state = RS_CAPTURES_RUNNING;
        c->started_ns = report_time(r->time_ns, c->requested_ns, now);
        cs->stats.started++;
    }
    if (r->state == RS_CAPTURE_DONE) {
        c->state = RS_CAPTURES_DONE;
        c->ended_ns = report_time(r->time_ns, c->started_ns, now);
        cs->stats.done++;
    } else if (r->state == RS_CAPTURE_FAILED) {
        c->state = RS_CAPTURES_FAILED;
        c->ended_ns = report_time(r->time_ns, c->started_ns ? c->started_ns : c->requested_ns, now);
        cs->stats.failed++;
    }
}

/* a + b, or UINT64_MAX where that would wrap: counts an agent reports must not wrap to small. */
static uint64_t
sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void
take_marked(rs_captures *cs, const struct rs_rank_batch *b)
{
    struct rs_capture_info *c = find(cs, b->capture_id);

    if (!c || c->rank != b->identity.rank || strcmp(c->job, b->identity.job) != 0) {
        cs->stats.reports_ignored++;
        return;
    }
    touch(cs, c);
    c->batches++;
    if (b->has_capture_count) { /* the agent counted the marked frames as they came */
        if (b->capture_kernels > RS_CAPTURES_CLAIM_KERNELS_MAX ||
            b->capture_stall_samples > RS_CAPTURES_CLAIM_STALLS_MAX) {
            cs->stats.counts_refused++; /* more than a whole capture could hold: not believed */
            return;
        }
        c->kernels = sat_add(c->kernels, b->capture_kernels);
        c->stalls = sat_add(c->stalls, b->capture_stall_samples);
        return;
    }
    /* an older agent: this batch's records (its kernel totals may be of other seconds; a total's
     * count comes from the agent, so the sums saturate) */
    c->kernels = sat_add(c->kernels, b->n_kernels);
    for (uint32_t i = 0; i < b->n_kernel_totals; i++)
        c->kernels = sat_add(c->kernels, b->kernel_totals[i].count);
    for (uint32_t i = 0; i < b->n_stalls; i++)
        c->stalls = sat_add(c->stalls, b->stalls[i].count);
}

void
rs_captures_ingest(rs_captures *cs, uint64_t agent_id, const struct rs_agent_batch *b,
                   uint64_t now_ns)
{
    pthread_mutex_lock(&cs->lock);
    expire_locked(cs, now_ns);
    for (uint32_t i = 0; i < b->n_ranks; i++) {
        const struct rs_rank_batch *rb = &b->ranks[i];
        route_seen(cs, rb->identity.job, rb->identity.rank, agent_id, now_ns);
        /* marks first: a batch that says "done" carries the capture's last records */
        if (rb->capture_id)
            take_marked(cs, rb);
        for (uint32_t j = 0; j < rb->n_captures; j++)
            take_report(cs, rb->identity.job, rb->identity.rank, &rb->captures[j], now_ns);
    }
    pthread_mutex_unlock(&cs->lock);
}

uint32_t
rs_captures_orders(rs_captures *cs, uint64_t agent_id, uint64_t now_ns,
                   struct rs_capture_order *out, uint32_t max)
{
    uint32_t n = 0;

    pthread_mutex_lock(&cs->lock);
    for (uint32_t i = 0; i < cs->n_caps && n < max; i++) {
        struct rs_capture_info *c = &cs->caps[i];
        const struct route *r;
        if (c->state > RS_CAPTURES_DELIVERED || !(r = route_find(cs, c->job, c->rank)) ||
            r->agent_id != agent_id)
            continue;
        out[n] = (struct rs_capture_order){c->id, "", c->rank, c->kinds, c->seconds};
        snprintf(out[n].job, sizeof out[n].job, "%s", c->job);
        n++;
        if (c->state == RS_CAPTURES_REQUESTED) {
            touch(cs, c);
            c->state = RS_CAPTURES_DELIVERED;
            c->delivered_ns = now_ns;
            cs->stats.delivered++;
        }
    }
    pthread_mutex_unlock(&cs->lock);
    return n;
}

/* Under the lock. */
static void
expire_locked(rs_captures *cs, uint64_t now_ns)
{
    for (uint32_t i = 0; i < cs->n_caps; i++) {
        struct rs_capture_info *c = &cs->caps[i];
        const char *why = NULL;
        if (c->state == RS_CAPTURES_REQUESTED && now_ns - c->requested_ns > cs->o.timeout_ns)
            why = "the agent serving this rank sent no batch to take the order (it is down, or "
                  "the rank moved)";
        else if (c->state == RS_CAPTURES_DELIVERED && now_ns - c->requested_ns > cs->o.timeout_ns)
            why = "the agent took the order but the rank's collector never started it (it "
                  "exited, or is not connected to the agent)";
        else if (c->state == RS_CAPTURES_RUNNING &&
                 now_ns - c->started_ns > c->seconds * 1000000000ull + cs->o.timeout_ns)
            why = "the collector started but never reported the end (it exited during the "
                  "capture?)";
        if (!why)
            continue;
        c->state = RS_CAPTURES_EXPIRED;
        c->ended_ns = now_ns;
        snprintf(c->message, sizeof c->message, "%s", why);
        touch(cs, c);
        cs->stats.expired++;
    }
}

void
rs_captures_expire(rs_captures *cs, uint64_t now_ns)
{
    pthread_mutex_lock(&cs->lock);
    expire_locked(cs, now_ns);
    pthread_mutex_unlock(&cs->lock);
}

uint32_t
rs_captures_open_by(rs_captures *cs, const char *who)
{
    uint32_t n = 0;

    pthread_mutex_lock(&cs->lock);
    for (uint32_t i = 0; i < cs->n_caps; i++)
        n += is_open(&cs->caps[i]) && strcmp(cs->caps[i].who, who) == 0;
    pthread_mutex_unlock(&cs->lock);
    return n;
}

int
rs_captures_get(rs_captures *cs, uint64_t id, struct rs_capture_info *out)
{
    int rc = -ENOENT;

    pthread_mutex_lock(&cs->lock);
    const struct rs_capture_info *c = find(cs, id);
    if (c) {
        *out = *c;
        rc = 0;
    }
    pthread_mutex_unlock(&cs->lock);
    return rc;
}

int
rs_captures_latest_done(rs_captures *cs, const char *job, uint32_t rank, uint32_t kinds,
                        uint64_t since_ns, struct rs_capture_info *out)
{
    const struct rs_capture_info *best = NULL;

    pthread_mutex_lock(&cs->lock);
    for (uint32_t i = 0; i < cs->n_caps; i++) {
        const struct rs_capture_info *c = &cs->caps[i];
        if (c->state == RS_CAPTURES_DONE && c->rank == rank && (c->ran_kinds & kinds) &&
            c->ended_ns >= since_ns && c->batches > 0 && strcmp(c->job, job) == 0 &&
            (!best || c->id > best->id))
            best = c;
    }
    if (best)
        *out = *best;
    pthread_mutex_unlock(&cs->lock);
    return best ? 0 : -ENOENT;
}

int
rs_captures_running_before(rs_captures *cs, const char *job, uint32_t rank, uint64_t until_ns,
                           struct rs_capture_info *out)
{
    const struct rs_capture_info *best = NULL;

    pthread_mutex_lock(&cs->lock);
    for (uint32_t i = 0; i < cs->n_caps; i++) {
        const struct rs_capture_info *c = &cs->caps[i];
        if (c->state == RS_CAPTURES_RUNNING && c->rank == rank && (c->kinds & RS_CAPTURE_KERNELS) &&
            c->started_ns < until_ns && strcmp(c->job, job) == 0 && (!best || c->id > best->id))
            best = c;
    }
    if (best)
        *out = *best;
    pthread_mutex_unlock(&cs->lock);
    return best ? 0 : -ENOENT;
}

uint32_t
rs_captures_ranks_during(rs_captures *cs, const char *job, uint64_t since_ns, uint64_t until_ns,
                         uint32_t *ranks, uint32_t max)
{
    uint32_t n = 0;

    pthread_mutex_lock(&cs->lock);
    for (uint32_t i = 0; i < cs->n_caps && n < max; i++) {
        const struct rs_capture_info *c = &cs->caps[i];
        bool dup = false;
        if (c->state != RS_CAPTURES_DONE || !(c->ran_kinds & RS_CAPTURE_KERNELS) ||
            c->started_ns >= until_ns || c->ended_ns <= since_ns || strcmp(c->job, job) != 0)
            continue;
        for (uint32_t k = 0; k < n && !dup; k++)
            dup = ranks[k] == c->rank;
        if (!dup)
            ranks[n++] = c->rank;
    }
    pthread_mutex_unlock(&cs->lock);
    return n;
}

static int
oldest_first(const void *a, const void *b)
{
    uint64_t x = ((const struct rs_capture_info *)a)->id,
             y = ((const struct rs_capture_info *)b)->id;
    return x < y ? -1 : x > y ? 1 : 0;
}

size_t
rs_captures_list(rs_captures *cs, const char *job, uint64_t since_ns, struct rs_capture_info *out,
                 size_t max)
{
    size_t n = 0;

    pthread_mutex_lock(&cs->lock);
    expire_locked(cs, rs_clock_realtime_ns());
    for (uint32_t i = 0; i < cs->n_caps; i++)
        if (cs->caps[i].requested_ns >= since_ns && strcmp(cs->caps[i].job, job) == 0) {
            if (n < max)
                out[n] = cs->caps[i];
            n++;
        }
    pthread_mutex_unlock(&cs->lock);
    qsort(out, n < max ? n : max, sizeof *out, oldest_first);
    return n;
}

static json_t *
kinds_json(uint32_t kinds)
{
    json_t *a = json_array();

    if (a && (kinds & RS_CAPTURE_KERNELS))
        json_array_append_new(a, json_string("kernels"));
    if (a && (kinds & RS_CAPTURE_PC_SAMPLING))
        json_array_append_new(a, json_string("pc_sampling"));
    return a;
}

static json_t *
time_or_null(uint64_t ns)
{
    return ns ? json_integer((json_int_t)ns) : json_null();
}

json_t *
rs_capture_info_json(const struct rs_capture_info *c)
{
    /* job, who, reason and message are data from the wire or a client: JSON escapes them, and
     * the dashboard and CLI escape what they show */
    return json_pack("{s:I,s:s,s:i,s:o,s:i,s:s,s:o,s:o,s:o,s:o,s:s,s:s,s:s,s:o,s:{s:I,s:I,s:I}}",
                     "id", (json_int_t)c->id, "job", c->job, "rank", (int)c->rank, "kinds",
                     kinds_json(c->kinds), "seconds", (int)c->seconds, "state",
                     rs_capture_state_name(c->state), "requested_ns", time_or_null(c->requested_ns),
                     "delivered_ns", time_or_null(c->delivered_ns), "started_ns",
                     time_or_null(c->started_ns), "ended_ns", time_or_null(c->ended_ns), "who",
                     c->who, "reason", c->reason, "message", c->message, "ran_kinds",
                     kinds_json(c->ran_kinds), "records", "batches", (json_int_t)c->batches,
                     "kernels", (json_int_t)c->kernels, "stall_samples", (json_int_t)c->stalls);
}

static int
newest_first(const void *a, const void *b)
{
    uint64_t x = ((const struct rs_capture_info *)a)->id,
             y = ((const struct rs_capture_info *)b)->id;
    return x < y ? 1 : x > y ? -1 : 0;
}

json_t *
rs_captures_json(rs_captures *cs, const char *job)
{
    struct rs_capture_info *copy = malloc(sizeof cs->caps);
    uint32_t n = 0;
    json_t *list = json_array(), *out;

    if (!copy || !list) {
        free(copy);
        json_decref(list);
        return NULL;
    }
    pthread_mutex_lock(&cs->lock);
    expire_locked(cs, rs_clock_realtime_ns());
    for (uint32_t i = 0; i < cs->n_caps; i++)
        if (strcmp(cs->caps[i].job, job) == 0)
            copy[n++] = cs->caps[i];
    pthread_mutex_unlock(&cs->lock);
    qsort(copy, n, sizeof *copy, newest_first);
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(list, rs_capture_info_json(&copy[i]));
    free(copy);
    out = json_pack("{s:s,s:o}", "job", job, "captures", list);
    return out;
}

void
rs_captures_get_stats(rs_captures *cs, struct rs_captures_stats *out)
{
    pthread_mutex_lock(&cs->lock);
    *out = cs->stats;
    pthread_mutex_unlock(&cs->lock);
}

int
rs_captures_changes_take(rs_captures *cs, struct rs_captures_changes *out)
{
    int rc = 0;

    *out = (struct rs_captures_changes){0};
    pthread_mutex_lock(&cs->lock);
    uint32_t n = cs->n_gone;
    for (uint32_t i = 0; i < cs->n_caps; i++)
        n += cs->dirty[i];
    if (cs->taken)
        rc = -EBUSY;
    else if (n > 0 && !(out->v = calloc(n, sizeof *out->v)))
        rc = -ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < cs->n_caps; i++)
        if (cs->dirty[i]) {
            out->v[out->n++].c = cs->caps[i];
            cs->dirty[i] = false;
        }
    for (uint32_t i = 0; rc == 0 && i < cs->n_gone; i++) {
        struct rs_captures_change *ch = &out->v[out->n++];
        ch->gone = true;
        ch->c.id = cs->gone[i].id;
        snprintf(ch->c.job, sizeof ch->c.job, "%s", cs->gone[i].job);
    }
    if (rc == 0) {
        cs->n_gone = 0;
        cs->taken = n > 0;
    }
    pthread_mutex_unlock(&cs->lock);
    return rc;
}

void
rs_captures_changes_done(rs_captures *cs, struct rs_captures_changes *ch, bool stored)
{
    pthread_mutex_lock(&cs->lock);
    cs->taken = false;
    for (size_t i = 0; !stored && i < ch->n; i++) { /* again next time */
        struct rs_capture_info *c = ch->v[i].gone ? NULL : find(cs, ch->v[i].c.id);
        if (c)
            touch(cs, c);
        else if (ch->v[i].gone && cs->n_gone < RS_CAPTURES_MAX) {
            snprintf(cs->gone[cs->n_gone].job, sizeof cs->gone[0].job, "%s", ch->v[i].c.job);
            cs->gone[cs->n_gone++].id = ch->v[i].c.id;
        }
    }
    pthread_mutex_unlock(&cs->lock);
    free(ch->v);
    *ch = (struct rs_captures_changes){0};
}

int
rs_captures_restore(rs_captures *cs, const struct rs_capture_info *stored, uint64_t now_ns)
{
    int rc = 0;

    if (stored->id == 0 || (unsigned)stored->state > RS_CAPTURES_EXPIRED ||
        !rs_wire_job_valid(stored->job))
        return -EINVAL;
    pthread_mutex_lock(&cs->lock);
    struct rs_capture_info *c = find(cs, stored->id) ? NULL : slot(cs);
    if (!c) {
        rc = find(cs, stored->id) ? -EEXIST : RS_E_FULL;
        goto out;
    }
    *c = *stored;
    c->job[sizeof c->job - 1] = c->who[sizeof c->who - 1] = c->reason[sizeof c->reason - 1] =
        c->message[sizeof c->message - 1] = '\0';
    if (is_open(c)) { /* nobody will hear its end: the server that asked for it is gone */
        snprintf(c->message, sizeof c->message, "%s",
                 c->state == RS_CAPTURES_RUNNING
                     ? "the server restarted while it ran: its end was not heard (records marked "
                       "with it before the restart are stored)"
                     : "the server restarted before its collector reported it started: ask again");
        c->state = RS_CAPTURES_EXPIRED;
        c->ended_ns = now_ns;
        touch(cs, c);
        cs->stats.expired++;
    }
    if (c->id >= cs->next_id)
        cs->next_id = c->id; /* ids stay unique across restarts, whatever the clock did */
out:
    pthread_mutex_unlock(&cs->lock);
    return rc;
}

void
rs_captures_forget_job(rs_captures *cs, const char *job)
{
    pthread_mutex_lock(&cs->lock);
    for (uint32_t i = 0; i < cs->n_caps;) {
        if (strcmp(cs->caps[i].job, job) != 0) {
            i++;
            continue;
        }
        cs->caps[i] = cs->caps[--cs->n_caps]; /* (the last moves here, with its mark) */
        cs->dirty[i] = cs->dirty[cs->n_caps];
    }
    for (uint32_t i = 0; i < cs->n_gone;) /* the job's deletion removes them from the store */
        if (strcmp(cs->gone[i].job, job) == 0)
            cs->gone[i] = cs->gone[--cs->n_gone];
        else
            i++;
    for (uint32_t b = 0; b < ROUTE_BUCKETS; b++)
        for (struct route **r = &cs->routes[b]; *r;) {
            if (strcmp((*r)->job, job) == 0) {
                struct route *dead = *r;
                *r = dead->next;
                free(dead);
                cs->n_routes--;
            } else
                r = &(*r)->next;
        }
    pthread_mutex_unlock(&cs->lock);
}
