/* Unit tests of the record arrays (node-agent/records.h): stalls of the same (kernel, reason, pc
 * offset, cubin) are kept as one record with the counts added — across index growth, after a
 * clear, and through a merge — while any differing field keeps them apart. */
#include "node-agent/records.h"
#include "tests/t.h"

#include <string.h>

static struct rs_stall_record
stall(uint32_t kernel, uint32_t reason, uint64_t pc, uint32_t crc, uint64_t count)
{
    return (struct rs_stall_record){pc, count, kernel, reason, crc};
}

static uint64_t
total(const struct rs_records *r)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < r->stalls.count; i++)
        n += r->stalls.items[i].count;
    return n;
}

static void
same_key_adds_up(void)
{
    struct rs_records r;
    struct rs_stall_record s;

    rs_records_init(&r);
    for (uint64_t c = 1; c <= 3; c++) {
        s = stall(1, 2, 0x40, 7, c);
        T_OK(rs_records_add_stall(&r, &s));
    }
    T_EQ(r.stalls.count, 1);
    T_EQ(r.stalls.items[0].count, 6);
    struct rs_stall_record other[] = {stall(9, 2, 0x40, 7, 1), stall(1, 9, 0x40, 7, 1),
                                      stall(1, 2, 0x48, 7, 1), stall(1, 2, 0x40, 8, 1)};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        T_OK(rs_records_add_stall(&r, &other[i]));
    T_EQ(r.stalls.count, 5); /* each differs in one field */
    T_EQ(total(&r), 10);
    rs_records_fini(&r);
}

/* 20,000 keys (the index grows from 256 slots several times), each added twice. */
static void
many_keys_through_growth(void)
{
    struct rs_records r;

    rs_records_init(&r);
    for (int round = 0; round < 2; round++)
        for (uint32_t k = 0; k < 20000; k++) {
            struct rs_stall_record s = stall(k % 37, k % 5, (uint64_t)k * 16, k % 3, k + 1);
            T_OK(rs_records_add_stall(&r, &s));
        }
    T_EQ(r.stalls.count, 20000);
    T_EQ(total(&r), 2ull * 20000 * 20001 / 2);
    T_CHECK(r.stalls.count == 20000 && r.stalls.items[123].count == 2 * 124);
    rs_records_fini(&r);
}

/* After a clear nothing is added to a record that is gone. */
static void
clear_forgets(void)
{
    struct rs_records r;
    struct rs_stall_record s = stall(1, 1, 16, 0, 5);

    rs_records_init(&r);
    T_OK(rs_records_add_stall(&r, &s));
    rs_records_clear(&r, 0);
    s.count = 3;
    T_OK(rs_records_add_stall(&r, &s));
    T_EQ(r.stalls.count, 1);
    T_EQ(r.stalls.items[0].count, 3);
    rs_records_fini(&r);
}

/* A batch merged in (the agent's path) aggregates by name, not by the batch's ids. */
static void
merge_aggregates_by_name(void)
{
    struct rs_records r;
    const char *names[] = {"gemm", "long_scoreboard", "gemm"};
    struct rs_stall_record in[] = {stall(0, 1, 16, 3, 4), stall(2, 1, 16, 3, 6)};
    struct rs_rank_batch b;

    memset(&b, 0, sizeof b);
    b.strings = names;
    b.n_strings = 3;
    b.stalls = in;
    b.n_stalls = 2;
    rs_records_init(&r);
    T_OK(rs_records_merge(&r, &b));
    T_OK(rs_records_merge(&r, &b));
    T_EQ(r.stalls.count, 1);
    T_EQ(r.stalls.items[0].count, 20);
    rs_records_fini(&r);
}

int
main(void)
{
    T_RUN(same_key_adds_up);
    T_RUN(many_keys_through_growth);
    T_RUN(clear_forgets);
    T_RUN(merge_aggregates_by_name);
    return T_DONE("node-agent/records");
}
