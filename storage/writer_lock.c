/* The store directory as a whole: the writer lock that keeps a second server (or any second
 * writer) off a store, and the bookkeeping that lets a failed start remove what it created
 * (store.h rs_store_close_discard). LMDB's lock.mdb is a reader table, not an owner: it lets any
 * number of processes open the environment and write in turn. */
#include "storage/store_int.h"

#include "common/error.h"
#include "common/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define WRITER_LOCK "writer.lock"

static int
path_in(const rs_store *s, const char *name, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s/%s", s->dir, name);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static bool
absent(const rs_store *s, const char *name)
{
    char path[PATH_MAX];
    return path_in(s, name, path, sizeof path) == 0 && access(path, F_OK) != 0 && errno == ENOENT;
}

void
rs__store_note_files(rs_store *s)
{
    s->made_data = absent(s, "data.mdb");
    s->made_lock_mdb = absent(s, "lock.mdb");
}

int
rs__store_lock(rs_store *s)
{
    char path[PATH_MAX], pid[32];
    int fd, rc, n;

    if ((rc = path_in(s, WRITER_LOCK, path, sizeof path)) != 0)
        return rc;
    /* O_EXCL first, so that made_writer_lock is true only for a file this open created: a
     * failed start must never unlink the lock file of the process that holds it */
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0)
        s->made_writer_lock = true;
    else if (errno == EEXIST)
        fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK ? RS_E_LOCKED : -errno;
        close(fd);
        return rc;
    }
    s->lock_fd = fd;
    n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
        return errno ? -errno : -EIO; /* the caller's failure path releases the lock */
    return 0;
}

void
rs__store_unmake(rs_store *s)
{
    char path[PATH_MAX];

    if (s->made_dir) {
        rs_fs_remove_tree(s->made_dir);
    } else {
        if (s->made_data && path_in(s, "data.mdb", path, sizeof path) == 0)
            unlink(path);
        if (s->made_lock_mdb && path_in(s, "lock.mdb", path, sizeof path) == 0)
            unlink(path);
        /* unlinked while still locked: nobody can have locked this file meanwhile */
        if (s->made_writer_lock && s->lock_fd >= 0 &&
            path_in(s, WRITER_LOCK, path, sizeof path) == 0)
            unlink(path);
    }
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    s->lock_fd = -1;
}

long
rs_store_locked_by(const char *dir)
{
    char path[PATH_MAX], buf[32];
    ssize_t n;
    int fd;

    if (snprintf(path, sizeof path, "%s/%s", dir, WRITER_LOCK) >= (int)sizeof path)
        return 0;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    long pid = strtol(buf, NULL, 10);
    return pid > 0 ? pid : 0;
}
