/* Periodic server tasks: when an owner with work in flight may be freed (see periodic.h). */
#include "server/periodic.h"

void
rs__periodic_init(struct rs_periodic *p, uv_loop_t *loop, void *owner, bool (*busy)(void *owner),
                  void (*free_owner)(void *owner))
{
    uv_timer_init(loop, &p->timer);
    p->timer.data = owner;
    p->timer_open = true;
    p->closed = false;
    p->busy = busy;
    p->free_owner = free_owner;
}

void
rs__periodic_start(struct rs_periodic *p, uv_timer_cb tick, uint64_t first_ms, uint64_t every_ms)
{
    uv_timer_start(&p->timer, tick, first_ms, every_ms);
}

static void
on_timer_closed(uv_handle_t *h)
{
    struct rs_periodic *p = (struct rs_periodic *)h; /* the timer is the first member */

    p->timer_open = false;
    rs__periodic_settle(p);
}

void
rs__periodic_close(struct rs_periodic *p)
{
    p->closed = true;
    uv_close((uv_handle_t *)&p->timer, on_timer_closed);
}

void
rs__periodic_settle(struct rs_periodic *p)
{
    void *owner = p->timer.data;

    if (p->closed && !p->timer_open && !p->busy(owner))
        p->free_owner(owner);
}
