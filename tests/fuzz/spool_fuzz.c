/* libFuzzer target for the agent's spool directory as a restart finds it (node-agent/spool.c):
 * the input is split into agent.id, agent.seq and one batch file (each a 2-byte little-endian
 * length and that many bytes; the batch file takes the rest), written into a fresh directory
 * that rs_spool_open and rs_spool_load then read. A spool left by a crash, a full disk or another
 * program may hold anything: opening must fail with an error or succeed, and every batch it
 * loads must decode and be the agent's own under its file's sequence number — anything else is
 * quarantined, never resent — and the sequence numbers the agent goes on with must be past every
 * batch loaded (an absent agent.seq once restarted them at 1: the server would have answered new
 * batches DUPLICATE). The directory is removed after each input. Build: make fuzz-spool. */
#include "node-agent/spool.h"
#include "proto/wire.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BATCH_SEQ 7 /* that of the seed batch (tests/tools/make-corpus.c) */

struct loaded {
    uint64_t agent_id;
    int n;
};

static void
put(const char *dir, const char *name, const uint8_t *data, size_t len)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if ((f = fopen(path, "wb"))) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

static size_t
take(const uint8_t **data, size_t *size)
{
    if (*size < 2)
        return 0;
    size_t n = (size_t)(*data)[0] | (size_t)(*data)[1] << 8;
    *data += 2;
    *size -= 2;
    return n < *size ? n : *size;
}

static void
on_batch(void *arg, uint64_t seq, uint8_t *data, size_t len)
{
    struct loaded *l = arg;
    rs_wire_agent_batch *b = NULL;

    if (rs_wire_agent_batch_decode(data, len, &b) != 0 ||
        rs_wire_agent_batch_get(b)->agent_id != l->agent_id ||
        rs_wire_agent_batch_get(b)->batch_seq != seq || seq != BATCH_SEQ)
        __builtin_trap(); /* loaded a batch it should have quarantined */
    rs_wire_agent_batch_free(b);
    free(data);
    l->n++;
}

static void
remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];

    if (!d)
        return;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_type == DT_DIR)
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[] = "/tmp/rs-spool-fuzz-XXXXXX", name[64];
    struct rs_spool s;
    struct rs_spool_load_stats st;
    struct loaded l = {0, 0};
    uint64_t next = 0;
    size_t n;

    if (!mkdtemp(dir))
        return 0;
    n = take(&data, &size);
    put(dir, "agent.id", data, n);
    data += n;
    size -= n;
    n = take(&data, &size);
    if (n > 0) /* none: agent.seq absent (lost) */
        put(dir, "agent.seq", data, n);
    data += n;
    size -= n;
    snprintf(name, sizeof name, "%020d.batch", BATCH_SEQ);
    put(dir, name, data, size);
    memset(&s, 0, sizeof s);
    if (rs_spool_open(&s, dir, &l.agent_id, &next) == 0) {
        memset(&st, 0, sizeof st);
        /* what the agent does with the answer (agent.c) must skip every number in use */
        if (rs_spool_load(&s, on_batch, &l, &st) == 0 && l.n == 1 &&
            (next > st.next_seq ? next : st.next_seq) <= BATCH_SEQ)
            __builtin_trap();
        rs_spool_close(&s);
    }
    remove_tree(dir);
    return 0;
}
