/* Periodic server tasks (evaluator, maintenance, space): a libuv repeating timer embedded in an
 * owner whose work (a thread-pool job, a writer task) can still be in flight when the server
 * closes it. This is the one place that decides when such an owner may be freed. Loop thread
 * only; not a public API. */
#ifndef RS_SERVER_PERIODIC_H
#define RS_SERVER_PERIODIC_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct rs_periodic {
    uv_timer_t timer; /* first member; timer.data is the owner, for its tick callback */
    bool closed;      /* rs__periodic_close was called: start no new work */
    bool timer_open;
    bool (*busy)(void *owner);       /* work of the owner still in flight */
    void (*free_owner)(void *owner); /* frees the owner and everything it holds */
};

/* Initialises p inside `owner` on `loop`. Starts nothing: rs__periodic_start does. */
void rs__periodic_init(struct rs_periodic *p, uv_loop_t *loop, void *owner,
                       bool (*busy)(void *owner), void (*free_owner)(void *owner));

/* Calls tick after first_ms and then every every_ms (0: once). */
void rs__periodic_start(struct rs_periodic *p, uv_timer_cb tick, uint64_t first_ms,
                        uint64_t every_ms);

/* Stops the timer and marks the owner closed; the owner is freed once its timer has closed and
 * busy() is false — here, or in a later rs__periodic_settle. */
void rs__periodic_close(struct rs_periodic *p);

/* To call whenever the owner's work ends (busy() may have become false): frees the owner if it is
 * closed and idle. The owner must not be touched after this returns on a closed owner. */
void rs__periodic_settle(struct rs_periodic *p);

#endif
