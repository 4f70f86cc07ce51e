/* The lasting copy of the straggler verdict history (server-internal): the evaluator (evaluator.h)
 * notes each verdict it raises, clears or sees change its slowdown, and hands an evaluation's notes
 * to one writer task, which records them in the store (storage/store.h rs_store_verdict_note) —
 * what the fleet view reads, so that "slow in 4 of its last 5 jobs" survives a restart. Loop
 * thread. */
#ifndef RS_SERVER_VERDICT_HISTORY_H
#define RS_SERVER_VERDICT_HISTORY_H

#include "proto/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rs_server;

/* One finding to record: rank `rank` of `job` a straggler (active, with its slowdown) or no
 * longer one, at now_ns (server clock). */
struct rs_verdict_note {
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint32_t rank;
    bool active;
    double slowdown;
    uint64_t now_ns;
};

/* A growing list of notes (zero it to start). */
struct rs_verdict_notes {
    struct rs_verdict_note *v;
    size_t n, cap;
};

/* Appends a note. Returns 0 or -ENOMEM (the list is unchanged). */
int rs__verdict_notes_add(struct rs_verdict_notes *l, const char *job, uint32_t rank, bool active,
                          double slowdown, uint64_t now_ns);

/* Queues the notes to srv's writer and empties *l, whether or not that worked (notes that cannot
 * be stored are dropped: logged RS-VERDICT-HISTORY, rate-limited). Nothing to do for an empty
 * list. */
void rs__verdict_notes_submit(struct rs_server *srv, struct rs_verdict_notes *l);

/* Frees the list's notes (shutdown). */
void rs__verdict_notes_fini(struct rs_verdict_notes *l);

#endif
