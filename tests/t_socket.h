/* Test helper: a listening AF_UNIX SOCK_SEQPACKET socket standing in for rankscope-agent. */
#ifndef RS_TESTS_T_SOCKET_H
#define RS_TESTS_T_SOCKET_H

#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Binds and listens on `path` (replacing a stale file); returns the fd or -1. */
static inline int
t_listen_seqpacket(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

    if (fd < 0 || strlen(path) >= sizeof addr.sun_path)
        return -1;
    strcpy(addr.sun_path, path);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 4) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

#endif
