/* Agent pipe admission, idle closing and the handshake timeout (see agent_pipes.h). NNG calls the
 * pipe callbacks on its own threads; a table of pipes (id -> peer, addresses, last whole request)
 * under one mutex serves them, the request path, and the loop, which ends the connections to
 * close (the idle sweep's timer, and an async wake-up for evictions).
 * How a connection is ended: NNG 1.5.2's TCP and TLS transports read a message in steps (its
 * length, then its body as it arrives) and start each next read from the last one's callback
 * without checking whether the pipe was closed meanwhile; nng_pipe_close in that window stops
 * the read aio first, the next read is dropped without completing, and NNG's one reaper thread
 * waits for it in rep0's pipe stop for good — after which no pipe of the process is ever freed
 * (descriptors, memory, the per-peer counts here: ingest stops). A peer trickling a message hits
 * that window on nearly every close (tests/integration/238). So the loop does not call
 * nng_pipe_close on a TCP pipe at once: it shuts the pipe's socket down (agent_conns.h), the
 * pending or next read ends with an error, and NNG closes the pipe from its own callback, where
 * no read is in flight. A pipe still there END_GRACE_NS later is closed with nng_pipe_close: no
 * read of it can complete with data any more, so none is between two reads — over tls+tcp://,
 * NNG 1.5.2's TLS layer leaves a read that starts after its connection failed (ours, or the
 * peer's hang-up) waiting, without an error, until the pipe is closed; such a pipe's socket is
 * not connected any more, and it gets the same close. A pipe without an IP address (ipc://) is
 * closed with nng_pipe_close. */
#include "server/agent_pipes.h"

#include "common/clock.h"
#include "common/log.h"
#include "server/agent_conns.h"
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
/* After its socket was shut down, a pipe NNG has not closed by itself is closed this much later */
#define END_GRACE_NS 1000000000ull

struct pipe_entry {
    uint32_t id;
    uint64_t peer;
    uint64_t last_ns; /* monotonic: admitted, or its last whole request */
    bool has_addr;    /* TCP (or TLS over TCP): addr is its peer's address */
    bool evict;       /* chosen to make room: the loop ends it */
    uint64_t shut_ns; /* monotonic: its socket was shut down (0: not) */
    struct rs_conn_addr addr;
    struct pipe_entry *next;
};

/* A connection to end, found by its peer's address (or, without one, by pipe id). */
struct victim {
    struct rs_conn_addr addr;
    uint32_t id;
    bool has_addr, evicted;
    bool found; /* its socket is on the agents' port, connected */
    bool done;  /* shut down (or, ipc://, closed) */
};

/* A connection on the agents' port that is not a pipe (yet): since when it was first seen. */
struct unpiped {
    struct rs_conn_addr addr;
    uint64_t first_ns;
};

struct rs_agent_pipes {
    struct rs_agent_pipes_options o;
    struct rs_counters *counters;
    pthread_mutex_t lock;
    rs_peer_counts *peers;
    unsigned n;
    struct pipe_entry *bucket[BUCKETS];
    uv_timer_t sweep;
    uv_async_t wake;  /* evictions to do */
    bool loop_gone;   /* under lock: rs_agent_pipes_close ran, wake is closing */
    uint16_t port;    /* the listener's TCP port (0: not TCP, or not known yet) */
    struct unpiped *unpiped; /* sorted by addr; loop only */
    size_t n_unpiped;
    atomic_int holds; /* the loop's handles (2) and the socket's callbacks: freed when all let go */
};

static uint64_t
peer_of(nng_pipe p, struct rs_conn_addr *addr, bool *has_addr)
{
    nng_sockaddr a;
    struct sockaddr_storage ss;

    memset(&ss, 0, sizeof ss);
    *has_addr = false;
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
    *has_addr = rs_conn_addr_of_nng(&a, addr);
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
static struct pipe_entry *
pick_idle(rs_agent_pipes *ap, uint64_t now)
{
    struct pipe_entry *oldest = NULL;

    for (size_t b = 0; b < BUCKETS; b++)
        for (struct pipe_entry *e = ap->bucket[b]; e; e = e->next)
            if (!oldest || e->last_ns < oldest->last_ns)
                oldest = e;
    if (!oldest || now - oldest->last_ns < EVICT_IDLE_NS)
        return NULL;
    oldest->last_ns = now;
    return oldest;
}

/* NNG thread: admit or refuse a pipe before it joins the socket; forget it when it leaves. At
 * the total bound, an idle pipe makes room (pick_idle): the loop ends it (wake), and until its
 * removal callback runs the table holds one pipe more than the bound. A pipe refused here is
 * closed with nng_pipe_close: no read has started on it yet. */
static void
on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    rs_agent_pipes *ap = arg;
    uint32_t id = (uint32_t)nng_pipe_id(p);

    if (ev == NNG_PIPE_EV_ADD_PRE) {
        struct rs_conn_addr addr;
        bool has_addr;
        uint64_t peer = peer_of(p, &addr, &has_addr), now = rs_clock_mono_ns();
        struct pipe_entry *e = NULL, *victim = NULL;
        bool ok = false;
        pthread_mutex_lock(&ap->lock);
        bool full = ap->o.max_total && ap->n >= ap->o.max_total;
        if ((e = calloc(1, sizeof *e)) && rs_peer_counts_take(ap->peers, peer)) {
            if (!full || (!ap->loop_gone && (victim = pick_idle(ap, now)))) {
                struct pipe_entry **slot = &ap->bucket[id % BUCKETS];
                *e = (struct pipe_entry){id, peer, now, has_addr, false, 0, addr, *slot};
                *slot = e;
                ap->n++;
                ok = true;
                if (victim) {
                    victim->evict = true;
                    uv_async_send(&ap->wake); /* under the lock: the loop has not closed it */
                }
            } else
                rs_peer_counts_give(ap->peers, peer);
        }
        if (!ok)
            free(e);
        pthread_mutex_unlock(&ap->lock);
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

static int
victim_cmp(const void *a, const void *b)
{
    return rs_conn_addr_cmp(&((const struct victim *)a)->addr, &((const struct victim *)b)->addr);
}

static int
addr_cmp(const void *a, const void *b)
{
    return rs_conn_addr_cmp(a, b);
}

static int
unpiped_cmp(const void *a, const void *b)
{
    return rs_conn_addr_cmp(&((const struct unpiped *)a)->addr,
                            &((const struct unpiped *)b)->addr);
}

/* One pass over the connections on the agents' port (rs_agent_conns_each). */
struct pass {
    rs_agent_pipes *ap;
    uint64_t now, handshake_ns;
    struct victim *victims; /* sorted by addr */
    size_t n_victims;
    struct rs_conn_addr *piped; /* sorted; NULL: no handshake check in this pass */
    size_t n_piped;
    struct unpiped *unpiped; /* this pass's, sorted as found (rs_agent_conns_each: by fd) */
    size_t n_unpiped, cap_unpiped;
    unsigned handshakes_ended;
};

static void
end_conn(void *arg, int fd, const struct rs_conn_addr *peer)
{
    struct pass *ps = arg;
    struct victim key = {.addr = *peer}, *v;

    if (ps->n_victims &&
        (v = bsearch(&key, ps->victims, ps->n_victims, sizeof *v, victim_cmp)) != NULL) {
        v->found = true;
        if (!v->done && rs_agent_conn_shutdown(fd, ps->ap->port, peer) == 0)
            v->done = true;
        return;
    }
    if (!ps->piped || bsearch(peer, ps->piped, ps->n_piped, sizeof *peer, addr_cmp))
        return;
    /* Not a pipe: a connection still in its handshake (or one NNG is closing). */
    struct unpiped u = {*peer, ps->now}, *old;
    if (ps->ap->n_unpiped &&
        (old = bsearch(&u, ps->ap->unpiped, ps->ap->n_unpiped, sizeof u, unpiped_cmp)) != NULL)
        u.first_ns = old->first_ns;
    if (ps->now - u.first_ns >= ps->handshake_ns) {
        if (rs_agent_conn_shutdown(fd, ps->ap->port, peer) == 0)
            ps->handshakes_ended++;
        return;
    }
    if (ps->n_unpiped == ps->cap_unpiped) {
        size_t cap = ps->cap_unpiped ? ps->cap_unpiped * 2 : 64;
        struct unpiped *more = realloc(ps->unpiped, cap * sizeof *more);
        if (!more)
            return; /* forgotten: its clock starts again next pass */
        ps->unpiped = more;
        ps->cap_unpiped = cap;
    }
    ps->unpiped[ps->n_unpiped++] = u;
}

/* Loop: end the pipes idle past the timeout (idle) and those chosen for eviction, and — when the
 * handshake timeout is on — the connections that have not become pipes within it. */
static void
end_pipes(rs_agent_pipes *ap, bool idle)
{
    uint64_t now = rs_clock_mono_ns(), limit = (uint64_t)ap->o.idle_timeout_s * 1000000000ull;
    struct pass ps = {.ap = ap, .now = now,
                      .handshake_ns = (uint64_t)ap->o.handshake_timeout_s * 1000000000ull};
    size_t cap = CLOSE_BATCH;
    bool handshakes = idle && ap->o.handshake_timeout_s && ap->port, blind = false;

    pthread_mutex_lock(&ap->lock);
    if (handshakes && !(ps.piped = malloc((ap->n + 1) * sizeof *ps.piped)))
        handshakes = false;
    ps.victims = malloc(cap * sizeof *ps.victims);
    uint32_t late[CLOSE_BATCH];
    size_t n_late = 0;
    for (size_t b = 0; b < BUCKETS; b++)
        for (struct pipe_entry *e = ap->bucket[b]; e; e = e->next) {
            if (e->shut_ns && now - e->shut_ns >= END_GRACE_NS && n_late < CLOSE_BATCH) {
                late[n_late++] = e->id;
                e->shut_ns = 0;
            }
            if (handshakes && e->has_addr)
                ps.piped[ps.n_piped++] = e->addr;
            else if (handshakes)
                blind = true; /* a pipe NNG gave no address for: cannot tell pipes apart */
            bool old = idle && ap->o.idle_timeout_s && now - e->last_ns > limit;
            if (!(old || e->evict) || !ps.victims || ps.n_victims == cap)
                continue;
            ps.victims[ps.n_victims++] = (struct victim){
                .addr = e->addr, .id = e->id, .has_addr = e->has_addr, .evicted = e->evict};
            e->last_ns = now; /* ended once; if it is still here after another timeout, again */
            e->evict = false;
        }
    pthread_mutex_unlock(&ap->lock);
    if (blind) {
        handshakes = false;
        free(ps.piped);
        ps.piped = NULL;
    }

    for (size_t i = 0; i < n_late; i++) {
        nng_pipe p = NNG_PIPE_INITIALIZER;
        p.id = late[i];
        nng_pipe_close(p);
    }
    size_t by_id = 0;
    for (size_t i = 0; i < ps.n_victims; i++) /* the ones without an address go first */
        if (!ps.victims[i].has_addr) {
            struct victim t = ps.victims[by_id];
            ps.victims[by_id++] = ps.victims[i];
            ps.victims[i] = t;
        }
    for (size_t i = 0; i < by_id; i++) { /* ipc://: NNG's own close, the only one there is */
        nng_pipe p = NNG_PIPE_INITIALIZER;
        p.id = ps.victims[i].id;
        ps.victims[i].done = nng_pipe_close(p) == 0;
    }
    struct victim *found = ps.victims + by_id;
    struct pass sorted = ps;
    sorted.victims = found;
    sorted.n_victims = ps.n_victims - by_id;
    if (sorted.n_victims)
        qsort(found, sorted.n_victims, sizeof *found, victim_cmp);
    if (handshakes)
        qsort(sorted.piped, sorted.n_piped, sizeof *sorted.piped, addr_cmp);
    bool scanned = false;
    if (ap->port && (sorted.n_victims || handshakes)) {
        if (rs_agent_conns_each(ap->port, end_conn, &sorted) >= 0)
            scanned = true;
        else
            rs_log_limited(60, RS_LOG_WARN, "RS-INGEST-PIPE-FIND",
                           "cannot list the server's descriptors (/proc/self/fd): agent "
                           "connections to close stay open");
        if (handshakes) { /* this pass's not-yet-pipes replace the last pass's */
            free(ap->unpiped);
            ap->unpiped = sorted.unpiped;
            ap->n_unpiped = sorted.n_unpiped;
            if (ap->n_unpiped)
                qsort(ap->unpiped, ap->n_unpiped, sizeof *ap->unpiped, unpiped_cmp);
            sorted.unpiped = NULL;
        }
    }
    /* A TCP pipe whose socket was shut down, or is no connection any more (NNG 1.5.2's TLS layer
     * can leave a pipe waiting whose connection ended: see the top), gets NNG's close after the
     * grace. One whose socket is there but could not be shut down is tried again later. */
    size_t n_idle = 0, n_evicted = 0;
    pthread_mutex_lock(&ap->lock);
    for (size_t i = by_id; i < ps.n_victims; i++) {
        struct victim *v = &ps.victims[i];
        struct pipe_entry *e = *find(ap, v->id);
        /* Still in the table: ended now if shut down or its socket is gone, counted once (a pipe
         * lingering after its shutdown is chosen again). Gone from it already: NNG removed it at
         * once after our shutdown (counted: v->done), or it left by itself (not counted). */
        if (e) {
            v->done = (v->done || (scanned && !v->found)) && !e->shut_ns;
            if (v->done)
                e->shut_ns = now;
        }
    }
    pthread_mutex_unlock(&ap->lock);
    for (size_t i = 0; i < ps.n_victims; i++)
        if (ps.victims[i].done) {
            if (ps.victims[i].evicted) {
                n_evicted++;
                RS_COUNT(ap->counters, agent_pipes_evicted);
            } else {
                n_idle++;
                RS_COUNT(ap->counters, agent_pipes_idle_closed);
            }
        }
    if (n_evicted)
        rs_log_limited(10, RS_LOG_WARN, "RS-INGEST-PIPE-EVICTED",
                       "at agent-max-connections (%u): closed %zu agent connection(s) that had "
                       "waited longest without a whole request, for new ones",
                       ap->o.max_total, n_evicted);
    if (n_idle)
        rs_log_limited(60, RS_LOG_INFO, "RS-INGEST-PIPE-IDLE",
                       "closed %zu agent connection(s) that sent no whole request in %u s "
                       "(agent-idle-timeout-s; agents redial)",
                       n_idle, ap->o.idle_timeout_s);
    if (sorted.handshakes_ended) {
        RS_COUNT_ADD(ap->counters, agent_handshakes_timed_out, sorted.handshakes_ended);
        rs_log_limited(60, RS_LOG_WARN, "RS-INGEST-HANDSHAKE-TIMEOUT",
                       "closed %u agent connection(s) that did not finish their handshake in %u "
                       "s (agent-handshake-timeout-s)",
                       sorted.handshakes_ended, ap->o.handshake_timeout_s);
    }
    free(sorted.unpiped);
    free(ps.piped);
    free(ps.victims);
}

static void
on_sweep(uv_timer_t *t)
{
    end_pipes(t->data, true);
}

static void
on_wake(uv_async_t *a)
{
    end_pipes(a->data, false);
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
    atomic_init(&ap->holds, 3);
    pthread_mutex_init(&ap->lock, NULL);
    if ((rv = nng_pipe_notify(sock, NNG_PIPE_EV_ADD_PRE, on_pipe, ap)) != 0 ||
        (rv = nng_pipe_notify(sock, NNG_PIPE_EV_REM_POST, on_pipe, ap)) != 0) {
        rs_peer_counts_free(ap->peers);
        pthread_mutex_destroy(&ap->lock);
        free(ap);
        return rv;
    }
    uv_async_init(loop, &ap->wake, on_wake);
    ap->wake.data = ap;
    uv_timer_init(loop, &ap->sweep);
    ap->sweep.data = ap;
    uint64_t every = SWEEP_MAX_MS;
    if (o->idle_timeout_s && (uint64_t)o->idle_timeout_s * 1000 / 4 < every)
        every = (uint64_t)o->idle_timeout_s * 1000 / 4;
    if (o->handshake_timeout_s && (uint64_t)o->handshake_timeout_s * 1000 / 2 < every)
        every = (uint64_t)o->handshake_timeout_s * 1000 / 2;
    if (o->idle_timeout_s || o->handshake_timeout_s)
        uv_timer_start(&ap->sweep, on_sweep, every ? every : 1, every ? every : 1);
    *out = ap;
    return 0;
}

void
rs_agent_pipes_listening(rs_agent_pipes *ap, int port)
{
    if (ap && port > 0 && port < 65536)
        ap->port = (uint16_t)port;
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
    free(ap->unpiped);
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
handle_closed(uv_handle_t *h)
{
    let_go(h->data);
}

void
rs_agent_pipes_close(rs_agent_pipes *ap)
{
    if (!ap)
        return;
    pthread_mutex_lock(&ap->lock);
    ap->loop_gone = true;
    pthread_mutex_unlock(&ap->lock);
    uv_close((uv_handle_t *)&ap->sweep, handle_closed);
    uv_close((uv_handle_t *)&ap->wake, handle_closed);
}

void
rs_agent_pipes_release(rs_agent_pipes *ap)
{
    if (ap)
        let_go(ap);
}
