/* SOCK_SEQPACKET collector socket on libuv (see listener.h). libuv's pipes are stream sockets, so
 * the fds are driven with uv_poll. */
#include "node-agent/listener.h"

#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct peer {
    uv_poll_t poll;
    int fd;
    uint32_t pid, uid; /* from the kernel (SO_PEERCRED) */
    /* the rank its latest valid frame named: where capture orders for that rank go */
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint32_t rank;
    rs_listener *l;
    struct peer *prev, *next;
};

struct rs_listener {
    uv_poll_t poll;
    int fd;
    char *path;
    unsigned max_collectors;
    uint32_t *allow_uids;
    size_t n_allow_uids;
    rs_listener_frame_fn fn;
    void *arg;
    struct peer *peers;
    struct rs_listener_stats stats;
    int open_handles; /* listener poll + peers being closed */
    uint8_t buf[RS_WIRE_MAX_FRAME_BYTES + 1];
};

static void
maybe_free(rs_listener *l)
{
    if (l->open_handles == 0) {
        free(l->path);
        free(l->allow_uids);
        free(l);
    }
}

static void
on_peer_closed(uv_handle_t *h)
{
    struct peer *p = h->data;
    rs_listener *l = p->l;

    close(p->fd);
    free(p);
    l->open_handles--;
    maybe_free(l);
}

static void
peer_close(struct peer *p)
{
    rs_listener *l = p->l;

    if (p->prev)
        p->prev->next = p->next;
    else
        l->peers = p->next;
    if (p->next)
        p->next->prev = p->prev;
    l->stats.collectors_now--;
    uv_close((uv_handle_t *)&p->poll, on_peer_closed);
}

/* Frames taken from one collector per wake-up, so one busy collector cannot starve the loop. */
#define FRAMES_PER_WAKEUP 64

static void
on_peer_readable(uv_poll_t *h, int status, int events)
{
    struct peer *p = h->data;
    rs_listener *l = p->l;

    for (int taken = 0; taken < FRAMES_PER_WAKEUP; taken++) {
        struct iovec iov = {l->buf, sizeof l->buf};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        ssize_t n = status < 0 ? -1 : recvmsg(p->fd, &msg, MSG_DONTWAIT);
        rs_wire_rank_frame *frame;
        int rc;

        if (n < 0 && (errno == EAGAIN || errno == EINTR) && status >= 0)
            return;
        if (n <= 0) { /* collector gone (or error): forget it */
            peer_close(p);
            return;
        }
        l->stats.frames++;
        if (msg.msg_flags & MSG_TRUNC)
            rc = RS_E_TOO_BIG;
        else
            rc = rs_wire_rank_frame_decode(l->buf, (size_t)n, RS_WIRE_MAX_FRAME_BYTES, &frame);
        if (rc != 0) {
            l->stats.frames_rejected++;
            rs_log_limited(10, RS_LOG_WARN, "RS-AGENT-FRAME", "rejected a %zd-byte frame: %s", n,
                           rs_strerror(rc));
            continue;
        }
        struct rs_rank_batch b = *rs_wire_rank_frame_batch(frame);
        b.identity.pid = p->pid; /* the kernel's word, not the frame's */
        snprintf(p->job, sizeof p->job, "%s", b.identity.job);
        p->rank = b.identity.rank;
        l->fn(l->arg, &b);
        rs_wire_rank_frame_free(frame);
    }
}

static bool
uid_allowed(const rs_listener *l, uint32_t uid)
{
    if (!l->allow_uids)
        return true;
    for (size_t i = 0; i < l->n_allow_uids; i++)
        if (l->allow_uids[i] == uid)
            return true;
    return false;
}

/* Reads and counts what a collector we will not serve has sent already, then closes it: its
 * frames are lost, but counted here (the collector counted them as sent). */
static void
refuse(rs_listener *l, int fd)
{
    uint8_t b;

    while (recv(fd, &b, 1, MSG_DONTWAIT | MSG_TRUNC) > 0) /* 0: the collector is gone */
        l->stats.frames_refused++;
    close(fd);
}

static void
on_accept(uv_poll_t *h, int status, int events)
{
    rs_listener *l = h->data;
    int fd;

    while ((fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
        struct ucred cred = {0};
        socklen_t cred_len = sizeof cred;
        struct peer *p;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 ||
            !uid_allowed(l, (uint32_t)cred.uid)) {
            l->stats.collectors_denied++;
            rs_log_limited(10, RS_LOG_WARN, "RS-AGENT-DENIED",
                           "refused a collector of uid %u (pid %d): not in --allow-uids",
                           (unsigned)cred.uid, (int)cred.pid);
            refuse(l, fd);
            continue;
        }
        if (l->stats.collectors_now >= l->max_collectors || !(p = calloc(1, sizeof *p))) {
            l->stats.collectors_refused++;
            rs_log_limited(10, RS_LOG_WARN, "RS-AGENT-COLLECTORS",
                           "refused a collector (pid %d): %u connected", (int)cred.pid,
                           l->max_collectors);
            refuse(l, fd);
            continue;
        }
        p->pid = (uint32_t)cred.pid;
        p->uid = (uint32_t)cred.uid;
        rs_log(RS_LOG_DEBUG, "RS-AGENT-COLLECTOR", "collector pid %u uid %u connected", p->pid,
               p->uid);
        p->fd = fd;
        p->l = l;
        p->next = l->peers;
        if (l->peers)
            l->peers->prev = p;
        l->peers = p;
        l->open_handles++;
        l->stats.collectors_now++;
        l->stats.collectors_total++;
        uv_poll_init(h->loop, &p->poll, fd);
        p->poll.data = p;
        uv_poll_start(&p->poll, UV_READABLE | UV_DISCONNECT, on_peer_readable);
    }
}

/* True when a process accepts connections on the socket file at addr. */
static bool
someone_listens(const struct sockaddr_un *addr)
{
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    bool live = fd >= 0 && connect(fd, (const struct sockaddr *)addr, sizeof *addr) == 0;

    if (fd >= 0)
        close(fd);
    return live;
}

int
rs_listener_start(uv_loop_t *loop, const char *path, const struct rs_listener_options *opts,
                  rs_listener_frame_fn fn, void *arg, rs_listener **out)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    struct stat st;
    rs_listener *l;
    int rc;

    if (strlen(path) >= sizeof addr.sun_path)
        return -ENAMETOOLONG;
    strcpy(addr.sun_path, path);
    /* A socket file left by a dead agent blocks bind; a live one is another process's (another
     * agent, or a squatter waiting for the jobs' data); anything else at that path is not ours. */
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return -EEXIST;
        if (someone_listens(&addr))
            return -EADDRINUSE;
        unlink(path);
    }
    if (!(l = calloc(1, sizeof *l)))
        return -ENOMEM;
    l->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        chmod(path, 0666) != 0 || listen(l->fd, 256) != 0) {
        rc = -errno;
        if (l->fd >= 0)
            close(l->fd);
        free(l);
        return rc;
    }
    if (opts->n_allow_uids) {
        l->allow_uids = malloc(opts->n_allow_uids * sizeof *l->allow_uids);
        if (!l->allow_uids) {
            close(l->fd);
            unlink(path);
            free(l);
            return -ENOMEM;
        }
        memcpy(l->allow_uids, opts->allow_uids, opts->n_allow_uids * sizeof *l->allow_uids);
        l->n_allow_uids = opts->n_allow_uids;
    }
    l->path = strdup(path);
    l->max_collectors = opts->max_collectors;
    l->fn = fn;
    l->arg = arg;
    l->open_handles = 1;
    uv_poll_init(loop, &l->poll, l->fd);
    l->poll.data = l;
    uv_poll_start(&l->poll, UV_READABLE, on_accept);
    *out = l;
    return 0;
}

void
rs_listener_get_stats(const rs_listener *l, struct rs_listener_stats *out)
{
    *out = l->stats;
}

int
rs_listener_send_control(rs_listener *l, const char *job, uint32_t rank, const uint8_t *buf,
                         size_t len)
{
    int sent = 0;

    for (struct peer *p = l->peers; p; p = p->next) {
        if (p->rank != rank || strcmp(p->job, job) != 0)
            continue;
        /* the collector reads without blocking at its flush: never wait for it here */
        if (send(p->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len) {
            l->stats.control_sent++;
            sent++;
        } else {
            l->stats.control_dropped++;
            rs_log_limited(10, RS_LOG_WARN, "RS-AGENT-CONTROL",
                           "a capture order for rank %u (pid %u) was not sent: %s", rank, p->pid,
                           strerror(errno));
        }
    }
    return sent;
}

static void
on_listener_closed(uv_handle_t *h)
{
    rs_listener *l = h->data;

    close(l->fd);
    l->open_handles--;
    maybe_free(l);
}

void
rs_listener_close(rs_listener *l)
{
    if (!l)
        return;
    if (l->path)
        unlink(l->path);
    while (l->peers)
        peer_close(l->peers);
    uv_close((uv_handle_t *)&l->poll, on_listener_closed);
}
