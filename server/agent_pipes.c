/* Agent pipe admission and idle closing (see agent_pipes.h). NNG calls the pipe callbacks on its
 * own threads; a table of pipes (id -> peer, last whole request) under one mutex serves them, the
 * request path, and a loop timer that closes idle pipes. nng_pipe_close is called outside the
 * lock: it may run the removal callback, which takes it. */
#include "server/agent_pipes.h"

#include "common/clock.h"
#include "common/log.h"
#include "server/conn_limits.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 4096
#define SWEEP_MAX_MS 5000u
#define CLOSE_BATCH 256 /* idle pipes closed per sweep step */
/* At agent-max-connections a new pipe takes the place of the one that has waited longest for a
 * whole request, if that one has waited this long: idle sockets (20,000 of them, issue 23) must
 * not keep a working agent out until agent-idle-timeout-s; an agent sends every flush (250 ms). */
#define EVICT_IDLE_NS 2000000000ull

struct pipe_entry {
    uint32_t id;
    uint64_t peer;
    uint64_t last_ns; /* monotonic: admitted, or its last whole request */
    struct pipe_entry *next;
};

struct rs_agent_pipes {
    struct rs_agent_pipes_options o;
    struct rs_counters *counters;
    pthread_mutex_t lock;
    rs_peer_counts *peers;
    unsigned n;
    struct pipe_entry *bucket[BUCKETS];
    uv_timer_t sweep;
    atomic_int holds; /* the sweep's timer and the socket's callbacks: freed when both let go */
};

static uint64_t
peer_of(nng_pipe p)
{
    nng_sockaddr a;
    struct sockaddr_storage ss;

    memset(&ss, 0, sizeof ss);
    if (nng_pipe_get_addr(p, NNG_OPT_REMADDR, &a) != 0)
        return 1;
    if (a.s_family == NNG_AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        in->sin_addr.s_addr = a.s_in.sa_addr; /* both in network order */
    } else if (a.s_family == NNG_AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        memcpy(in6->sin6_addr.s6_addr, a.s_in6.sa_addr, 16);
    } else
        return 1; /* ipc://, inproc://: one peer */
    return rs_peer_key((struct sockaddr *)&ss);
}

static struct pipe_entry **
find(rs_agent_pipes *ap, uint32_t id)
{
    struct pipe_entry **e = &ap->bucket[id % BUCKETS];
    while (*e && (*e)->id != id)
        e = &(*e)->next;
    return e;
}

/* Under ap->lock: the pipe that has waited longest for a whole request, when it has waited at
 * least EVICT_IDLE_NS (its last_ns is set to now: chosen once; its removal callback forgets it). */
static bool
pick_idle(rs_agent_pipes *ap, uint64_t now, uint32_t *id)
{
    struct pipe_entry *oldest = NULL;

    for (size_t b = 0; b < BUCKETS; b++)
        for (struct pipe_entry *e = ap->bucket[b]; e; e = e->next)
            if (!oldest || e->last_ns < oldest->last_ns)
                oldest = e;
    if (!oldest || now - oldest->last_ns < EVICT_IDLE_NS)
        return false;
    oldest->last_ns = now;
    *id = oldest->id;
    return true;
}

/* NNG thread: admit or refuse a pipe before it joins the socket; forget it when it leaves. At
 * the total bound, an idle pipe makes room (pick_idle); the table may then hold one pipe more
 * than the bound until the closed one's removal callback runs. */
static void
on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    rs_agent_pipes *ap = arg;
    uint32_t id = (uint32_t)nng_pipe_id(p);

    if (ev == NNG_PIPE_EV_ADD_PRE) {
        uint64_t peer = peer_of(p), now = rs_clock_mono_ns();
        struct pipe_entry *e = NULL;
        uint32_t victim = 0;
        bool ok = false, evict = false;
        pthread_mutex_lock(&ap->lock);
        bool full = ap->o.max_total && ap->n >= ap->o.max_total;
        if ((e = calloc(1, sizeof *e)) && rs_peer_counts_take(ap->peers, peer)) {
            if (!full || (evict = pick_idle(ap, now, &victim))) {
                struct pipe_entry **slot = &ap->bucket[id % BUCKETS];
                *e = (struct pipe_entry){id, peer, now, *slot};
                *slot = e;
                ap->n++;
                ok = true;
            } else
                rs_peer_counts_give(ap->peers, peer);
        }
        if (!ok)
            free(e);
        pthread_mutex_unlock(&ap->lock);
        if (evict) {
            nng_pipe old = NNG_PIPE_INITIALIZER;
            old.id = victim;
            if (nng_pipe_close(old) == 0)
                RS_COUNT(ap->counters, agent_pipes_evicted);
            rs_log_limited(10, RS_LOG_WARN, "RS-INGEST-PIPE-EVICTED",
                           "at agent-max-connections (%u): closed the agent connection that had "
                           "waited longest without a whole request, for a new one",
                           ap->o.max_total);
        }
        if (!ok) {
            RS_COUNT(ap->counters, agent_pipes_refused);
            rs_log_limited(10, RS_LOG_WARN, "RS-INGEST-PIPE-REFUSED",
                           "closed a new agent connection: over agent-max-connections-per-peer "
                           "(%u) or agent-max-connections (%u)",
                           ap->o.max_per_peer, ap->o.max_total);
            nng_pipe_close(p);
            return;
        }
        RS_COUNT(ap->counters, agent_pipes_now);
    } else if (ev == NNG_PIPE_EV_REM_POST) {
        struct pipe_entry *e;
        pthread_mutex_lock(&ap->lock);
        struct pipe_entry **slot = find(ap, id);
        if ((e = *slot) != NULL) { /* admitted (a refused one was never in the table) */
            *slot = e->next;
            ap->n--;
            rs_peer_counts_give(ap->peers, e->peer);
        }
        pthread_mutex_unlock(&ap->lock);
        if (e) {
            RS_COUNT_SUB(ap->counters, agent_pipes_now, 1);
            free(e);
        }
    }
}

void
rs_agent_pipes_seen(rs_agent_pipes *ap, nng_msg *msg)
{
    if (!ap)
        return;
    uint32_t id = (uint32_t)nng_pipe_id(nng_msg_get_pipe(msg));
    pthread_mutex_lock(&ap->lock);
    struct pipe_entry *e = *find(ap, id);
    if (e)
        e->last_ns = rs_clock_mono_ns();
    pthread_mutex_unlock(&ap->lock);
}

/* Loop: close the pipes idle past the timeout. */
static void
on_sweep(uv_timer_t *t)
{
    rs_agent_pipes *ap = t->data;
    uint64_t now = rs_clock_mono_ns(), limit = (uint64_t)ap->o.idle_timeout_s * 1000000000ull;
    uint32_t idle[CLOSE_BATCH];
    size_t n = 0;

    pthread_mutex_lock(&ap->lock);
    for (size_t b = 0; b < BUCKETS && n < CLOSE_BATCH; b++)
        for (struct pipe_entry *e = ap->bucket[b]; e && n < CLOSE_BATCH; e = e->next)
            if (now - e->last_ns > limit) {
                idle[n++] = e->id;
                e->last_ns = now; /* closed once; its removal callback forgets it */
            }
    pthread_mutex_unlock(&ap->lock);
    for (size_t i = 0; i < n; i++) {
        nng_pipe p = NNG_PIPE_INITIALIZER;
        p.id = idle[i];
        if (nng_pipe_close(p) == 0)
            RS_COUNT(ap->counters, agent_pipes_idle_closed);
    }
    if (n)
        rs_log_limited(60, RS_LOG_INFO, "RS-INGEST-PIPE-IDLE",
                       "closed %zu agent connection(s) that sent no whole request in %u s "
                       "(agent-idle-timeout-s; agents redial)",
                       n, ap->o.idle_timeout_s);
}

int
rs_agent_pipes_start(uv_loop_t *loop, nng_socket sock, const struct rs_agent_pipes_options *o,
                     struct rs_counters *counters, rs_agent_pipes **out)
{
    rs_agent_pipes *ap = calloc(1, sizeof *ap);
    int rv;

    if (!ap || rs_peer_counts_new(o->max_per_peer, &ap->peers) != 0) {
        free(ap);
        return NNG_ENOMEM;
    }
    ap->o = *o;
    ap->counters = counters;
    atomic_init(&ap->holds, 2);
    pthread_mutex_init(&ap->lock, NULL);
    if ((rv = nng_pipe_notify(sock, NNG_PIPE_EV_ADD_PRE, on_pipe, ap)) != 0 ||
        (rv = nng_pipe_notify(sock, NNG_PIPE_EV_REM_POST, on_pipe, ap)) != 0) {
        rs_peer_counts_free(ap->peers);
        pthread_mutex_destroy(&ap->lock);
        free(ap);
        return rv;
    }
    uv_timer_init(loop, &ap->sweep);
    ap->sweep.data = ap;
    if (o->idle_timeout_s) {
        uint64_t every = (uint64_t)o->idle_timeout_s * 1000 / 4;
        every = every < SWEEP_MAX_MS ? every : SWEEP_MAX_MS;
        uv_timer_start(&ap->sweep, on_sweep, every ? every : 1, every ? every : 1);
    }
    *out = ap;
    return 0;
}

static void
free_pipes(rs_agent_pipes *ap)
{
    for (size_t b = 0; b < BUCKETS; b++)
        for (struct pipe_entry *e = ap->bucket[b], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    rs_peer_counts_free(ap->peers);
    pthread_mutex_destroy(&ap->lock);
    free(ap);
}

/* One holder let go; the last one frees. */
static void
let_go(rs_agent_pipes *ap)
{
    if (atomic_fetch_sub(&ap->holds, 1) == 1)
        free_pipes(ap);
}

static void
sweep_closed(uv_handle_t *h)
{
    let_go(h->data);
}

void
rs_agent_pipes_close(rs_agent_pipes *ap)
{
    if (!ap)
        return;
    uv_close((uv_handle_t *)&ap->sweep, sweep_closed);
}

void
rs_agent_pipes_release(rs_agent_pipes *ap)
{
    if (ap)
        let_go(ap);
}
