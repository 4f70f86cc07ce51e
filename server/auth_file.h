/* The server's token file: one principal per line, "NAME ROLE sha256:HEX" — a name for audit
 * lines, a role, and the SHA-256 of the principal's token (never the token itself). '#' starts a
 * comment line; blank lines are skipped. Parsed whole or refused with file:line, so a bad new
 * file never replaces a good one (SIGHUP, server/auth.c). Fuzzed by tests/fuzz/auth_file_fuzz.c.
 * Tables are immutable once built; not thread-safe to free while in use. */
#ifndef RS_SERVER_AUTH_FILE_H
#define RS_SERVER_AUTH_FILE_H

#include "common/auth_token.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RS_AUTH_NAME_MAX 64 /* characters of a principal's name: [A-Za-z0-9._@-] */
#define RS_AUTH_FILE_MAX_BYTES (1u << 20)
#define RS_AUTH_FILE_MAX_LINE 1024u
#define RS_AUTH_MAX_PRINCIPALS 10000u

/* What a principal may do. read: queries and /metrics; ingest: agent batches and POST
 * /v1/import; admin: everything, DELETE included. */
enum rs_auth_role {
    RS_AUTH_ROLE_NONE = 0,
    RS_AUTH_ROLE_READ,
    RS_AUTH_ROLE_INGEST,
    RS_AUTH_ROLE_ADMIN
};

struct rs_auth_principal {
    char name[RS_AUTH_NAME_MAX + 1];
    enum rs_auth_role role;
    uint8_t hash[RS_AUTH_HASH_BYTES];
};

typedef struct rs_auth_table rs_auth_table;

/* "read", "ingest", "admin" ("none" for RS_AUTH_ROLE_NONE). */
const char *rs_auth_role_name(enum rs_auth_role role);

/* Parses a role name. Returns 0 or RS_E_CONFIG. */
int rs_auth_role_parse(const char *name, enum rs_auth_role *out);

/* Whether a principal of role `have` may do what needs `need`: admin may do everything, read and
 * ingest only their own. */
bool rs_auth_role_allows(enum rs_auth_role have, enum rs_auth_role need);

/* True for a valid principal name (1..RS_AUTH_NAME_MAX of letters, digits, "._@-"). */
bool rs_auth_name_valid(const char *name);

/* Parses len bytes of token-file text. Refuses (RS_E_CONFIG, message "ORIGIN:LINE: what" in err)
 * a line that is not three fields, a bad name, an unknown role, a hash that is not "sha256:" and
 * 64 hex digits, a name or hash given twice, a NUL byte, a line over RS_AUTH_FILE_MAX_LINE, more
 * than RS_AUTH_MAX_PRINCIPALS principals; RS_E_TOO_BIG over RS_AUTH_FILE_MAX_BYTES. An empty file
 * is a valid table of no principals (every request is refused). *out is written only on
 * success; free with rs_auth_table_free. */
int rs_auth_table_parse(const char *text, size_t len, const char *origin, rs_auth_table **out,
                        char *err, size_t err_len);

/* Reads and parses the file at `path`. Also refuses a file that is not a regular file or that its
 * group or others may write (mode & 0022: whoever may write it may grant themselves admin), with
 * the reason in err. */
int rs_auth_table_load(const char *path, rs_auth_table **out, char *err, size_t err_len);

/* The principal whose hash is the SHA-256 of `token`, or NULL (no such principal, or not a valid
 * token). Every entry is compared, in constant time each. The result lives as long as the table. */
const struct rs_auth_principal *rs_auth_table_find(const rs_auth_table *t, const char *token);

size_t rs_auth_table_count(const rs_auth_table *t);

/* Frees the table; NULL is fine. */
void rs_auth_table_free(rs_auth_table *t);

#endif
