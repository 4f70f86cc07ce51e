/* Unit tests of deduplication by (agent_id, batch_seq, principal) (rs_store_write_batch_as): one
 * principal's batch does not make another's with the same agent id and sequence number a
 * duplicate; without a principal the key is the one of stores written before principals; a name
 * over the limit is refused; --check accepts both key forms. */
#include "common/error.h"
#include "storage/store.h"
#include "tests/store_fixture.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <string.h>

static const char *const names[] = {"k"};

static void
write_as(rs_store *st, uint64_t agent, uint64_t seq, const char *principal, int want_rc,
         bool want_dup)
{
    struct rs_kernel_record k = {seq * 1000, seq * 1000 + 500, 0, 7, 0, 0};
    struct rs_rank_batch rb = {.identity = T_IDENTITY("job-p", 0, 1, "GPU-1"),
                               .strings = names,
                               .n_strings = 1,
                               .kernels = &k,
                               .n_kernels = 1};
    struct rs_agent_batch b = t_agent_batch(agent, seq, &rb, 1);
    rs_store_write *w;
    bool dup = !want_dup;

    T_EQ(rs_store_write_begin(st, &w), 0);
    T_EQ(rs_store_write_batch_as(w, &b, principal, &dup), want_rc);
    if (want_rc == 0)
        T_EQ(dup, want_dup);
    T_EQ(rs_store_write_commit(w), 0);
}

static void
principals_apart(void)
{
    char dir[] = "/tmp/rs-dedup-principal-XXXXXX";
    char long_name[RS_STORE_PRINCIPAL_MAX + 2];
    rs_store *st = t_store_open(dir, NULL);
    rs_store_read *r;
    uint64_t n = 0;

    /* mallory claims agent 7's sequence number 1 first */
    write_as(st, 7, 1, "mallory", 0, false);
    /* agent 7, authenticated as agent1, still commits its batch 1 */
    write_as(st, 7, 1, "agent1", 0, false);
    /* its resend is a duplicate, and so is mallory's */
    write_as(st, 7, 1, "agent1", 0, true);
    write_as(st, 7, 1, "mallory", 0, true);
    /* no principal (no token file): the 16-byte key; NULL and "" are the same */
    write_as(st, 7, 1, NULL, 0, false);
    write_as(st, 7, 1, "", 0, true);
    /* tokens turned on for a store written without them: a batch committed without a principal
     * and resent with one is a duplicate (not stored twice) */
    write_as(st, 8, 1, NULL, 0, false);
    write_as(st, 8, 1, "agent1", 0, true);
    write_as(st, 8, 2, "agent1", 0, false); /* the next one is new */
    /* a name that is a prefix of another is another principal */
    write_as(st, 7, 2, "agent", 0, false);
    write_as(st, 7, 2, "agent1", 0, false);
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    write_as(st, 7, 3, long_name, RS_E_MALFORMED, false);
    long_name[RS_STORE_PRINCIPAL_MAX] = '\0'; /* exactly the limit: taken */
    write_as(st, 7, 3, long_name, 0, false);

    T_EQ(rs_store_read_begin(st, &r), 0);
    T_EQ(rs_store_batches_count(r, &n), 0);
    T_EQ(n, 8); /* 6 of agent 7, 2 of agent 8 */
    rs_store_read_end(r);
    struct rs_store_check_report rep;
    memset(&rep, 0, sizeof rep);
    T_EQ(rs_store_check(st, &rep), 0);
    T_EQ(rep.problems, 0);
    t_store_remove(st, dir);
}

int
main(void)
{
    T_RUN(principals_apart);
    return T_DONE("storage/dedup_principal");
}
