/* Test tool (LD_PRELOAD): makes a power cut reproducible for the store's power-loss test. Every
 * write to a file named data.mdb that is not durable yet — not on an O_DSYNC descriptor, not
 * followed by fsync/fdatasync — first has its old bytes appended to an undo log
 * ($RS_POWERLOSS_LOG: records of [u64 offset][u64 length][u64 old length][old bytes]); an
 * fsync/fdatasync of the file empties the log (what it covered is on disk). After the process is
 * killed, applying the log backwards (tests/integration/075-power-loss.sh) leaves the file as a
 * power cut at that moment would have: only what was synced. Not for sanitizer builds (the
 * sanitizer runtime must come first in the preload order). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -2; /* -2: not opened yet; -1: no log configured */

static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static void
init(void)
{
    if (!real_pwrite) {
        real_pwrite = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
        real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
        real_writev = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
        real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
        real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    }
    if (log_fd == -2) {
        const char *path = getenv("RS_POWERLOSS_LOG");
        log_fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
    }
}

/* Whether fd is data.mdb opened without O_DSYNC (a write there is not durable on return). */
static int
volatile_data_file(int fd)
{
    char link[64], path[4096];
    ssize_t n;
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || (fl & O_DSYNC) == O_DSYNC)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    if ((n = readlink(link, path, sizeof path - 1)) <= 0)
        return 0;
    path[n] = '\0';
    return n >= 9 && strcmp(path + n - 9, "/data.mdb") == 0;
}

static void
put_all(const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = real_write(log_fd, c, n);
        if (w <= 0)
            return;
        c += w;
        n -= (size_t)w;
    }
}

/* Logs the old bytes of [off, off + len) of fd. */
static void
remember(int fd, off_t off, size_t len)
{
    char *old = malloc(len ? len : 1);
    ssize_t got = old ? pread(fd, old, len, off) : 0;
    uint64_t head[3] = {(uint64_t)off, (uint64_t)len, (uint64_t)(got > 0 ? got : 0)};

    put_all(head, sizeof head);
    if (got > 0)
        put_all(old, (size_t)got);
    free(old);
}

static void
before_write(int fd, off_t off, size_t len)
{
    init();
    if (log_fd < 0 || !volatile_data_file(fd))
        return;
    pthread_mutex_lock(&lock);
    remember(fd, off < 0 ? lseek(fd, 0, SEEK_CUR) : off, len);
    pthread_mutex_unlock(&lock);
}

static void
after_sync(int fd)
{
    if (log_fd < 0 || !volatile_data_file(fd))
        return;
    pthread_mutex_lock(&lock);
    if (ftruncate(log_fd, 0) != 0)
        perror("powerloss: truncating the undo log");
    pthread_mutex_unlock(&lock);
}

ssize_t
pwrite(int fd, const void *buf, size_t n, off_t off)
{
    before_write(fd, off, n);
    return real_pwrite(fd, buf, n, off);
}

ssize_t
write(int fd, const void *buf, size_t n)
{
    before_write(fd, -1, n);
    return real_write(fd, buf, n);
}

ssize_t
writev(int fd, const struct iovec *iov, int cnt)
{
    size_t n = 0;
    for (int i = 0; i < cnt; i++)
        n += iov[i].iov_len;
    before_write(fd, -1, n);
    return real_writev(fd, iov, cnt);
}

int
fsync(int fd)
{
    init();
    int rc = real_fsync(fd);
    if (rc == 0)
        after_sync(fd);
    return rc;
}

int
fdatasync(int fd)
{
    init();
    int rc = real_fdatasync(fd);
    if (rc == 0)
        after_sync(fd);
    return rc;
}
