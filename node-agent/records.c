/* Record arrays per kind (see records.h). */
#include "node-agent/records.h"

#include "common/pos_index.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int
vec_reserve(void **items, uint32_t *cap, uint32_t count, size_t size)
{
    if (count < *cap)
        return 0;
    uint32_t ncap = *cap ? *cap * 2 : 256;
    void *n = realloc(*items, (size_t)ncap * size);
    if (!n)
        return -ENOMEM;
    *items = n;
    *cap = ncap;
    return 0;
}

#define VEC_PUSH(vec, value)                                                                       \
    (vec_reserve((void **)&(vec).items, &(vec).cap, (vec).count, sizeof *(vec).items)              \
         ? -ENOMEM                                                                                 \
         : ((vec).items[(vec).count++] = *(value), 0))

void
rs_records_init(struct rs_records *r)
{
    memset(r, 0, sizeof *r);
    rs_strtab_init(&r->names);
}

void
rs_records_fini(struct rs_records *r)
{
    rs_strtab_fini(&r->names);
    free(r->kernels.items);
    free(r->memcpys.items);
    free(r->collectives.items);
    free(r->steps.items);
    free(r->stalls.items);
    free(r->kernel_totals.items);
    free(r->copy_totals.items);
    free(r->stall_index);
    memset(r, 0, sizeof *r);
}

uint64_t
rs_records_count(const struct rs_records *r)
{
    return (uint64_t)r->kernels.count + r->memcpys.count + r->collectives.count + r->steps.count +
           r->stalls.count + r->kernel_totals.count + r->copy_totals.count;
}

void
rs_records_clear(struct rs_records *r, int names_too)
{
    r->kernels.count = r->memcpys.count = r->collectives.count = 0;
    r->steps.count = r->stalls.count = 0;
    r->kernel_totals.count = r->copy_totals.count = 0;
    if (r->stall_index)
        memset(r->stall_index, 0, r->stall_slots * sizeof *r->stall_index);
    if (names_too)
        rs_strtab_clear(&r->names);
}

int
rs_records_add_kernel(struct rs_records *r, const struct rs_kernel_record *k)
{
    return VEC_PUSH(r->kernels, k);
}

int
rs_records_add_memcpy(struct rs_records *r, const struct rs_memcpy_record *m)
{
    return VEC_PUSH(r->memcpys, m);
}

int
rs_records_add_collective(struct rs_records *r, const struct rs_collective_record *c)
{
    return VEC_PUSH(r->collectives, c);
}

int
rs_records_add_step(struct rs_records *r, const struct rs_step_record *s)
{
    return VEC_PUSH(r->steps, s);
}

static bool
same_stall_key(const struct rs_stall_record *a, const struct rs_stall_record *b)
{
    return a->kernel_name_id == b->kernel_name_id && a->reason_id == b->reason_id &&
           a->pc_offset == b->pc_offset && a->cubin_crc == b->cubin_crc;
}

static uint64_t
stall_hash(const void *item)
{
    const struct rs_stall_record *s = item;
    uint64_t h = (s->pc_offset * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)s->kernel_name_id << 32 | s->reason_id) * 0xc2b2ae3d27d4eb4full ^
                 s->cubin_crc;
    return h ^ h >> 29;
}

int
rs_records_add_stall(struct rs_records *r, const struct rs_stall_record *s)
{
    uint64_t h = stall_hash(s);

    if (r->stall_slots)
        for (size_t i = h & (r->stall_slots - 1); r->stall_index[i];
             i = (i + 1) & (r->stall_slots - 1)) {
            struct rs_stall_record *held = &r->stalls.items[r->stall_index[i] - 1];
            if (same_stall_key(held, s)) {
                held->count += s->count;
                return 0;
            }
        }
    if (rs_pos_index_grow(&r->stall_index, &r->stall_slots, r->stalls.count, r->stalls.items,
                          sizeof *r->stalls.items, stall_hash) ||
        VEC_PUSH(r->stalls, s))
        return -ENOMEM;
    rs_pos_index_put(r->stall_index, r->stall_slots, h, r->stalls.count);
    return 0;
}

int
rs_records_add_kernel_total(struct rs_records *r, const struct rs_kernel_total *t)
{
    return VEC_PUSH(r->kernel_totals, t);
}

int
rs_records_add_copy_total(struct rs_records *r, const struct rs_copy_total *t)
{
    return VEC_PUSH(r->copy_totals, t);
}

int
rs_records_merge(struct rs_records *r, const struct rs_rank_batch *b)
{
    uint32_t *ids = malloc((b->n_strings ? b->n_strings : 1) * sizeof *ids);
    int rc = 0;

    if (!ids)
        return -ENOMEM;
    for (uint32_t i = 0; i < b->n_strings; i++)
        if ((ids[i] = rs_strtab_intern(&r->names, b->strings[i])) == RS_STRTAB_NONE) {
            rc = -ENOMEM;
            goto out;
        }
    for (uint32_t i = 0; i < b->n_kernels && rc == 0; i++) {
        struct rs_kernel_record k = b->kernels[i];
        k.name_id = ids[k.name_id];
        rc = rs_records_add_kernel(r, &k);
    }
    for (uint32_t i = 0; i < b->n_memcpys && rc == 0; i++)
        rc = rs_records_add_memcpy(r, &b->memcpys[i]);
    for (uint32_t i = 0; i < b->n_collectives && rc == 0; i++) {
        struct rs_collective_record c = b->collectives[i];
        c.name_id = ids[c.name_id];
        rc = rs_records_add_collective(r, &c);
    }
    for (uint32_t i = 0; i < b->n_steps && rc == 0; i++)
        rc = rs_records_add_step(r, &b->steps[i]);
    for (uint32_t i = 0; i < b->n_stalls && rc == 0; i++) {
        struct rs_stall_record s = b->stalls[i];
        s.kernel_name_id = ids[s.kernel_name_id];
        s.reason_id = ids[s.reason_id];
        rc = rs_records_add_stall(r, &s);
    }
    for (uint32_t i = 0; i < b->n_kernel_totals && rc == 0; i++) {
        struct rs_kernel_total t = b->kernel_totals[i];
        t.name_id = ids[t.name_id];
        rc = rs_records_add_kernel_total(r, &t);
    }
    for (uint32_t i = 0; i < b->n_copy_totals && rc == 0; i++)
        rc = rs_records_add_copy_total(r, &b->copy_totals[i]);
out:
    free(ids);
    return rc;
}

void
rs_records_view(const struct rs_records *r, struct rs_rank_batch *b)
{
    b->strings = (const char *const *)r->names.strings;
    b->n_strings = r->names.count;
    b->kernels = r->kernels.items;
    b->n_kernels = r->kernels.count;
    b->memcpys = r->memcpys.items;
    b->n_memcpys = r->memcpys.count;
    b->collectives = r->collectives.items;
    b->n_collectives = r->collectives.count;
    b->steps = r->steps.items;
    b->n_steps = r->steps.count;
    b->stalls = r->stalls.items;
    b->n_stalls = r->stalls.count;
    b->kernel_totals = r->kernel_totals.items;
    b->n_kernel_totals = r->kernel_totals.count;
    b->copy_totals = r->copy_totals.items;
    b->n_copy_totals = r->copy_totals.count;
}
