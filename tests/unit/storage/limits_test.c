/* Unit tests of storage limits and key encoding: a full map is an error the writer can answer
 * (RETRY), never a crash, and the store stays readable; reader-slot exhaustion is an error, not a
 * hang; encoded key order equals tuple order (property test over random tuples). */
#include "common/error.h"
#include "storage/keys.h"
#include "storage/store.h"
#include "tests/store_fixture.h"
#include "tests/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"kernel"};

static int
write_batch(rs_store *st, uint64_t seq)
{
    static struct rs_kernel_record k[2000];
    struct rs_rank_batch rb = {.identity = {"full", 0, 0, 1, "h", "GPU", 1},
                               .strings = names,
                               .n_strings = 1,
                               .kernels = k,
                               .n_kernels = 2000};
    struct rs_agent_batch b = {1, 1, seq, {1, 1, "h", "v", {0, 0}}, &rb, 1, 0};
    rs_store_write *w;
    bool dup;
    int rc;

    for (int i = 0; i < 2000; i++)
        k[i] =
            (struct rs_kernel_record){seq * 100000 + i * 10, seq * 100000 + i * 10 + 5, 0, 7, 0, 0};
    if ((rc = rs_store_write_begin(st, &w)) != 0)
        return rc;
    if ((rc = rs_store_write_batch(w, &b, &dup)) != 0) {
        rs_store_write_abort(w);
        return rc;
    }
    return rs_store_write_commit(w);
}

static void
map_full_is_an_error(void)
{
    char dir[] = "/tmp/rs-full-XXXXXX";
    struct rs_store_options opts = {.map_size = 1u << 20}; /* a 1 MiB map */
    struct rs_store_check_report rep;
    rs_store *st = NULL;
    int rc = 0;
    uint64_t seq;

    st = t_store_open(dir, &opts);
    for (seq = 1; seq < 1000 && (rc = write_batch(st, seq)) == 0; seq++)
        ;
    T_EQ(rc, RS_E_FULL);
    T_CHECK(seq > 2);                          /* some batches fit before */
    T_EQ(write_batch(st, seq + 1), RS_E_FULL); /* and it stays an error, not a crash */
    T_EQ(rs_store_check(st, &rep), 0);         /* what was committed is intact */
    T_EQ(rep.batches, seq - 1);
    t_store_remove(st, dir);
}

static void
reader_slots_exhausted(void)
{
    char dir[] = "/tmp/rs-readers-XXXXXX";
    struct rs_store_options opts = {.max_readers = 2};
    rs_store_read *r[3] = {NULL, NULL, NULL};
    rs_store *st = NULL;

    st = t_store_open(dir, &opts);
    T_EQ(rs_store_read_begin(st, &r[0]), 0);
    T_EQ(rs_store_read_begin(st, &r[1]), 0);
    T_EQ(rs_store_read_begin(st, &r[2]), RS_E_FULL);
    rs_store_read_end(r[0]);
    T_EQ(rs_store_read_begin(st, &r[2]), 0); /* a freed slot is usable again */
    rs_store_read_end(r[1]);
    rs_store_read_end(r[2]);
    t_store_remove(st, dir);
}

struct tuple {
    uint64_t job;
    uint32_t rank;
    uint16_t kind;
    uint64_t t;
    uint32_t uniq;
    struct rs_key_series key;
};

static int
cmp_tuple(const struct tuple *a, const struct tuple *b)
{
#define CMP(f)                                                                                     \
    if (a->f != b->f)                                                                              \
        return a->f < b->f ? -1 : 1;
    CMP(job)
    CMP(rank)
    CMP(kind)
    CMP(t)
    CMP(uniq)
#undef CMP
    return 0;
}

static uint64_t
rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void
key_order_is_tuple_order(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int mismatches = 0;

    for (int i = 0; i < 100000; i++) {
        struct tuple t[2];
        for (int j = 0; j < 2; j++) {
            /* small ranges too, so equal prefixes happen often */
            t[j].job = rnd(&seed) % (i % 2 ? 4 : UINT64_MAX);
            t[j].rank = (uint32_t)(rnd(&seed) % (i % 3 ? 8 : UINT32_MAX));
            t[j].kind = (uint16_t)(rnd(&seed) % 4);
            t[j].t = rnd(&seed) % (i % 5 ? 16 : UINT64_MAX);
            t[j].uniq = (uint32_t)rnd(&seed);
            rs__be64_put(t[j].key.job_id, t[j].job);
            rs__be32_put(t[j].key.rank, t[j].rank);
            t[j].key.kind[0] = (uint8_t)(t[j].kind >> 8);
            t[j].key.kind[1] = (uint8_t)t[j].kind;
            rs__be64_put(t[j].key.start_ns, t[j].t);
            rs__be32_put(t[j].key.uniq, t[j].uniq);
        }
        int want = cmp_tuple(&t[0], &t[1]);
        int got = memcmp(&t[0].key, &t[1].key, sizeof t[0].key);
        got = got < 0 ? -1 : got > 0;
        mismatches += want != got;
        T_EQ(rs__be64_get(t[0].key.start_ns), t[0].t);
    }
    T_EQ(mismatches, 0);
}

int
main(void)
{
    T_RUN(map_full_is_an_error);
    T_RUN(reader_slots_exhausted);
    T_RUN(key_order_is_tuple_order);
    return T_DONE("storage/limits");
}
