/* Bearer tokens: validation, SHA-256 (mbedTLS), constant-time comparison, generation and reading
 * from a file (see auth_token.h). */
#include "common/auth_token.h"

#include "common/error.h"

#include <mbedtls/constant_time.h>
#include <mbedtls/sha256.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int
rs_auth_token_hash(const char *token, uint8_t out[RS_AUTH_HASH_BYTES])
{
    if (!rs_auth_token_valid(token))
        return RS_E_MALFORMED;
    if (mbedtls_sha256_ret((const unsigned char *)token, strlen(token), out, 0) != 0)
        return RS_E_MALFORMED; /* cannot happen with the software implementation */
    return 0;
}

bool
rs_auth_hash_equal(const uint8_t a[RS_AUTH_HASH_BYTES], const uint8_t b[RS_AUTH_HASH_BYTES])
{
    return mbedtls_ct_memcmp(a, b, RS_AUTH_HASH_BYTES) == 0;
}

void
rs_auth_hash_format(const uint8_t hash[RS_AUTH_HASH_BYTES], char *out, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char text[7 + 2 * RS_AUTH_HASH_BYTES + 1] = "sha256:";

    for (size_t i = 0; i < RS_AUTH_HASH_BYTES; i++) {
        text[7 + 2 * i] = hex[hash[i] >> 4];
        text[8 + 2 * i] = hex[hash[i] & 15];
    }
    text[sizeof text - 1] = '\0';
    snprintf(out, len, "%s", text);
}

int
rs_auth_token_new(char *out, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    uint8_t raw[32];
    size_t got = 0;

    if (len < RS_AUTH_NEW_TOKEN_LEN + 1)
        return -EINVAL;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        got += (size_t)n;
    }
    memcpy(out, "rst_", 4);
    for (size_t i = 0; i < sizeof raw; i++) {
        out[4 + 2 * i] = hex[raw[i] >> 4];
        out[5 + 2 * i] = hex[raw[i] & 15];
    }
    out[RS_AUTH_NEW_TOKEN_LEN] = '\0';
    memset(raw, 0, sizeof raw);
    return 0;
}

int
rs_auth_file_open(const char *path, unsigned forbidden, const char *mode_advice, struct stat *st,
                  char *err, size_t err_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

    if (fd < 0) {
        snprintf(err, err_len, "cannot open token file %s: %s", path, strerror(errno));
        return RS_E_CONFIG;
    }
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        snprintf(err, err_len, "token file %s is not a regular file", path);
    } else if (st->st_mode & forbidden) {
        snprintf(err, err_len, "token file %s has mode %04o: %s", path,
                 (unsigned)(st->st_mode & 07777), mode_advice);
    } else
        return fd;
    close(fd);
    return RS_E_CONFIG;
}

int
rs_auth_token_read_file(const char *path, char *out, size_t len, char *err, size_t err_len)
{
    char buf[RS_AUTH_TOKEN_MAX + 64];
    struct stat st;
    ssize_t n;
    int rc = RS_E_CONFIG, fd = rs_auth_file_open(path, 0027,
                                                 "others may read it or its group may write it "
                                                 "(chmod 600 or 640 it)",
                                                 &st, err, err_len);

    if (fd < 0)
        return fd;
    n = read(fd, buf, sizeof buf - 1);
    if (n < 0) {
        snprintf(err, err_len, "cannot read token file %s: %s", path, strerror(errno));
        goto out;
    }
    buf[n] = '\0';
    /* the first line, blanks around it removed */
    char *start = buf + strspn(buf, " \t"), *end = start + strcspn(start, "\r\n");
    while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    if (!rs_auth_token_valid(start) || strlen(start) >= len) {
        snprintf(err, err_len,
                 "token file %s does not hold a token on its first line (%d to %d characters of "
                 "letters, digits and -._~+/=; make one with rankscope-server --new-token NAME "
                 "--role ROLE)",
                 path, RS_AUTH_TOKEN_MIN, RS_AUTH_TOKEN_MAX);
        goto out;
    }
    memcpy(out, start, strlen(start) + 1);
    rc = 0;
out:
    memset(buf, 0, sizeof buf);
    close(fd);
    return rc;
}
