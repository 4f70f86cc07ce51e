/* Finding and shutting down the agents' TCP connections by address (see agent_conns.h). */
#include "server/agent_conns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool
rs_conn_addr_of_sockaddr(const struct sockaddr *sa, struct rs_conn_addr *out)
{
    struct rs_conn_addr a = {{0}, 0};

    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        a.ip[10] = a.ip[11] = 0xff;
        memcpy(&a.ip[12], &in->sin_addr, 4);
        a.port = ntohs(in->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        memcpy(a.ip, &in6->sin6_addr, 16);
        a.port = ntohs(in6->sin6_port);
    } else
        return false;
    *out = a;
    return true;
}

bool
rs_conn_addr_of_nng(const nng_sockaddr *sa, struct rs_conn_addr *out)
{
    struct rs_conn_addr a = {{0}, 0};

    if (sa->s_family == NNG_AF_INET) {
        a.ip[10] = a.ip[11] = 0xff;
        memcpy(&a.ip[12], &sa->s_in.sa_addr, 4); /* network order, as in the kernel's */
        a.port = ntohs(sa->s_in.sa_port);
    } else if (sa->s_family == NNG_AF_INET6) {
        memcpy(a.ip, sa->s_in6.sa_addr, 16);
        a.port = ntohs(sa->s_in6.sa_port);
    } else
        return false;
    *out = a;
    return true;
}

int
rs_conn_addr_cmp(const struct rs_conn_addr *a, const struct rs_conn_addr *b)
{
    int c = memcmp(a->ip, b->ip, sizeof a->ip);
    return c ? c : (a->port > b->port) - (a->port < b->port);
}

/* The addresses of socket fd when it is a connected TCP socket on local port `port`. */
static bool
conn_of(int fd, uint16_t port, struct rs_conn_addr *peer)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    struct rs_conn_addr local;
    int type = 0;
    socklen_t tlen = sizeof type;

    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
        !rs_conn_addr_of_sockaddr((struct sockaddr *)&ss, &local) || local.port != port)
        return false;
    len = sizeof ss;
    if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0 ||
        !rs_conn_addr_of_sockaddr((struct sockaddr *)&ss, peer))
        return false;
    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 && type == SOCK_STREAM;
}

int
rs_agent_conns_each(uint16_t port, void (*fn)(void *arg, int fd, const struct rs_conn_addr *peer),
                    void *arg)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -errno;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        struct rs_conn_addr peer;
        if (*end || end == e->d_name || fd < 0 || fd == dirfd(d))
            continue;
        if (conn_of((int)fd, port, &peer)) {
            fn(arg, (int)fd, &peer);
            n++;
        }
    }
    closedir(d);
    return n;
}

int
rs_agent_conn_shutdown(int fd, uint16_t port, const struct rs_conn_addr *peer)
{
    struct rs_conn_addr now;
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0), rc = 0;

    if (own < 0)
        return -errno;
    /* `own` holds what fd referred to a moment ago, whatever happens to fd now */
    if (!conn_of(own, port, &now) || rs_conn_addr_cmp(&now, peer) != 0)
        rc = -ESRCH;
    else if (shutdown(own, SHUT_RDWR) != 0 && errno != ENOTCONN)
        rc = -errno;
    close(own);
    return rc;
}
