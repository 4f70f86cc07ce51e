/* The heatmap's cache of older steps (heatmap_int.h): per job and metric, each rank's sums in at
 * most RS_HEATMAP_CACHE_BINS base bins of a power-of-two width (doubled, pairs merged, as the job
 * grows), so that the whole-job heatmap of a running job reads each stored step once instead of
 * once per answer (5.6 million rank-steps of a 1,024-rank hour took 1.5 s to read again). The
 * entries use at most the cache's byte budget; the least recently used goes first. The cache's
 * lock covers only its list: each entry has its own, held while it reads the store (the first
 * answer of a large job reads for seconds), so other jobs' heatmaps do not wait for it. */
#include "query/heatmap_int.h"

#include "common/array.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RS_HEATMAP_CACHE_BINS 1024u

struct entry {
    struct entry *next;
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint64_t job_first_ns;
    int metric;
    size_t n_ranks;
    uint32_t *rank_ids;
    uint64_t *covered; /* per rank: its steps below are held (or final without a value) */
    uint64_t width, first_bin;
    size_t n_bins;                     /* in use, from first_bin; at most RS_HEATMAP_CACHE_BINS */
    double *sum_ms;                    /* [i * RS_HEATMAP_CACHE_BINS + k] */
    uint32_t *count;                   /* the same */
    uint64_t bin_start[RS_HEATMAP_CACHE_BINS];
    uint64_t lowest, stored, without;
    uint64_t used; /* the cache's clock when last used */
    size_t bytes;
    pthread_mutex_t lock; /* the fields above, while in use */
    unsigned users;       /* queries holding it (the cache's lock) */
    bool gone;            /* out of the list: freed by its last user (the cache's lock) */
};

struct rs_heatmap_cache {
    pthread_mutex_t lock;
    struct entry *entries;
    size_t bytes, max_bytes;
    uint64_t clock;
};

rs_heatmap_cache *
rs_heatmap_cache_new(size_t max_bytes)
{
    rs_heatmap_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    c->max_bytes = max_bytes;
    return c;
}

static void
entry_free(struct entry *e)
{
    if (!e)
        return;
    pthread_mutex_destroy(&e->lock);
    free(e->rank_ids);
    free(e->covered);
    free(e->sum_ms);
    free(e->count);
    free(e);
}

/* Takes e out of the list (the cache's lock held); freed now, or by its last user. */
static void
unlink_entry(rs_heatmap_cache *c, struct entry *e)
{
    for (struct entry **p = &c->entries; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            c->bytes -= e->bytes;
            break;
        }
    e->gone = true;
    if (!e->users)
        entry_free(e);
}

void
rs_heatmap_cache_free(rs_heatmap_cache *c)
{
    if (!c)
        return;
    while (c->entries) /* no query runs any more: none is in use */
        unlink_entry(c, c->entries);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static size_t
entry_bytes(size_t n_ranks)
{
    return sizeof(struct entry) + n_ranks * (sizeof(uint32_t) + sizeof(uint64_t)) +
           n_ranks * RS_HEATMAP_CACHE_BINS * (sizeof(double) + sizeof(uint32_t));
}

static struct entry *
entry_new(const char *job, uint64_t job_first_ns, int metric, const struct rs_rank_steps *ranks,
          size_t n)
{
    struct entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    snprintf(e->job, sizeof e->job, "%s", job);
    e->job_first_ns = job_first_ns;
    e->metric = metric;
    e->n_ranks = n;
    e->width = 1;
    e->lowest = UINT64_MAX;
    e->bytes = entry_bytes(n);
    if (pthread_mutex_init(&e->lock, NULL) != 0) {
        free(e);
        return NULL;
    }
    e->rank_ids = malloc((n ? n : 1) * sizeof *e->rank_ids);
    e->covered = calloc(n ? n : 1, sizeof *e->covered);
    e->sum_ms = calloc(n * RS_HEATMAP_CACHE_BINS + 1, sizeof *e->sum_ms);
    e->count = calloc(n * RS_HEATMAP_CACHE_BINS + 1, sizeof *e->count);
    if (!e->rank_ids || !e->covered || !e->sum_ms || !e->count) {
        entry_free(e);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        e->rank_ids[i] = ranks[i].rank;
    for (size_t k = 0; k < RS_HEATMAP_CACHE_BINS; k++)
        e->bin_start[k] = UINT64_MAX;
    return e;
}

/* Whether e still describes this job's load: the same job, the same ranks, and no rank's loaded
 * steps begin before what e holds of it. */
static bool
entry_fits(const struct entry *e, uint64_t job_first_ns, const struct rs_rank_steps *ranks,
           size_t n)
{
    if (e->job_first_ns != job_first_ns || e->n_ranks != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (e->rank_ids[i] != ranks[i].rank ||
            (ranks[i].n && e->covered[i] > ranks[i].steps[0].step))
            return false;
    return true;
}

/* Doubles the bins' width: pairs merge (bin index halves). */
static void
widen(struct entry *e)
{
    uint64_t first = e->first_bin / 2;
    size_t n = (size_t)((e->first_bin + e->n_bins - 1) / 2 - first + 1);

    for (size_t i = 0; i < e->n_ranks; i++) {
        double *s = e->sum_ms + i * RS_HEATMAP_CACHE_BINS;
        uint32_t *k = e->count + i * RS_HEATMAP_CACHE_BINS;
        for (size_t b = 0; b < e->n_bins; b++) { /* to index (first_bin + b) / 2 - first <= b */
            size_t to = (size_t)((e->first_bin + b) / 2 - first);
            double v = s[b];
            uint32_t c = k[b];
            s[b] = 0;
            k[b] = 0;
            s[to] += v;
            k[to] += c;
        }
    }
    for (size_t b = 0; b < e->n_bins; b++) {
        size_t to = (size_t)((e->first_bin + b) / 2 - first);
        uint64_t v = e->bin_start[b];
        e->bin_start[b] = UINT64_MAX;
        if (v < e->bin_start[to])
            e->bin_start[to] = v;
    }
    e->first_bin = first;
    e->n_bins = n;
    e->width *= 2;
}

/* Moves every rank's bins `by` places up (room for lower steps). */
static void
shift_up(struct entry *e, size_t by)
{
    for (size_t i = 0; i < e->n_ranks; i++) {
        double *s = e->sum_ms + i * RS_HEATMAP_CACHE_BINS;
        uint32_t *k = e->count + i * RS_HEATMAP_CACHE_BINS;
        memmove(s + by, s, e->n_bins * sizeof *s);
        memmove(k + by, k, e->n_bins * sizeof *k);
        memset(s, 0, by * sizeof *s);
        memset(k, 0, by * sizeof *k);
    }
    memmove(e->bin_start + by, e->bin_start, e->n_bins * sizeof e->bin_start[0]);
    for (size_t b = 0; b < by; b++)
        e->bin_start[b] = UINT64_MAX;
    e->first_bin -= by;
    e->n_bins += by;
}

/* The bin of `step`, the bins widened or moved so that it fits. */
static size_t
bin_of(struct entry *e, uint64_t step)
{
    if (!e->n_bins) {
        e->first_bin = step / e->width;
        e->n_bins = 1;
    }
    for (;;) {
        uint64_t b = step / e->width;
        uint64_t lo = b < e->first_bin ? b : e->first_bin;
        uint64_t hi = b >= e->first_bin + e->n_bins ? b : e->first_bin + e->n_bins - 1;
        if (hi - lo >= RS_HEATMAP_CACHE_BINS) {
            widen(e);
            continue;
        }
        if (b < e->first_bin)
            shift_up(e, (size_t)(e->first_bin - b));
        if (b >= e->first_bin + e->n_bins)
            e->n_bins = (size_t)(b - e->first_bin + 1);
        return (size_t)(b - e->first_bin);
    }
}

/* One rank's scan into the entry (final steps) or the answer's extras (the rest). */
struct fill {
    struct entry *e;
    size_t i;
    uint64_t final_before_ns; /* a step without a value that started before this is final */
    bool all_final;           /* no step that is not final seen yet */
    struct rs__heatmap_older *out;
    size_t cap_extra, cap_pending;
    int rc;
};

static void
fill_add(void *arg, uint64_t step, uint64_t start_ns, uint64_t value_ns, bool has_value)
{
    struct fill *f = arg;
    struct entry *e = f->e;

    if (f->all_final && (has_value || start_ns < f->final_before_ns)) {
        if (has_value) {
            size_t b = bin_of(e, step);
            e->sum_ms[f->i * RS_HEATMAP_CACHE_BINS + b] += (double)value_ns / 1e6;
            e->count[f->i * RS_HEATMAP_CACHE_BINS + b]++;
            if (start_ns < e->bin_start[b])
                e->bin_start[b] = start_ns;
            e->lowest = step < e->lowest ? step : e->lowest;
            e->stored++;
        } else {
            e->without++;
        }
        e->covered[f->i] = step + 1;
        return;
    }
    f->all_final = false;
    if (!has_value) {
        if (RS_ARRAY_RESERVE(f->out->pending, f->cap_pending, f->out->n_pending, 1) != 0)
            f->rc = -ENOMEM;
        else
            f->out->pending[f->out->n_pending++] = (struct rs__heatmap_extra){f->i, step, start_ns, 0};
        return;
    }
    if (RS_ARRAY_RESERVE(f->out->extra, f->cap_extra, f->out->n_extra, 1) != 0) {
        f->rc = -ENOMEM;
        return;
    }
    f->out->extra[f->out->n_extra++] = (struct rs__heatmap_extra){f->i, step, start_ns, value_ns};
}

/* Reads what e lacks of each rank: from what it covers to the rank's first loaded step. */
static int
entry_update(struct entry *e, rs_store_read *r, const struct rs_rank_steps *ranks, size_t n,
             struct rs__heatmap_older *out)
{
    uint64_t newest = 0;
    int rc;

    for (size_t i = 0; i < n; i++)
        if (ranks[i].n && ranks[i].steps[ranks[i].n - 1].start_ns > newest)
            newest = ranks[i].steps[ranks[i].n - 1].start_ns;
    for (size_t i = 0; i < n; i++) {
        uint64_t end = ranks[i].n ? ranks[i].steps[0].step : 0; /* exclusive */
        struct fill f = {e, i, newest > RS_HEATMAP_FINAL_NS ? newest - RS_HEATMAP_FINAL_NS : 0,
                         true, out, 0, 0, 0};
        if (e->covered[i] >= end)
            continue;
        if ((rc = rs__heatmap_scan_older(r, e->job, ranks[i].rank, e->metric, e->covered[i],
                                         end - 1, fill_add, &f)) != 0)
            return rc;
        if (f.rc)
            return f.rc;
        if (f.all_final)
            e->covered[i] = end;
    }
    return 0;
}

static int
copy_out(const struct entry *e, struct rs__heatmap_older *o)
{
    size_t n = e->n_ranks * e->n_bins;

    o->width = e->width;
    o->first_bin = e->first_bin;
    o->n_bins = e->n_bins;
    o->n_ranks = e->n_ranks;
    o->lowest = e->lowest;
    o->stored = e->stored;
    o->without = e->without;
    o->sum_ms = malloc((n ? n : 1) * sizeof *o->sum_ms);
    o->count = malloc((n ? n : 1) * sizeof *o->count);
    o->bin_start = malloc((e->n_bins ? e->n_bins : 1) * sizeof *o->bin_start);
    if (!o->sum_ms || !o->count || !o->bin_start)
        return -ENOMEM;
    for (size_t i = 0; i < e->n_ranks; i++) {
        memcpy(o->sum_ms + i * e->n_bins, e->sum_ms + i * RS_HEATMAP_CACHE_BINS,
               e->n_bins * sizeof *o->sum_ms);
        memcpy(o->count + i * e->n_bins, e->count + i * RS_HEATMAP_CACHE_BINS,
               e->n_bins * sizeof *o->count);
    }
    memcpy(o->bin_start, e->bin_start, e->n_bins * sizeof *o->bin_start);
    return 0;
}

bool
rs__heatmap_cache_fits(const rs_heatmap_cache *c, size_t n_ranks)
{
    return entry_bytes(n_ranks) <= c->max_bytes;
}

/* Room for `bytes` more (the cache's lock held): the least recently used entries nobody uses go.
 * False when the entries in use leave no room. */
static bool
make_room(rs_heatmap_cache *c, size_t bytes)
{
    while (c->bytes + bytes > c->max_bytes) {
        struct entry *old = NULL;
        for (struct entry *x = c->entries; x; x = x->next)
            if (!x->users && (!old || x->used < old->used))
                old = x;
        if (!old)
            return false;
        unlink_entry(c, old);
    }
    return true;
}

/* Lets go of e (its lock held). */
static void
release(rs_heatmap_cache *c, struct entry *e)
{
    pthread_mutex_unlock(&e->lock);
    pthread_mutex_lock(&c->lock);
    if (--e->users == 0 && e->gone)
        entry_free(e);
    pthread_mutex_unlock(&c->lock);
}

/* The entry for (job, metric) that fits this load, locked and held; NULL with *rc. */
static struct entry *
acquire(rs_heatmap_cache *c, const char *job, int metric, uint64_t job_first_ns,
        const struct rs_rank_steps *ranks, size_t n, int *rc)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        struct entry *e;
        pthread_mutex_lock(&c->lock);
        for (e = c->entries; e && (e->metric != metric || strcmp(e->job, job) != 0); e = e->next)
            ;
        if (!e) {
            if (!make_room(c, entry_bytes(n))) {
                pthread_mutex_unlock(&c->lock);
                *rc = -E2BIG; /* every entry in use: read directly this time */
                return NULL;
            }
            if (!(e = entry_new(job, job_first_ns, metric, ranks, n))) {
                pthread_mutex_unlock(&c->lock);
                *rc = -ENOMEM;
                return NULL;
            }
            e->next = c->entries;
            c->entries = e;
            c->bytes += e->bytes;
        }
        e->users++;
        e->used = ++c->clock;
        pthread_mutex_unlock(&c->lock);
        pthread_mutex_lock(&e->lock);
        if (entry_fits(e, job_first_ns, ranks, n))
            return e;
        /* another job under the name, other ranks, or loaded steps it holds: start over */
        pthread_mutex_unlock(&e->lock);
        pthread_mutex_lock(&c->lock);
        e->users--;
        if (!e->gone)
            unlink_entry(c, e); /* frees it unless another query still holds it */
        else if (!e->users)
            entry_free(e);
        pthread_mutex_unlock(&c->lock);
    }
    *rc = -EAGAIN; /* replaced under us twice: read directly this time */
    return NULL;
}

int
rs__heatmap_cache_older(rs_heatmap_cache *c, rs_store_read *r, const char *job, int metric,
                        const struct rs_rank_steps *ranks, size_t n,
                        struct rs__heatmap_older *out)
{
    struct rs_job_info info;
    struct entry *e;
    int rc;

    memset(out, 0, sizeof *out);
    out->lowest = UINT64_MAX;
    if (!rs__heatmap_cache_fits(c, n))
        return -E2BIG;
    if ((rc = rs_store_job_get(r, job, &info)) != 0)
        return rc;
    if (!(e = acquire(c, job, metric, info.first_ns, ranks, n, &rc)))
        return rc;
    /* a read that stops half way (a deadline) leaves e consistent: each rank's `covered` moves
     * with every step it takes in */
    if ((rc = entry_update(e, r, ranks, n, out)) == 0)
        rc = copy_out(e, out);
    release(c, e);
    if (rc != 0)
        rs__heatmap_older_fini(out);
    return rc;
}

void
rs__heatmap_older_fini(struct rs__heatmap_older *o)
{
    free(o->sum_ms);
    free(o->count);
    free(o->bin_start);
    free(o->extra);
    free(o->pending);
    memset(o, 0, sizeof *o);
    o->lowest = UINT64_MAX;
}
