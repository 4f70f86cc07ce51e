/* Connections counted per peer address, so that one address cannot take every connection the
 * server has (issue 23: 1,100 slow HTTP clients made every other request 503; ~20,000 idle NNG
 * sockets exhausted the file descriptors). HTTP (http.c) and agent ingest (ingest.c) each keep
 * one table; a peer is its IP address, the port left out. */
#ifndef RS_SERVER_CONN_LIMITS_H
#define RS_SERVER_CONN_LIMITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct rs_peer_counts rs_peer_counts;

/* A nonzero key for the IP address of sa (IPv4, IPv6, IPv4-mapped IPv6 the same as IPv4);
 * 1 for anything else (Unix sockets, unknown families). */
uint64_t rs_peer_key(const struct sockaddr *sa);

/* A table that admits at most max_per_peer connections per key (0 = no bound, counting only).
 * Returns 0 or -ENOMEM. */
int rs_peer_counts_new(unsigned max_per_peer, rs_peer_counts **out);

/* Counts one more connection of key and returns true, or returns false (nothing counted) when
 * key has max_per_peer already or memory ran out. Thread-safe. */
bool rs_peer_counts_take(rs_peer_counts *pc, uint64_t key);

/* Counts one connection of key less (one that rs_peer_counts_take admitted). Thread-safe. */
void rs_peer_counts_give(rs_peer_counts *pc, uint64_t key);

/* Distinct keys with a connection now (for tests and /metrics). Thread-safe. */
unsigned rs_peer_counts_peers(rs_peer_counts *pc);

/* NULL is a no-op. */
void rs_peer_counts_free(rs_peer_counts *pc);

#endif
