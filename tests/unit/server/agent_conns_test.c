/* Unit tests of finding and shutting down the agents' TCP connections (server/agent_conns.c), on
 * real sockets on 127.0.0.1: the kernel's and NNG's forms of an address compare equal; the scan
 * reports the connections a listener on the port accepted and nothing else; a shutdown ends the
 * connection for its peer; a descriptor that now holds another connection is left alone. */
#include "server/agent_conns.h"
#include "tests/t.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

static void
address_forms(void)
{
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(4242)};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(4242)};
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    nng_sockaddr n4 = {.s_in = {NNG_AF_INET, htons(4242), 0}}, n6, nipc = {.s_family = NNG_AF_IPC};
    struct rs_conn_addr a, b, c, d;

    inet_pton(AF_INET, "10.1.2.3", &in.sin_addr);
    inet_pton(AF_INET6, "::ffff:10.1.2.3", &in6.sin6_addr);
    inet_pton(AF_INET, "10.1.2.3", &n4.s_in.sa_addr);
    n6.s_in6.sa_family = NNG_AF_INET6;
    n6.s_in6.sa_port = htons(4242);
    memcpy(n6.s_in6.sa_addr, &in6.sin6_addr, 16);
    T_CHECK(rs_conn_addr_of_sockaddr((struct sockaddr *)&in, &a));
    T_CHECK(rs_conn_addr_of_sockaddr((struct sockaddr *)&in6, &b));
    T_CHECK(rs_conn_addr_of_nng(&n4, &c));
    T_CHECK(rs_conn_addr_of_nng(&n6, &d));
    T_EQ(a.port, 4242);
    /* an IPv4 peer reads the same from a v4 socket, a dual-stack one, and from NNG */
    T_EQ(rs_conn_addr_cmp(&a, &b), 0);
    T_EQ(rs_conn_addr_cmp(&a, &c), 0);
    T_EQ(rs_conn_addr_cmp(&a, &d), 0);
    c.port = 4243;
    T_CHECK(rs_conn_addr_cmp(&a, &c) < 0 && rs_conn_addr_cmp(&c, &a) > 0);
    T_CHECK(!rs_conn_addr_of_sockaddr((struct sockaddr *)&un, &a));
    T_CHECK(!rs_conn_addr_of_nng(&nipc, &a));
    T_EQ(a.port, 4242); /* untouched on refusal */
}

/* A listener on 127.0.0.1 (its port in *port), and `n` connections to it: clients in cli[],
 * the accepted ends in srv[]. */
static int
connections(int n, int *lfd, uint16_t *port, int *cli, int *srv)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;

    if ((*lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 || bind(*lfd, (struct sockaddr *)&a, len) ||
        listen(*lfd, 16) || getsockname(*lfd, (struct sockaddr *)&a, &len))
        return -errno;
    *port = ntohs(a.sin_port);
    for (int i = 0; i < n; i++)
        if ((cli[i] = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
            connect(cli[i], (struct sockaddr *)&a, sizeof a) ||
            (srv[i] = accept(*lfd, NULL, NULL)) < 0)
            return -errno;
    return 0;
}

static struct rs_conn_addr
local_of(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    struct rs_conn_addr a = {{0}, 0};

    getsockname(fd, (struct sockaddr *)&ss, &len);
    rs_conn_addr_of_sockaddr((struct sockaddr *)&ss, &a);
    return a;
}

struct seen {
    int n, fd[8];
    struct rs_conn_addr peer[8];
};

static void
note(void *arg, int fd, const struct rs_conn_addr *peer)
{
    struct seen *s = arg;
    if (s->n < 8) {
        s->fd[s->n] = fd;
        s->peer[s->n++] = *peer;
    }
}

/* true when the client's end reads EOF (or a reset) within 1 s */
static bool
ended(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    char c;
    return poll(&p, 1, 1000) == 1 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

static void
finds_and_ends(void)
{
    int lfd, cli[2], srv[2];
    uint16_t port;
    struct seen s = {0};

    T_OK(connections(2, &lfd, &port, cli, srv));
    /* the accepted ends only: not the listener, not the clients (their local port is another) */
    T_EQ(rs_agent_conns_each(port, note, &s), 2);
    T_EQ(s.n, 2);
    for (int i = 0; i < s.n; i++) {
        int which = s.fd[i] == srv[0] ? 0 : s.fd[i] == srv[1] ? 1 : -1;
        T_CHECK(which >= 0);
        if (which < 0)
            continue;
        struct rs_conn_addr want = local_of(cli[which]);
        T_EQ(rs_conn_addr_cmp(&s.peer[i], &want), 0);
    }
    struct rs_conn_addr peer0 = local_of(cli[0]), peer1 = local_of(cli[1]);
    T_EQ(rs_agent_conn_shutdown(srv[0], port, &peer1), -ESRCH); /* another connection's peer */
    T_EQ(rs_agent_conn_shutdown(srv[0], port + 1, &peer0), -ESRCH); /* another port */
    T_CHECK(!ended(cli[0])); /* a refused shutdown left it alone */
    T_EQ(rs_agent_conn_shutdown(srv[0], port, &peer0), 0);
    T_CHECK(ended(cli[0]));
    /* the descriptor stays open for its owner */
    T_EQ(fcntl(srv[0], F_GETFD) >= 0, 1);
    T_EQ(rs_agent_conn_shutdown(-1, port, &peer0), -EBADF);
    for (int i = 0; i < 2; i++) {
        close(cli[i]);
        close(srv[i]);
    }
    close(lfd);
}

/* The owner closed the descriptor and a new connection took its number: a shutdown aimed at the
 * old connection must leave the new one alone. */
static void
reused_descriptor(void)
{
    int lfd, cli[2], srv[2];
    uint16_t port;

    T_OK(connections(1, &lfd, &port, cli, srv));
    struct rs_conn_addr old = local_of(cli[0]);
    int number = srv[0];
    close(srv[0]);
    close(cli[0]);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons(port)};
    T_CHECK((cli[1] = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
    T_EQ(connect(cli[1], (struct sockaddr *)&a, sizeof a), 0);
    srv[1] = accept(lfd, NULL, NULL);
    if (srv[1] != number) { /* the lowest free number: the old one, unless a thread took it */
        fprintf(stderr, "  note: the new connection got descriptor %d, not %d\n", srv[1], number);
        if (dup2(srv[1], number) < 0)
            T_CHECK(!"dup2");
    }
    T_EQ(rs_agent_conn_shutdown(number, port, &old), -ESRCH);
    T_CHECK(!ended(cli[1]));
    close(cli[1]);
    close(srv[1]);
    if (srv[1] != number)
        close(number);
    close(lfd);
}

int
main(void)
{
    T_RUN(address_forms);
    T_RUN(finds_and_ends);
    T_RUN(reused_descriptor);
    return T_DONE("server/agent_conns");
}
