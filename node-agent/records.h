/* Growable arrays of wire records, one per kind, with a string table: the in-memory form of "the
 * records of one rank not sent yet". Shared by the collector client and the agent's aggregation.
 * Not thread-safe: one owner. */
#ifndef RS_NODE_AGENT_RECORDS_H
#define RS_NODE_AGENT_RECORDS_H

#include "common/strtab.h"
#include "proto/wire.h"

#define RS_RECORD_VEC(type)                                                                        \
    struct {                                                                                       \
        type *items;                                                                               \
        uint32_t count, cap;                                                                       \
    }

struct rs_records {
    struct rs_strtab names; /* ids used by the records below */
    RS_RECORD_VEC(struct rs_kernel_record) kernels;
    RS_RECORD_VEC(struct rs_memcpy_record) memcpys;
    RS_RECORD_VEC(struct rs_collective_record) collectives;
    RS_RECORD_VEC(struct rs_step_record) steps;
    RS_RECORD_VEC(struct rs_stall_record) stalls;
    RS_RECORD_VEC(struct rs_kernel_total) kernel_totals; /* an agent's summaries (summary.h) */
    RS_RECORD_VEC(struct rs_copy_total) copy_totals;
    /* private: where each (kernel, reason, pc offset, cubin) stall is in `stalls`
     * (common/pos_index.h) */
    uint32_t *stall_index;
    size_t stall_slots;
};

void rs_records_init(struct rs_records *r);
void rs_records_fini(struct rs_records *r);

/* Total records held (totals count one each). */
uint64_t rs_records_count(const struct rs_records *r);

/* Empties the arrays; names are kept unless `names_too`. */
void rs_records_clear(struct rs_records *r, int names_too);

/* Appends one record (copied). Names ids must come from r->names. Returns 0 or -ENOMEM. A stall
 * of a (kernel, reason, pc offset, cubin) already held adds its count to that record instead, so
 * the counts leave the process aggregated: in kernel-serialized PC-sampling windows CUPTI flushes
 * its data after every kernel (its header says), so a window's drain may repeat a PC once per run
 * of its kernel. */
int rs_records_add_kernel(struct rs_records *r, const struct rs_kernel_record *k);
int rs_records_add_memcpy(struct rs_records *r, const struct rs_memcpy_record *m);
int rs_records_add_collective(struct rs_records *r, const struct rs_collective_record *c);
int rs_records_add_step(struct rs_records *r, const struct rs_step_record *s);
int rs_records_add_stall(struct rs_records *r, const struct rs_stall_record *s);
int rs_records_add_kernel_total(struct rs_records *r, const struct rs_kernel_total *t);
int rs_records_add_copy_total(struct rs_records *r, const struct rs_copy_total *t);

/* Appends every record of `b` (names re-interned into r->names). Returns 0 or -ENOMEM (then
 * part of `b` may have been added). */
int rs_records_merge(struct rs_records *r, const struct rs_rank_batch *b);

/* Points `b` at the records and names (borrowed; valid until the next change of `r`). */
void rs_records_view(const struct rs_records *r, struct rs_rank_batch *b);

#endif
