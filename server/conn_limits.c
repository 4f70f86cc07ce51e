/* Per-peer connection counts (see conn_limits.h): a chained hash table under one mutex; an entry
 * lives while its peer has a connection. */
#include "server/conn_limits.h"

#include "common/hash.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 1024

struct peer {
    uint64_t key;
    unsigned n;
    struct peer *next;
};

struct rs_peer_counts {
    pthread_mutex_t lock;
    unsigned max_per_peer;
    unsigned peers;
    struct peer *bucket[BUCKETS];
};

uint64_t
rs_peer_key(const struct sockaddr *sa)
{
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    const void *ip = NULL;
    size_t len = 0;
    uint64_t h;

    if (sa && sa->sa_family == AF_INET) {
        ip = &((const struct sockaddr_in *)sa)->sin_addr;
        len = 4;
    } else if (sa && sa->sa_family == AF_INET6) {
        const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        ip = memcmp(a, v4_mapped, sizeof v4_mapped) == 0 ? a + 12 : a;
        len = ip == a ? 16 : 4;
    }
    if (!ip)
        return 1;
    h = rs_hash_fnv1a64(ip, len);
    return h > 1 ? h : h + 2; /* never 0 (no key) nor 1 (not an IP) */
}

int
rs_peer_counts_new(unsigned max_per_peer, rs_peer_counts **out)
{
    rs_peer_counts *pc = calloc(1, sizeof *pc);

    if (!pc)
        return -ENOMEM;
    pthread_mutex_init(&pc->lock, NULL);
    pc->max_per_peer = max_per_peer;
    *out = pc;
    return 0;
}

bool
rs_peer_counts_take(rs_peer_counts *pc, uint64_t key)
{
    struct peer **slot = &pc->bucket[key % BUCKETS], *p;
    bool ok = true;

    pthread_mutex_lock(&pc->lock);
    for (p = *slot; p && p->key != key; p = p->next)
        ;
    if (!p && (p = calloc(1, sizeof *p)) != NULL) {
        p->key = key;
        p->next = *slot;
        *slot = p;
        pc->peers++;
    }
    if (!p || (pc->max_per_peer && p->n >= pc->max_per_peer))
        ok = false;
    else
        p->n++;
    pthread_mutex_unlock(&pc->lock);
    return ok;
}

void
rs_peer_counts_give(rs_peer_counts *pc, uint64_t key)
{
    struct peer **slot = &pc->bucket[key % BUCKETS], *p;

    pthread_mutex_lock(&pc->lock);
    while ((p = *slot) != NULL && p->key != key)
        slot = &p->next;
    if (p && p->n > 0 && --p->n == 0) {
        *slot = p->next;
        free(p);
        pc->peers--;
    }
    pthread_mutex_unlock(&pc->lock);
}

unsigned
rs_peer_counts_peers(rs_peer_counts *pc)
{
    unsigned n;

    pthread_mutex_lock(&pc->lock);
    n = pc->peers;
    pthread_mutex_unlock(&pc->lock);
    return n;
}

void
rs_peer_counts_free(rs_peer_counts *pc)
{
    if (!pc)
        return;
    for (size_t i = 0; i < BUCKETS; i++)
        for (struct peer *p = pc->bucket[i], *next; p; p = next) {
            next = p->next;
            free(p);
        }
    pthread_mutex_destroy(&pc->lock);
    free(pc);
}
