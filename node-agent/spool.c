/* Spool directory for unacknowledged batches (see spool.h). */
#include "node-agent/spool.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/hash.h"
#include "proto/wire.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEQ_BLOCK 100000ull /* sequence numbers reserved per disk write */

static void
path_of(const struct rs_spool *s, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", s->dir, name);
}

static int
read_u64_file(const struct rs_spool *s, const char *name, uint64_t *out)
{
    char path[PATH_MAX], *text = NULL, *end;
    size_t len;
    int rc;

    path_of(s, name, path, sizeof path);
    if ((rc = rs_fs_read_all(path, 64, &text, &len)) != 0)
        return rc;
    *out = strtoull(text, &end, 16);
    rc = (end == text || (*end != '\n' && *end != '\0')) ? RS_E_CORRUPT : 0;
    free(text);
    return rc;
}

static int
write_u64_file(const struct rs_spool *s, const char *name, uint64_t v)
{
    char path[PATH_MAX], text[32];
    int n = snprintf(text, sizeof text, "%016" PRIx64 "\n", v);

    path_of(s, name, path, sizeof path);
    return rs_fs_write_private(path, text, (size_t)n);
}

int
rs_spool_reserve(struct rs_spool *s, uint64_t seq)
{
    int rc;

    if (seq < s->reserved_until)
        return 0;
    if ((rc = write_u64_file(s, "agent.seq", seq + SEQ_BLOCK)) != 0)
        return rc;
    s->reserved_until = seq + SEQ_BLOCK;
    return 0;
}

int
rs_spool_open(struct rs_spool *s, const char *dir, uint64_t *agent_id, uint64_t *next_seq)
{
    uint64_t id = 0, reserved = 1;
    int rc;

    memset(s, 0, sizeof *s);
    if ((rc = rs_fs_mkdir_p_private(dir)) != 0)
        return rc;
    if (!(s->dir = strdup(dir)))
        return -ENOMEM;
    rc = read_u64_file(s, "agent.id", &id);
    if (rc == -ENOENT) {
        id = rs_random_u64();
        rc = write_u64_file(s, "agent.id", id);
    }
    if (rc != 0)
        goto fail;
    rc = read_u64_file(s, "agent.seq", &reserved);
    if (rc == -ENOENT)
        reserved = 1, rc = 0;
    if (rc != 0)
        goto fail;
    /* Skip whatever the last run may have used: all of its reservation. */
    s->reserved_until = reserved;
    if ((rc = rs_spool_reserve(s, reserved)) != 0)
        goto fail;
    s->agent_id = id;
    *agent_id = id;
    *next_seq = reserved;
    return 0;
fail:
    rs_spool_close(s);
    return rc;
}

int
rs_spool_put(struct rs_spool *s, uint64_t seq, const void *data, size_t len)
{
    char name[40], path[PATH_MAX];

    snprintf(name, sizeof name, "%020" PRIu64 ".batch", seq);
    path_of(s, name, path, sizeof path);
    return rs_fs_write_private(path, data, len);
}

void
rs_spool_remove(struct rs_spool *s, uint64_t seq)
{
    char name[40], path[PATH_MAX];

    snprintf(name, sizeof name, "%020" PRIu64 ".batch", seq);
    path_of(s, name, path, sizeof path);
    unlink(path);
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int
is_batch(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n == 26 && strcmp(d->d_name + 20, ".batch") == 0;
}

/* True when data is a batch this agent sent as `seq`. */
static bool
is_own_batch(const struct rs_spool *s, uint64_t seq, const char *data, size_t len)
{
    rs_wire_agent_batch *d = NULL;
    bool ok = false;

    if (rs_wire_agent_batch_decode((const uint8_t *)data, len, &d) == 0) {
        const struct rs_agent_batch *b = rs_wire_agent_batch_get(d);
        ok = b->agent_id == s->agent_id && b->batch_seq == seq;
    }
    rs_wire_agent_batch_free(d);
    return ok;
}

/* Moves a spooled file out of the way, keeping it for a person to look at. */
static void
quarantine(const struct rs_spool *s, const char *name)
{
    char dir[PATH_MAX], from[PATH_MAX], to[PATH_MAX + 300];

    path_of(s, RS_SPOOL_QUARANTINE_DIR, dir, sizeof dir);
    path_of(s, name, from, sizeof from);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    if ((mkdir(dir, 0700) != 0 && errno != EEXIST) || rename(from, to) != 0)
        unlink(from); /* cannot keep it: it must not be sent again either */
}

int
rs_spool_load(struct rs_spool *s, void (*cb)(void *arg, uint64_t seq, uint8_t *data, size_t len),
              void *arg, struct rs_spool_load_stats *stats)
{
    struct dirent **list;
    int n = scandir(s->dir, &list, is_batch, by_name);

    memset(stats, 0, sizeof *stats);
    if (n < 0)
        return -errno;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX], *data = NULL, *end;
        size_t len;
        uint64_t seq = strtoull(list[i]->d_name, &end, 10);
        path_of(s, list[i]->d_name, path, sizeof path);
        if (*end != '.' || rs_fs_read_all(path, RS_WIRE_MAX_BATCH_BYTES, &data, &len) != 0) {
            stats->unreadable++;
            unlink(path); /* unreadable: keeping it would block nothing but waste space */
        } else if (!is_own_batch(s, seq, data, len)) {
            stats->quarantined++;
            quarantine(s, list[i]->d_name);
            free(data);
        } else {
            if (seq >= stats->next_seq)
                stats->next_seq = seq + 1;
            cb(arg, seq, (uint8_t *)data, len);
        }
        free(list[i]);
    }
    free(list);
    return 0;
}

void
rs_spool_close(struct rs_spool *s)
{
    free(s->dir);
    s->dir = NULL;
}
