/* Bearer tokens: the secret a CLI, an agent or a script presents to rankscope-server (HTTP
 * `Authorization: Bearer`, the agent's batches). The server keeps only their SHA-256
 * (server/auth_file.h); clients read the secret from a file or the environment. Shared by the
 * server (hashing, --new-token), the agent and the CLI (reading). docs/security.md "Tokens". */
#ifndef RS_COMMON_AUTH_TOKEN_H
#define RS_COMMON_AUTH_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#define RS_AUTH_TOKEN_MIN 16     /* characters: shorter secrets are refused everywhere */
#define RS_AUTH_TOKEN_MAX 256    /* characters */
#define RS_AUTH_HASH_BYTES 32    /* SHA-256 */
#define RS_AUTH_NEW_TOKEN_LEN 68 /* "rst_" + 64 hex digits (32 random bytes) */

/* True when `token` is RS_AUTH_TOKEN_MIN..RS_AUTH_TOKEN_MAX characters of RFC 6750's b64token
 * alphabet (letters, digits, "-._~+/="): what may follow "Bearer " and what the agent sends.
 * Inline so that the wire decoder checks tokens without linking the hash library. */
static inline bool
rs_auth_token_valid(const char *token)
{
    size_t n =
        strspn(token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/=");
    return token[n] == '\0' && n >= RS_AUTH_TOKEN_MIN && n <= RS_AUTH_TOKEN_MAX;
}

/* SHA-256 of the token's characters into out. Returns 0 or RS_E_MALFORMED (not a valid token). */
int rs_auth_token_hash(const char *token, uint8_t out[RS_AUTH_HASH_BYTES]);

/* Whether a and b are equal, in time independent of where they differ (constant time). */
bool rs_auth_hash_equal(const uint8_t a[RS_AUTH_HASH_BYTES], const uint8_t b[RS_AUTH_HASH_BYTES]);

/* Writes "sha256:" and the 64 lower-case hex digits of hash into out (72 bytes with the NUL). */
void rs_auth_hash_format(const uint8_t hash[RS_AUTH_HASH_BYTES], char *out, size_t len);

/* A new random token ("rst_" + 64 hex digits from getrandom) into out[len >= 69]. Returns 0,
 * -EINVAL (buffer too small) or the negative errno of getrandom. */
int rs_auth_token_new(char *out, size_t len);

/* Opens the token file at `path` for reading: a regular file whose mode has none of the bits of
 * `forbidden` (0027 for a client's secret; 0022 for the server's file of hashes, which grants
 * roles); `mode_advice` ends the refusal ("... has mode 0644: " + mode_advice). Returns the open
 * fd with *st filled, or RS_E_CONFIG with a message naming the file in err[err_len]. */
int rs_auth_file_open(const char *path, unsigned forbidden, const char *mode_advice,
                      struct stat *st, char *err, size_t err_len);

/* Reads a token from the file at `path`: its first line, without surrounding blanks. Refuses a
 * file others may read or write, or that its group may write (mode & 0027, like ssh's private
 * keys), one that is not a regular file, and content that is not a valid token. Returns 0 with the
 * token in out[len], or RS_E_CONFIG with a message naming the file in err[err_len]. */
int rs_auth_token_read_file(const char *path, char *out, size_t len, char *err, size_t err_len);

#endif
