/* The agents' TCP connections as the kernel sees them, found among the server's own descriptors
 * by their addresses. NNG 1.5.2 cannot safely close a connection whose message it is reading
 * (agent_pipes.c), and gives no handle at all on one that never finished its TLS handshake; the
 * server ends both by shutting the socket down under NNG, which then closes the connection on its
 * own error path. Linux (/proc/self/fd). */
#ifndef RS_SERVER_AGENT_CONNS_H
#define RS_SERVER_AGENT_CONNS_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* A TCP endpoint: IPv4 as an IPv4-mapped IPv6 address, so that both families compare alike. */
struct rs_conn_addr {
    uint8_t ip[16];
    uint16_t port; /* host order */
};

/* *out from a socket address. false (out untouched) for anything but AF_INET / AF_INET6. */
bool rs_conn_addr_of_sockaddr(const struct sockaddr *sa, struct rs_conn_addr *out);

/* *out from NNG's form of one (NNG_OPT_REMADDR, NNG_OPT_LOCADDR). false (out untouched) for
 * anything but NNG_AF_INET / NNG_AF_INET6 (ipc://, inproc://). */
bool rs_conn_addr_of_nng(const nng_sockaddr *sa, struct rs_conn_addr *out);

/* memcmp-like order of two addresses (for sorting and bsearch). */
int rs_conn_addr_cmp(const struct rs_conn_addr *a, const struct rs_conn_addr *b);

/* Calls fn(arg, fd, peer) for every connected TCP socket of this process whose local port is
 * `port` (host order, not 0) — the connections a listener on that port accepted, and any this
 * process made from that port. fn must not close fd. Returns the number of such sockets, or
 * -errno when the descriptors cannot be listed. Any thread; costs two or three system calls per
 * open descriptor. */
int rs_agent_conns_each(uint16_t port, void (*fn)(void *arg, int fd, const struct rs_conn_addr *peer),
                        void *arg);

/* Shuts down both directions of the connection that descriptor fd refers to, if it still is the
 * one from `peer` to local port `port`: it takes a descriptor of its own first, so a descriptor
 * that its owner closed and that was reused meanwhile is left alone. The descriptor stays open (its
 * owner closes it); the peer sees the connection end, and a read pending on it completes.
 * Returns 0, -ESRCH when fd is no longer that connection, or -errno (-EMFILE: no descriptor to
 * spare; try again later). */
int rs_agent_conn_shutdown(int fd, uint16_t port, const struct rs_conn_addr *peer);

#endif
