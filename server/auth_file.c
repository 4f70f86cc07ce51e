/* Token file parsing and lookup (see auth_file.h). */
#include "server/auth_file.h"

#include "common/error.h"
#include "common/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rs_auth_table {
    size_t n;
    struct rs_auth_principal p[];
};

static const char *const role_names[] = {"none", "read", "ingest", "admin"};

const char *
rs_auth_role_name(enum rs_auth_role role)
{
    return (unsigned)role < 4 ? role_names[role] : "none";
}

int
rs_auth_role_parse(const char *name, enum rs_auth_role *out)
{
    for (unsigned i = RS_AUTH_ROLE_READ; i <= RS_AUTH_ROLE_ADMIN; i++)
        if (strcmp(name, role_names[i]) == 0) {
            *out = (enum rs_auth_role)i;
            return 0;
        }
    return RS_E_CONFIG;
}

bool
rs_auth_role_allows(enum rs_auth_role have, enum rs_auth_role need)
{
    return have != RS_AUTH_ROLE_NONE && (have == RS_AUTH_ROLE_ADMIN || have == need);
}

bool
rs_auth_name_valid(const char *name)
{
    size_t n = strlen(name);

    return n >= 1 && n <= RS_AUTH_NAME_MAX &&
           strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-") == n;
}

/* "sha256:" + 64 hex digits into out. */
static bool
parse_hash(const char *text, uint8_t out[RS_AUTH_HASH_BYTES])
{
    if (strncmp(text, "sha256:", 7) != 0 || strlen(text) != 7 + 2 * RS_AUTH_HASH_BYTES)
        return false;
    for (size_t i = 0; i < RS_AUTH_HASH_BYTES; i++) {
        int hi = rs_hex_digit(text[7 + 2 * i]), lo = rs_hex_digit(text[8 + 2 * i]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

/* One non-comment line (NUL-terminated, modified) into *p; a message in err on failure. */
static bool
parse_line(char *line, struct rs_auth_principal *p, char *err, size_t err_len)
{
    char *save = NULL, *field[4];
    int n = 0;

    for (char *f = strtok_r(line, " \t", &save); f; f = strtok_r(NULL, " \t", &save))
        if (n < 4)
            field[n++] = f;
        else
            n = 5;
    if (n != 3) {
        snprintf(err, err_len, "expected NAME ROLE sha256:HEX, found %d fields", n > 4 ? 5 : n);
        return false;
    }
    if (!rs_auth_name_valid(field[0])) {
        snprintf(err, err_len, "bad name (1 to %d of letters, digits, ._@-)", RS_AUTH_NAME_MAX);
        return false;
    }
    if (rs_auth_role_parse(field[1], &p->role) != 0) {
        snprintf(err, err_len, "unknown role '%.16s' (read, ingest or admin)", field[1]);
        return false;
    }
    if (!parse_hash(field[2], p->hash)) {
        snprintf(err, err_len,
                 "the third field is not sha256: and 64 hex digits (rankscope-server --new-token "
                 "prints a line to add)");
        return false;
    }
    snprintf(p->name, sizeof p->name, "%s", field[0]);
    return true;
}

/* Whether principal `p` repeats a name or hash of the first n. */
static const char *
repeated(const struct rs_auth_principal *all, size_t n, const struct rs_auth_principal *p)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i].name, p->name) == 0)
            return "name";
        if (memcmp(all[i].hash, p->hash, RS_AUTH_HASH_BYTES) == 0)
            return "token hash";
    }
    return NULL;
}

int
rs_auth_table_parse(const char *text, size_t len, const char *origin, rs_auth_table **out,
                    char *err, size_t err_len)
{
    char line[RS_AUTH_FILE_MAX_LINE + 1], why[160];
    size_t cap = 16, lineno = 0;
    rs_auth_table *t;
    int rc = RS_E_CONFIG;

    if (len > RS_AUTH_FILE_MAX_BYTES) {
        snprintf(err, err_len, "%s: over %u bytes", origin, RS_AUTH_FILE_MAX_BYTES);
        return RS_E_TOO_BIG;
    }
    if (memchr(text, '\0', len)) {
        snprintf(err, err_len, "%s: holds a NUL byte (not a text file)", origin);
        return RS_E_CONFIG;
    }
    if (!(t = malloc(sizeof *t + cap * sizeof t->p[0])))
        return -ENOMEM;
    t->n = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        lineno++;
        if (n > RS_AUTH_FILE_MAX_LINE) {
            snprintf(err, err_len, "%s:%zu: line over %u bytes", origin, lineno,
                     RS_AUTH_FILE_MAX_LINE);
            goto fail;
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos += n + 1;
        if (n && line[n - 1] == '\r')
            line[n - 1] = '\0';
        char *start = line + strspn(line, " \t");
        if (*start == '\0' || *start == '#')
            continue;
        struct rs_auth_principal p;
        const char *again;
        if (!parse_line(start, &p, why, sizeof why)) {
            snprintf(err, err_len, "%s:%zu: %s", origin, lineno, why);
            goto fail;
        }
        if ((again = repeated(t->p, t->n, &p)) != NULL) {
            snprintf(err, err_len, "%s:%zu: %s given on an earlier line too", origin, lineno,
                     again);
            goto fail;
        }
        if (t->n == RS_AUTH_MAX_PRINCIPALS) {
            snprintf(err, err_len, "%s:%zu: more than %u principals", origin, lineno,
                     RS_AUTH_MAX_PRINCIPALS);
            goto fail;
        }
        if (t->n == cap) {
            rs_auth_table *bigger = realloc(t, sizeof *t + 2 * cap * sizeof t->p[0]);
            if (!bigger) {
                rc = -ENOMEM;
                goto fail;
            }
            t = bigger;
            cap *= 2;
        }
        t->p[t->n++] = p;
    }
    *out = t;
    return 0;
fail:
    free(t);
    return rc;
}

int
rs_auth_table_load(const char *path, rs_auth_table **out, char *err, size_t err_len)
{
    struct stat st;
    char *text = NULL;
    size_t got = 0;
    int rc = RS_E_CONFIG, fd = rs_auth_file_open(path, 0022,
                                                 "its group or others may write it, and so grant "
                                                 "themselves admin (chmod go-w it)",
                                                 &st, err, err_len);

    if (fd < 0)
        return fd;
    if ((size_t)st.st_size > RS_AUTH_FILE_MAX_BYTES) {
        snprintf(err, err_len, "token file %s: over %u bytes", path, RS_AUTH_FILE_MAX_BYTES);
        rc = RS_E_TOO_BIG;
        goto out;
    }
    if (!(text = malloc((size_t)st.st_size + 1))) {
        rc = -ENOMEM;
        goto out;
    }
    for (ssize_t n; got < (size_t)st.st_size; got += (size_t)n)
        if ((n = read(fd, text + got, (size_t)st.st_size - got)) <= 0) {
            if (n < 0 && errno == EINTR) {
                n = 0;
                continue;
            }
            if (n == 0)
                break; /* shrank meanwhile: parse what is there */
            snprintf(err, err_len, "cannot read token file %s: %s", path, strerror(errno));
            goto out;
        }
    rc = rs_auth_table_parse(text, got, path, out, err, err_len);
out:
    free(text);
    close(fd);
    return rc;
}

const struct rs_auth_principal *
rs_auth_table_find(const rs_auth_table *t, const char *token)
{
    uint8_t hash[RS_AUTH_HASH_BYTES];
    const struct rs_auth_principal *found = NULL;

    if (!t || rs_auth_token_hash(token, hash) != 0)
        return NULL;
    /* every entry, so that the time says nothing of which entry (or whether one) matched */
    for (size_t i = 0; i < t->n; i++) {
        bool eq = rs_auth_hash_equal(t->p[i].hash, hash);
        found = eq ? &t->p[i] : found;
    }
    return found;
}

size_t
rs_auth_table_count(const rs_auth_table *t)
{
    return t ? t->n : 0;
}

void
rs_auth_table_free(rs_auth_table *t)
{
    free(t);
}
