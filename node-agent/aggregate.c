/* Per-(job, rank) merging of collector frames (see aggregate.h). */
#include "node-agent/aggregate.h"

#include "common/array.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "node-agent/demangle.h"
#include "node-agent/records.h"
#include "node-agent/summary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rank_slot {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    char *host, *gpu_uuid;
    struct rs_rank_identity identity;
    struct rs_clock_pair clock;
    uint64_t dropped_records;
    uint32_t collector_flags;
    char collector_status[256];
    bool dirty;               /* anything to report since the last flush */
    unsigned idle_flushes;    /* consecutive flushes with nothing from this rank */
    uint64_t last_add_ns;     /* CLOCK_MONOTONIC of its latest frame */
    uint64_t unsent_since_ns; /* and of its first frame since its records were last sent */
    bool held;                /* this flush keeps its records (waits_for_marker) */
    size_t bytes;             /* its frames' encoded size since its records were last sent */
    struct rs_records records;
    struct rs_rank_summary summary; /* with summaries on (summary.h) */
    /* captures (proto/capture.h): the capture the pending records were traced for (0: none),
     * and the collector's reports since the last flush (NULL until the first) */
    uint64_t capture_id;
    struct rs_capture_report *captures;
    uint32_t n_captures;
    /* what the marked frames held of that capture, counted as they came (keep_captures) */
    uint64_t capture_kernels, capture_stall_samples;
    /* Loss accounting (rankscope.proto RankBatch.frame_seq): one slot per collector handle */
    uint64_t collector_id, frame_seq, records_sent; /* of the newest frame merged */
    uint64_t frames, frame_records;                 /* merged since the last flush */
};

/* A rank silent for this many flushes (about 5 minutes at the default 250 ms) has finished or
 * moved: its slot and buffers are released, so a long-lived agent does not grow with every job
 * it has ever seen. */
#define IDLE_FLUSHES_BEFORE_EVICTION 1200u

struct rs_aggregate {
    struct rank_slot *slots;
    size_t n, cap;
    size_t pending_bytes;
    uint64_t frame_gaps; /* frames of a collector this agent never received (numbers skipped) */
    rs_demangler *demangler;    /* NULL: names as they came */
    uint64_t summary_window_ns; /* 0: records as they are */
    bool close_windows;         /* the next flush emits every pending summary */
};

int
rs_aggregate_new(rs_aggregate **out)
{
    rs_aggregate *a = calloc(1, sizeof *a);

    if (!a)
        return -ENOMEM;
    *out = a;
    return 0;
}

static void
slot_fini(struct rank_slot *s)
{
    free(s->host);
    free(s->gpu_uuid);
    free(s->captures);
    rs_records_fini(&s->records);
    rs_rank_summary_fini(&s->summary);
}

void
rs_aggregate_free(rs_aggregate *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        slot_fini(&a->slots[i]);
    free(a->slots);
    free(a);
}

static void
evict_idle(rs_aggregate *a)
{
    for (size_t i = 0; i < a->n;) {
        struct rank_slot *s = &a->slots[i];
        if (s->dirty || ++s->idle_flushes < IDLE_FLUSHES_BEFORE_EVICTION ||
            rs_rank_summary_pending(&s->summary)) {
            i++;
            continue;
        }
        slot_fini(s);
        *s = a->slots[--a->n]; /* order does not matter */
    }
}

/* A rank's slot is its collector's: frames of a restarted rank (a new collector handle, numbered
 * from 1 again) are counted apart from its predecessor's. */
static struct rank_slot *
find_slot(rs_aggregate *a, const struct rs_rank_batch *b)
{
    const struct rs_rank_identity *id = &b->identity;

    for (size_t i = 0; i < a->n; i++)
        if (a->slots[i].identity.rank == id->rank && a->slots[i].collector_id == b->collector_id &&
            strcmp(a->slots[i].job, id->job) == 0)
            return &a->slots[i];
    if (RS_ARRAY_RESERVE(a->slots, a->cap, a->n, 1) != 0)
        return NULL;
    struct rank_slot *s = &a->slots[a->n];
    memset(s, 0, sizeof *s);
    snprintf(s->job, sizeof s->job, "%s", id->job);
    s->collector_id = b->collector_id;
    rs_records_init(&s->records);
    rs_rank_summary_init(&s->summary, a->summary_window_ns);
    a->n++;
    return s;
}

/* Keeps the newest identity (a restarted rank has a new pid, maybe a new GPU). */
static int
set_identity(struct rank_slot *s, const struct rs_rank_identity *id)
{
    char *host = strdup(id->host ? id->host : ""), *uuid = strdup(id->gpu_uuid ? id->gpu_uuid : "");

    if (!host || !uuid) {
        free(host);
        free(uuid);
        return -ENOMEM;
    }
    free(s->host);
    free(s->gpu_uuid);
    s->host = host;
    s->gpu_uuid = uuid;
    /* identity.job is set at flush time: the slot array moves when it grows, so no pointer into a
     * slot may be kept in the slot */
    s->identity = *id;
    s->identity.job = NULL;
    s->identity.host = s->host;
    s->identity.gpu_uuid = s->gpu_uuid;
    return 0;
}

void
rs_aggregate_set_demangler(rs_aggregate *a, rs_demangler *d)
{
    a->demangler = d;
}

void
rs_aggregate_set_summary(rs_aggregate *a, uint64_t window_ns)
{
    a->summary_window_ns = window_ns;
}

void
rs_aggregate_close_windows(rs_aggregate *a)
{
    a->close_windows = true;
}

/* Merges b's records into the slot, its names through the demangler when there is one. */
static int
merge(rs_aggregate *a, struct rank_slot *s, const struct rs_rank_batch *b)
{
    if (!a->demangler || b->n_strings == 0)
        return rs_records_merge(&s->records, b);
    const char **names = malloc(b->n_strings * sizeof *names);
    if (!names)
        return -ENOMEM;
    for (uint32_t i = 0; i < b->n_strings; i++)
        names[i] = rs_demangler_name(a->demangler, b->strings[i]);
    struct rs_rank_batch readable = *b;
    readable.strings = names;
    int rc = rs_records_merge(&s->records, &readable);
    free(names);
    return rc;
}

/* Keeps the frame's capture mark and reports for the next flush; past RS_CAPTURE_MAX_REPORTS
 * in one flush (a collector that repeats itself) the rest are dropped (the server expires a
 * capture it hears nothing more of). A marked frame's kernels and stall samples are counted here,
 * as the frame comes: with summaries on, its kernels go out as totals only once their window has
 * settled (summary.h), seconds later and in a batch no longer marked, so the server cannot count
 * them by the batch that carries the mark (that counted earlier windows' totals instead: 0 and 554
 * kernels for captures of 5 s on the H100, docs/BENCHMARKS.md "Noise first"). Frames of two
 * captures merged into one flush count for the newer one. */
static int
keep_captures(struct rank_slot *s, const struct rs_rank_batch *b)
{
    if (b->capture_id) {
        s->capture_id = b->capture_id;
        s->capture_kernels += b->n_kernels;
        for (uint32_t i = 0; i < b->n_kernel_totals; i++)
            s->capture_kernels += b->kernel_totals[i].count;
        for (uint32_t i = 0; i < b->n_stalls; i++)
            s->capture_stall_samples += b->stalls[i].count;
    }
    if (b->n_captures == 0)
        return 0;
    if (!s->captures && !(s->captures = malloc(RS_CAPTURE_MAX_REPORTS * sizeof *s->captures)))
        return -ENOMEM;
    for (uint32_t i = 0; i < b->n_captures && s->n_captures < RS_CAPTURE_MAX_REPORTS; i++)
        s->captures[s->n_captures++] = b->captures[i];
    return 0;
}

int
rs_aggregate_add(rs_aggregate *a, const struct rs_rank_batch *b)
{
    struct rank_slot *s = find_slot(a, b);
    int rc;

    if (!s)
        return -ENOMEM;
    struct rs_summary_unseen unseen = {s->records.kernels.count, s->records.memcpys.count,
                                       s->records.collectives.count};
    if ((rc = set_identity(s, &b->identity)) || (rc = keep_captures(s, b)) ||
        (rc = merge(a, s, b)) ||
        (a->summary_window_ns && (rc = rs_rank_summary_absorb(&s->summary, &s->records, &unseen))))
        return rc;
    s->last_add_ns = rs_clock_mono_ns();
    if (s->bytes == 0)
        s->unsent_since_ns = s->last_add_ns;
    s->clock = b->clock;
    if (b->dropped_records > s->dropped_records)
        s->dropped_records = b->dropped_records;
    s->collector_flags = b->collector_flags; /* the collector's latest word */
    snprintf(s->collector_status, sizeof s->collector_status, "%s",
             b->collector_status ? b->collector_status : "");
    if (b->frame_seq) {
        /* A number skipped: frames the socket took that this agent never read (it was killed
         * with them queued, or refused their connection); the server counts them too. */
        if (s->frame_seq && b->frame_seq > s->frame_seq + b->frames)
            a->frame_gaps += b->frame_seq - s->frame_seq - b->frames;
        if (b->frame_seq > s->frame_seq) {
            s->frame_seq = b->frame_seq;
            s->records_sent = b->records_sent;
        }
        s->frames += b->frames;
        s->frame_records += (uint64_t)b->n_kernels + b->n_memcpys + b->n_collectives + b->n_steps +
                            b->n_stalls + b->n_kernel_totals + b->n_copy_totals;
    }
    s->dirty = true;
    /* Frames are encoded the same way, so their sizes predict the merged request's. */
    s->bytes += rs_wire_rank_batch_size(b);
    a->pending_bytes += rs_wire_rank_batch_size(b);
    return 0;
}

size_t
rs_aggregate_pending_bytes(const rs_aggregate *a)
{
    return a->pending_bytes;
}

uint64_t
rs_aggregate_pending_records(const rs_aggregate *a)
{
    uint64_t n = 0;

    for (size_t i = 0; i < a->n; i++)
        n += rs_records_count(&a->slots[i].records);
    return n;
}

/* Moves what each rank's summary has ready into its records: everything of ranks quiet for
 * RS_SUMMARY_SETTLE_NS (finished, or stopped) and of all ranks when asked to close windows. A rank
 * that emits something is reported in this flush. */
static void
emit_summaries(rs_aggregate *a)
{
    uint64_t now = rs_clock_mono_ns();

    for (size_t i = 0; i < a->n; i++) {
        struct rank_slot *s = &a->slots[i];
        if (!rs_rank_summary_pending(&s->summary))
            continue;
        bool quiet = now - s->last_add_ns >= RS_SUMMARY_SETTLE_NS;
        uint64_t before = rs_records_count(&s->records);
        if (rs_rank_summary_emit(&s->summary, &s->records, quiet || a->close_windows) != 0)
            rs_log_limited(30, RS_LOG_ERROR, "RS-AGENT-SUMMARY",
                           "out of memory summarizing rank %u of %s: retrying at the next flush",
                           s->identity.rank, s->job);
        if (rs_records_count(&s->records) > before)
            s->dirty = true;
    }
    a->close_windows = false;
}

/* Until its first step marker a summarizing rank's records go as they are (summary.h), but the
 * collector may hand a step's marker over in a later frame than the kernels it marks (on 2 x H200:
 * up to 485 launches, a rank's first 8 steps, went as records). So while a rank has no marker, its
 * records wait up to RS_SUMMARY_SETTLE_NS for one before they go as records — not when the windows
 * are being closed (the agent is stopping), nor past HOLD_BYTES. (A job that marks no steps sends
 * its records that much later.) */
#define HOLD_BYTES (1u << 20)

static bool
waits_for_marker(const rs_aggregate *a, const struct rank_slot *s, uint64_t now, bool closing)
{
    return a->summary_window_ns && !closing && s->dirty && !s->summary.marked &&
           now - s->unsent_since_ns < RS_SUMMARY_SETTLE_NS && s->bytes < HOLD_BYTES;
}

int
rs_aggregate_flush(rs_aggregate *a, struct rs_agent_batch *env, uint8_t **out, size_t *out_len,
                   uint64_t *dropped_records)
{
    struct rs_rank_batch *ranks = calloc(a->n ? a->n : 1, sizeof *ranks);
    uint64_t now = rs_clock_mono_ns();
    bool closing = a->close_windows;
    uint32_t n = 0;
    int rc;

    *dropped_records = 0;
    if (!ranks)
        return -ENOMEM;
    if (a->summary_window_ns)
        emit_summaries(a);
    for (size_t i = 0; i < a->n; i++) {
        struct rank_slot *s = &a->slots[i];
        s->held = waits_for_marker(a, s, now, closing);
        if (!s->dirty || s->held)
            continue;
        ranks[n].identity = s->identity;
        ranks[n].identity.job = s->job;
        ranks[n].clock = s->clock;
        ranks[n].dropped_records = s->dropped_records;
        ranks[n].collector_flags = s->collector_flags;
        ranks[n].collector_status = s->collector_status;
        ranks[n].capture_id = s->capture_id;
        ranks[n].has_capture_count = s->capture_id != 0;
        ranks[n].capture_kernels = s->capture_kernels;
        ranks[n].capture_stall_samples = s->capture_stall_samples;
        ranks[n].captures = s->captures;
        ranks[n].n_captures = s->n_captures;
        rs_records_view(&s->records, &ranks[n]);
        if (s->frames) {
            ranks[n].collector_id = s->collector_id;
            ranks[n].frame_seq = s->frame_seq;
            ranks[n].records_sent = s->records_sent;
            ranks[n].frames = s->frames;
            ranks[n].frame_records = s->frame_records;
        }
        n++;
    }
    if (n == 0) {
        free(ranks);
        evict_idle(a);
        return RS_E_NOT_FOUND;
    }
    env->ranks = ranks;
    env->n_ranks = n;
    rc = rs_wire_agent_batch_encode(env, out, out_len);
    for (size_t i = 0; i < a->n; i++) {
        struct rank_slot *s = &a->slots[i];
        if (s->held)
            continue;
        if (rc != 0)
            *dropped_records += rs_records_count(&s->records);
        /* Names are dropped too: the next batch carries only the names it uses. */
        rs_records_clear(&s->records, 1);
        s->bytes = 0;
        s->capture_id = 0;
        s->capture_kernels = s->capture_stall_samples = 0;
        s->n_captures = 0;
        s->frames = s->frame_records = 0; /* sent, or (encode failed) lost: the server sees a gap */
        if (s->dirty)
            s->idle_flushes = 0;
    }
    evict_idle(a);
    for (size_t i = 0; i < a->n; i++)
        a->slots[i].dirty = a->slots[i].held;
    a->pending_bytes = 0;
    env->ranks = NULL;
    env->n_ranks = 0;
    free(ranks);
    return rc;
}

uint64_t
rs_aggregate_frame_gaps(const rs_aggregate *a)
{
    return a->frame_gaps;
}
