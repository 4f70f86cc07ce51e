/* The agent's spool directory: batches not yet acknowledged by the server, one file each
 * (<seq>.batch, written atomically), so that an agent restart or a long server outage loses
 * nothing that fits in the budget. The directory also keeps the agent's identity (agent.id) and a
 * reservation of sequence numbers (agent.seq), so (agent_id, batch_seq) never repeats across
 * restarts — the server's deduplication depends on it. */
#ifndef RS_NODE_AGENT_SPOOL_H
#define RS_NODE_AGENT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct rs_spool {
    char *dir;
    uint64_t agent_id;
    uint64_t reserved_until; /* sequence numbers below this are taken */
};

/* Opens (creating) the spool in `dir`; reads or creates the agent id; reserves sequence numbers
 * and sets *next_seq past anything used before. Returns 0 or -errno / RS_E_CORRUPT. */
int rs_spool_open(struct rs_spool *s, const char *dir, uint64_t *agent_id, uint64_t *next_seq);

/* Makes sure `seq` is reserved on disk before it is used. Returns 0 or -errno. */
int rs_spool_reserve(struct rs_spool *s, uint64_t seq);

/* Stores one batch durably. Returns 0 or -errno. */
int rs_spool_put(struct rs_spool *s, uint64_t seq, const void *data, size_t len);

/* Forgets one batch (after its acknowledgement). */
void rs_spool_remove(struct rs_spool *s, uint64_t seq);

/* Where rs_spool_load moves batches it will not send, inside the spool directory. */
#define RS_SPOOL_QUARANTINE_DIR "quarantine"

struct rs_spool_load_stats {
    unsigned unreadable;  /* files that could not be read: removed */
    unsigned quarantined; /* files that are not a well-formed batch of this agent with the
                           * sequence number of their name: moved to the quarantine directory
                           * (a corrupt one would otherwise be resent, refused, for ever) */
    uint64_t next_seq;    /* past the largest sequence number loaded (0: none loaded). Above
                           * rs_spool_open's *next_seq when agent.seq was lost or is behind (a
                           * restored backup, a hand edit): the caller must not hand those
                           * numbers out again, or the server would answer new batches
                           * DUPLICATE (found by tests/fuzz/spool_fuzz.c) */
};

/* Calls cb for each stored batch in sequence order; cb takes ownership of `data` (malloc'd).
 * Each batch is decoded first (rs_wire_agent_batch_decode) and must carry agent_id and the
 * sequence number of its file name; others are quarantined. Counts go to *stats. Returns 0 or
 * -errno (the directory could not be read). */
int rs_spool_load(struct rs_spool *s,
                  void (*cb)(void *arg, uint64_t seq, uint8_t *data, size_t len), void *arg,
                  struct rs_spool_load_stats *stats);

void rs_spool_close(struct rs_spool *s);

#endif
