/* Unit tests of the agent spool: identity and sequence numbers survive reopening (so
 * (agent_id, batch_seq) never repeats), batches come back in order, unreadable files are
 * skipped. */
#include "node-agent/spool.h"
#include "tests/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct loaded {
    int n;
    uint64_t seqs[8];
    char first[16];
};

static void
on_batch(void *arg, uint64_t seq, uint8_t *data, size_t len)
{
    struct loaded *l = arg;
    if (l->n == 0)
        snprintf(l->first, sizeof l->first, "%.*s", (int)len, (char *)data);
    if (l->n < 8)
        l->seqs[l->n] = seq;
    l->n++;
    free(data);
}

static void
identity_and_sequence_survive(void)
{
    char dir[] = "/tmp/rs-spool-test-XXXXXX", cmd[128], path[128];
    struct rs_spool s;
    struct loaded l = {0};
    uint64_t id1, id2, seq1, seq2;
    unsigned skipped = 9;

    T_CHECK(mkdtemp(dir) != NULL);
    T_OK(rs_spool_open(&s, dir, &id1, &seq1));
    T_CHECK(id1 != 0);
    T_EQ(seq1, 1); /* a new spool starts at 1 */
    T_OK(rs_spool_put(&s, seq1 + 2, "bbb", 3));
    T_OK(rs_spool_put(&s, seq1, "aaa", 3));
    T_OK(rs_spool_put(&s, seq1 + 1, "xxx", 3));
    rs_spool_remove(&s, seq1 + 1);
    T_OK(rs_spool_reserve(&s, seq1 + 200000)); /* crosses a reservation block */
    rs_spool_close(&s);

    T_OK(rs_spool_open(&s, dir, &id2, &seq2));
    T_EQ(id2, id1);
    T_CHECK(seq2 > seq1 + 200000); /* never reuses a number the last run may have sent */
    snprintf(path, sizeof path, "%s/%020llu.batch", dir, (unsigned long long)7);
    FILE *f = fopen(path, "w"); /* an empty batch file still loads (the server rejects it) */
    fclose(f);
    snprintf(path, sizeof path, "%s/%020llu.batch", dir, (unsigned long long)9);
    T_EQ(mkdir(path, 0755), 0); /* unreadable as a batch: skipped and counted */
    T_OK(rs_spool_load(&s, on_batch, &l, &skipped));
    T_EQ(skipped, 1);
    rmdir(path);
    T_EQ(l.n, 3);
    T_EQ(l.seqs[0], 1); /* sequence order: 1, 3, 7 */
    T_EQ(l.seqs[1], 3);
    T_EQ(l.seqs[2], 7);
    T_CHECK(strcmp(l.first, "aaa") == 0);
    rs_spool_close(&s);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_EQ(system(cmd), 0);
}

static void
corrupt_identity_refused(void)
{
    char dir[] = "/tmp/rs-spool-test-XXXXXX", path[128], cmd[128];
    struct rs_spool s;
    uint64_t id, seq;
    FILE *f;

    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/agent.id", dir);
    f = fopen(path, "w");
    fprintf(f, "not hex\n");
    fclose(f);
    T_CHECK(rs_spool_open(&s, dir, &id, &seq) != 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_EQ(system(cmd), 0);
}

int
main(void)
{
    T_RUN(identity_and_sequence_survive);
    T_RUN(corrupt_identity_refused);
    return T_DONE("node-agent/spool");
}
