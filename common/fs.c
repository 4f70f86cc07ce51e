/* File helpers (see fs.h). */
#include "common/fs.h"

#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
    char tmp[PATH_MAX];
    const char *p = data;
    int fd, rc = 0;

    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp)
        return -ENAMETOOLONG;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            goto out;
        }
        p += n;
        len -= (size_t)n;
    }
    if (fsync(fd) != 0)
        rc = -errno;
out:
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

int
rs_fs_write_atomic(const char *path, const void *data, size_t len)
{
    return write_atomic(path, data, len, 0644);
}

int
rs_fs_write_private(const char *path, const void *data, size_t len)
{
    return write_atomic(path, data, len, 0600);
}

int
rs_fs_mkdir_p_made(const char *path, mode_t leaf_mode, char **first_made)
{
    char buf[PATH_MAX];
    size_t len = strlen(path);
    char *made = NULL;
    int rc = 0;

    if (len == 0 || len >= sizeof buf)
        return -ENAMETOOLONG;
    memcpy(buf, path, len + 1);
    for (char *s = buf + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(buf, c == '\0' ? leaf_mode : 0755) == 0) {
            if (!made && !(made = strdup(buf))) {
                rmdir(buf);
                rc = -ENOMEM;
                goto out;
            }
        } else if (errno != EEXIST) {
            rc = -errno;
            goto out;
        }
        *s = c;
        if (c == '\0')
            break;
    }
out:
    if (rc != 0 && made) { /* only directories, all empty and all ours */
        rs_fs_remove_tree(made);
        free(made);
        made = NULL;
    }
    if (rc == 0)
        *first_made = made;
    return rc;
}

static int
mkdir_p(const char *path, mode_t leaf_mode)
{
    char *made = NULL;
    int rc = rs_fs_mkdir_p_made(path, leaf_mode, &made);

    free(made);
    return rc;
}

int
rs_fs_mkdir_p(const char *path)
{
    return mkdir_p(path, 0755);
}

int
rs_fs_mkdir_p_private(const char *path)
{
    return mkdir_p(path, 0700);
}

int
rs_fs_read_all(const char *path, size_t max_len, char **out, size_t *out_len)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int fd, rc = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    for (;;) {
        if (cap - len < 4096 + 1) {
            size_t ncap = cap ? cap * 2 : 8192;
            char *nbuf = realloc(buf, ncap);
            if (!nbuf) {
                rc = -ENOMEM;
                goto out;
            }
            buf = nbuf;
            cap = ncap;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            goto out;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > max_len) {
            rc = RS_E_TOO_BIG;
            goto out;
        }
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    buf = NULL;
out:
    free(buf);
    close(fd);
    return rc;
}

static int
remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    return remove(path) == 0 || errno == ENOENT ? 0 : -errno;
}

int
rs_fs_remove_tree(const char *path)
{
    int rc = nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);

    if (rc == -1)
        return errno == ENOENT ? 0 : -errno;
    return rc;
}
