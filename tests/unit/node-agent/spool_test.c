/* Unit tests of the agent spool: identity and sequence numbers survive reopening (so
 * (agent_id, batch_seq) never repeats), batches come back in order, unreadable files are
 * skipped. */
#include "node-agent/spool.h"
#include "proto/wire.h"
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

/* Closes the spool and removes its directory. */
static void
close_and_remove(struct rs_spool *s, const char *dir)
{
    char cmd[128];

    rs_spool_close(s);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_EQ(system(cmd), 0);
}

/* Spools a well-formed (empty) batch of agent `id` as `seq`. */
static void
put_batch(struct rs_spool *s, uint64_t id, uint64_t seq)
{
    struct rs_agent_batch b = {.agent_id = id, .boot_id = 1, .batch_seq = seq,
                               .hello = {id, 1, "h", "v", {0, 0}}};
    uint8_t *data = NULL;
    size_t len = 0;

    T_OK(rs_wire_agent_batch_encode(&b, &data, &len));
    T_OK(rs_spool_put(s, seq, data, len));
    free(data);
}

/* A spooled file that is not a batch of this agent under its own number is never sent: a corrupt
 * one was resent for ever, refused each time, holding a window slot. Moved aside, counted. */
static void
foreign_and_corrupt_quarantined(void)
{
    char dir[] = "/tmp/rs-spool-test-XXXXXX", path[160], cmd[128];
    struct rs_spool s;
    struct loaded l = {0};
    struct rs_spool_load_stats st;
    uint64_t id, seq;
    struct stat sb;

    T_CHECK(mkdtemp(dir) != NULL);
    T_OK(rs_spool_open(&s, dir, &id, &seq));
    put_batch(&s, id, 5);        /* good */
    put_batch(&s, id + 1, 6);    /* another agent's */
    put_batch(&s, id, 8);        /* under the wrong number: */
    snprintf(cmd, sizeof cmd, "mv %s/%020llu.batch %s/%020llu.batch", dir, 8ull, dir, 9ull);
    T_EQ(system(cmd), 0);
    T_OK(rs_spool_put(&s, 10, "\x08\x99garbage", 9)); /* corrupt */
    T_OK(rs_spool_put(&s, 11, "", 0));                  /* empty */
    T_OK(rs_spool_load(&s, on_batch, &l, &st));
    T_EQ(l.n, 1);
    T_EQ(l.seqs[0], 5);
    T_EQ(st.quarantined, 4);
    T_EQ(st.unreadable, 0);
    for (unsigned long long k = 6; k <= 11; k++) {
        if (k == 7 || k == 8)
            continue;
        snprintf(path, sizeof path, "%s/quarantine/%020llu.batch", dir, k);
        T_CHECK(stat(path, &sb) == 0);
        snprintf(path, sizeof path, "%s/%020llu.batch", dir, k);
        T_CHECK(stat(path, &sb) != 0);
    }
    snprintf(path, sizeof path, "%s/quarantine", dir);
    T_CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0700);
    l.n = 0; /* a second load sends the good one only, quarantines nothing more */
    T_OK(rs_spool_load(&s, on_batch, &l, &st));
    T_EQ(l.n, 1);
    T_EQ(st.quarantined, 0);
    close_and_remove(&s, dir);
}

/* agent.seq lost (or restored from an older backup) while batches wait in the spool: the numbers
 * the agent goes on with must be past every spooled one, or the server would answer its new
 * batches DUPLICATE — lost (found by tests/fuzz/spool_fuzz.c). */
static void
lost_reservation_does_not_reuse_spooled_numbers(void)
{
    char dir[] = "/tmp/rs-spool-seq-XXXXXX", path[128];
    struct rs_spool s;
    struct rs_spool_load_stats st;
    struct loaded l = {0};
    uint64_t id = 0, next = 0;

    T_CHECK(mkdtemp(dir) != NULL);
    T_OK(rs_spool_open(&s, dir, &id, &next));
    put_batch(&s, id, 40);
    put_batch(&s, id, 41);
    rs_spool_close(&s);
    snprintf(path, sizeof path, "%s/agent.seq", dir);
    T_EQ(unlink(path), 0);
    T_OK(rs_spool_open(&s, dir, &id, &next));
    T_EQ(next, 1); /* what the directory alone says */
    T_OK(rs_spool_load(&s, on_batch, &l, &st));
    T_EQ(l.n, 2);
    T_EQ(st.next_seq, 42);
    close_and_remove(&s, dir);
}

static void
identity_and_sequence_survive(void)
{
    char dir[] = "/tmp/rs-spool-test-XXXXXX", path[128];
    struct rs_spool s;
    struct loaded l = {0};
    uint64_t id1, id2, seq1, seq2;
    struct rs_spool_load_stats st;

    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/spool", dir); /* made by the spool: 0700 */
    T_OK(rs_spool_open(&s, path, &id1, &seq1));
    rs_spool_close(&s);
    struct stat sb;
    T_CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0700);
    snprintf(path, sizeof path, "%s/spool/agent.id", dir); /* the dedup identity: 0600 */
    T_CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
    T_OK(rs_spool_open(&s, dir, &id1, &seq1));
    T_CHECK(id1 != 0);
    T_EQ(seq1, 1); /* a new spool starts at 1 */
    put_batch(&s, id1, seq1 + 2);
    snprintf(path, sizeof path, "%s/%020llu.batch", dir, (unsigned long long)(seq1 + 2));
    T_CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600); /* jobs' data: 0600 */
    put_batch(&s, id1, seq1);
    put_batch(&s, id1, seq1 + 1);
    rs_spool_remove(&s, seq1 + 1);
    T_OK(rs_spool_reserve(&s, seq1 + 200000)); /* crosses a reservation block */
    rs_spool_close(&s);

    T_OK(rs_spool_open(&s, dir, &id2, &seq2));
    T_EQ(id2, id1);
    T_CHECK(seq2 > seq1 + 200000); /* never reuses a number the last run may have sent */
    put_batch(&s, id1, 7);
    snprintf(path, sizeof path, "%s/%020llu.batch", dir, (unsigned long long)9);
    T_EQ(mkdir(path, 0755), 0); /* unreadable as a batch: skipped and counted */
    T_OK(rs_spool_load(&s, on_batch, &l, &st));
    T_EQ(st.unreadable, 1);
    T_EQ(st.quarantined, 0);
    rmdir(path);
    T_EQ(l.n, 3);
    T_EQ(l.seqs[0], 1); /* sequence order: 1, 3, 7 */
    T_EQ(l.seqs[1], 3);
    T_EQ(l.seqs[2], 7);
    close_and_remove(&s, dir);
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
    T_RUN(foreign_and_corrupt_quarantined);
    T_RUN(corrupt_identity_refused);
    T_RUN(lost_reservation_does_not_reuse_spooled_numbers);
    return T_DONE("node-agent/spool");
}
