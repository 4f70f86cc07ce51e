/* Per-rank summaries: window totals and measured steps (see summary.h). */
#include "node-agent/summary.h"

#include "common/array.h"
#include "common/hash.h"
#include "common/pos_index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One open total: a kernel name (key = id in s->names) or a copy kind in one window. */
struct rs_summary_total {
    uint64_t window;
    uint32_t key;
    bool copy;
    uint64_t count, total_ns, max_ns, bytes;
};

void
rs_rank_summary_init(struct rs_rank_summary *s, uint64_t window_ns)
{
    memset(s, 0, sizeof *s);
    s->window_ns = window_ns ? window_ns : 1;
    rs_strtab_init(&s->names);
}

void
rs_rank_summary_fini(struct rs_rank_summary *s)
{
    rs_strtab_fini(&s->names);
    free(s->totals);
    free(s->slots);
    rs_intervals_fini(&s->intervals);
    free(s->steps);
    memset(s, 0, sizeof *s);
}

static uint64_t
key_hash(uint64_t window, uint32_t key, bool copy)
{
    uint64_t k[2] = {window, (uint64_t)key << 1 | copy};
    return rs_hash_fnv1a64(k, sizeof k);
}

static uint64_t
total_hash(const void *item)
{
    const struct rs_summary_total *t = item;
    return key_hash(t->window, t->key, t->copy);
}

/* Adds one launch or copy to its window's total. */
static int
add_to_total(struct rs_rank_summary *s, uint64_t start, uint64_t dur, uint32_t key, bool copy,
             uint64_t bytes)
{
    uint64_t window = start - start % s->window_ns;
    size_t h;
    int rc;

    if ((rc = rs_pos_index_grow(&s->slots, &s->n_slots, s->n_totals, s->totals, sizeof *s->totals,
                                total_hash)) != 0)
        return rc;
    for (h = key_hash(window, key, copy) & (s->n_slots - 1); s->slots[h];
         h = (h + 1) & (s->n_slots - 1)) {
        struct rs_summary_total *t = &s->totals[s->slots[h] - 1];
        if (t->window == window && t->key == key && t->copy == copy) {
            t->count++;
            t->total_ns += dur;
            t->bytes += bytes;
            if (dur > t->max_ns)
                t->max_ns = dur;
            return 0;
        }
    }
    if (RS_ARRAY_RESERVE(s->totals, s->cap_totals, s->n_totals, 1) != 0)
        return -ENOMEM;
    s->totals[s->n_totals] = (struct rs_summary_total){window, key, copy, 1, dur, dur, bytes};
    s->slots[h] = (uint32_t)++s->n_totals;
    return 0;
}

static void
note_end(struct rs_rank_summary *s, uint64_t end)
{
    if (end > s->newest_ns)
        s->newest_ns = end;
}

/* Inserts a step in step order (a repeated number replaces the earlier record). */
static int
add_step(struct rs_rank_summary *s, const struct rs_step_record *st)
{
    size_t i = s->n_steps;

    while (i > 0 && s->steps[i - 1].step > st->step)
        i--;
    if (i > 0 && s->steps[i - 1].step == st->step) {
        s->steps[i - 1] = *st;
        return 0;
    }
    if (RS_ARRAY_RESERVE(s->steps, s->cap_steps, s->n_steps, 1) != 0)
        return -ENOMEM;
    memmove(&s->steps[i + 1], &s->steps[i], (s->n_steps - i) * sizeof *s->steps);
    s->steps[i] = *st;
    s->steps[i].measured = false;
    s->n_steps++;
    return 0;
}

int
rs_rank_summary_absorb(struct rs_rank_summary *s, struct rs_records *r,
                       const struct rs_summary_unseen *from)
{
    if (!s->marked && r->steps.count == 0) { /* records stay records; note how far they reach */
        for (uint32_t i = from->kernels; i < r->kernels.count; i++)
            note_end(s, r->kernels.items[i].end_ns);
        for (uint32_t i = from->memcpys; i < r->memcpys.count; i++)
            note_end(s, r->memcpys.items[i].end_ns);
        return 0;
    }
    s->marked = true;
    /* r's name ids -> ours, each name interned once per call rather than once per launch */
    uint32_t *ids = malloc((r->names.count ? r->names.count : 1) * sizeof *ids);
    int rc = 0;

    if (!ids)
        rc = -ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < r->names.count; i++)
        ids[i] = RS_STRTAB_NONE;
    for (uint32_t i = 0; i < r->kernels.count && rc == 0; i++) {
        const struct rs_kernel_record *k = &r->kernels.items[i];
        uint32_t id = ids[k->name_id];
        if (id == RS_STRTAB_NONE &&
            (id = ids[k->name_id] = rs_strtab_intern(&s->names, r->names.strings[k->name_id])) ==
                RS_STRTAB_NONE) {
            rc = -ENOMEM;
            break;
        }
        if ((rc = add_to_total(s, k->start_ns, k->end_ns - k->start_ns, id, false, 0)) == 0)
            rc = rs_intervals_add(&s->intervals, k->start_ns, k->end_ns, false);
        note_end(s, k->end_ns);
    }
    for (uint32_t i = 0; i < r->memcpys.count && rc == 0; i++) {
        const struct rs_memcpy_record *m = &r->memcpys.items[i];
        rc = add_to_total(s, m->start_ns, m->end_ns - m->start_ns, m->kind, true, m->bytes);
        note_end(s, m->end_ns);
    }
    for (uint32_t i = from->collectives; i < r->collectives.count && rc == 0; i++) {
        const struct rs_collective_record *c = &r->collectives.items[i];
        rc = rs_intervals_add(&s->intervals, c->start_ns, c->end_ns, true);
        note_end(s, c->end_ns);
    }
    for (uint32_t i = 0; i < r->steps.count && rc == 0; i++) {
        rc = add_step(s, &r->steps.items[i]);
        note_end(s, r->steps.items[i].end_ns);
    }
    r->kernels.count = r->memcpys.count = r->steps.count = 0;
    free(ids);
    return rc;
}

/* Emits the totals of windows that have settled (all when `everything`) and keeps the rest. */
static int
emit_totals(struct rs_rank_summary *s, struct rs_records *r, bool everything)
{
    size_t kept = 0;
    int rc = 0;

    for (size_t i = 0; i < s->n_totals; i++) {
        const struct rs_summary_total *t = &s->totals[i];
        if (rc != 0 ||
            (!everything && t->window + s->window_ns + RS_SUMMARY_SETTLE_NS > s->newest_ns)) {
            s->totals[kept++] = *t;
            continue;
        }
        if (t->copy) {
            struct rs_copy_total ct = {t->window,   s->window_ns, t->key,  t->count,
                                       t->total_ns, t->max_ns,    t->bytes};
            rc = rs_records_add_copy_total(r, &ct);
        } else {
            uint32_t id = rs_strtab_intern(&r->names, s->names.strings[t->key]);
            struct rs_kernel_total kt = {t->window, s->window_ns, id,
                                         t->count,  t->total_ns,  t->max_ns};
            rc = id == RS_STRTAB_NONE ? -ENOMEM : rs_records_add_kernel_total(r, &kt);
        }
        if (rc != 0)
            s->totals[kept++] = *t; /* not sent: keep it for the next flush */
    }
    if (kept == s->n_totals)
        return rc;
    s->n_totals = kept;
    if (kept == 0) /* the names of emitted windows are not needed any more */
        rs_strtab_clear(&s->names);
    rs_pos_index_refill(s->slots, s->n_slots, s->n_totals, s->totals, sizeof *s->totals,
                        total_hash);
    return rc;
}

/* Emits the steps that have settled (all when `everything`), measured over the intervals. */
static int
emit_steps(struct rs_rank_summary *s, struct rs_records *r, bool everything)
{
    size_t done = 0;
    int rc = 0;

    rs_intervals_sort(&s->intervals);
    for (; done < s->n_steps && rc == 0; done++) {
        struct rs_step_record st = s->steps[done];
        bool has_next = done + 1 < s->n_steps;
        if (has_next && s->steps[done + 1].step == st.step + 1 &&
            s->steps[done + 1].start_ns > st.end_ns)
            st.end_ns = s->steps[done + 1].start_ns; /* until the next one starts */
        if (!everything && (!has_next || st.end_ns + RS_SUMMARY_SETTLE_NS > s->newest_ns))
            break;
        rs_intervals_measure(&s->intervals, st.start_ns, st.end_ns, &st.metrics);
        st.measured = true;
        if ((rc = rs_records_add_step(r, &st)) != 0)
            break;
    }
    if (done > 0) { /* (s->steps may be NULL: never memmove NULL, even 0 bytes) */
        memmove(s->steps, s->steps + done, (s->n_steps - done) * sizeof *s->steps);
        s->n_steps -= done;
    }
    /* kernels no pending step can reach, and when none is pending, those older than a marker that
     * may still come could need */
    uint64_t keep_from = s->n_steps                          ? s->steps[0].start_ns
                         : s->newest_ns > RS_SUMMARY_KEEP_NS ? s->newest_ns - RS_SUMMARY_KEEP_NS
                                                             : 0;
    if (everything && s->n_steps == 0)
        rs_intervals_clear(&s->intervals);
    else
        rs_intervals_drop_before(&s->intervals, keep_from);
    return rc;
}

int
rs_rank_summary_emit(struct rs_rank_summary *s, struct rs_records *r, bool everything)
{
    int rc = emit_totals(s, r, everything);
    int src = emit_steps(s, r, everything);
    return rc ? rc : src;
}

bool
rs_rank_summary_pending(const struct rs_rank_summary *s)
{
    return s->n_totals > 0 || s->n_steps > 0;
}
