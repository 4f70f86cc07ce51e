/* Unit tests of bearer tokens (common/auth_token.c): the alphabet and length limits, SHA-256 on
 * a NIST vector, constant-time equality, new tokens (format, no two alike), reading a token file
 * (first line, blanks, modes, bad content). */
#include "common/auth_token.h"
#include "common/error.h"
#include "tests/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
validity(void)
{
    char max[RS_AUTH_TOKEN_MAX + 2];

    T_CHECK(rs_auth_token_valid("abcdefghijklmnop")); /* 16 */
    T_CHECK(!rs_auth_token_valid("abcdefghijklmno")); /* 15 */
    T_CHECK(rs_auth_token_valid("A-._~+/=0123456789z"));
    T_CHECK(!rs_auth_token_valid("abcdefghijklmnop q"));
    T_CHECK(!rs_auth_token_valid("abcdefghijklmnop\n"));
    T_CHECK(!rs_auth_token_valid("abcdefghijklmnop\x1b"));
    T_CHECK(!rs_auth_token_valid("abcdefghijklmnop\xc3\xa9"));
    T_CHECK(!rs_auth_token_valid(""));
    memset(max, 'a', sizeof max);
    max[RS_AUTH_TOKEN_MAX] = '\0';
    T_CHECK(rs_auth_token_valid(max));
    max[RS_AUTH_TOKEN_MAX] = 'a';
    max[RS_AUTH_TOKEN_MAX + 1] = '\0';
    T_CHECK(!rs_auth_token_valid(max));
}

static void
hashing(void)
{
    uint8_t h[RS_AUTH_HASH_BYTES], g[RS_AUTH_HASH_BYTES];
    char text[80];

    /* FIPS 180-2 appendix B.2 */
    T_OK(rs_auth_token_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h));
    rs_auth_hash_format(h, text, sizeof text);
    T_CHECK(strcmp(text,
                   "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
    T_EQ(rs_auth_token_hash("short", h), RS_E_MALFORMED);
    T_OK(rs_auth_token_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", g));
    T_CHECK(rs_auth_hash_equal(h, g));
    g[RS_AUTH_HASH_BYTES - 1] ^= 1;
    T_CHECK(!rs_auth_hash_equal(h, g));
}

static void
new_tokens(void)
{
    char a[RS_AUTH_NEW_TOKEN_LEN + 1], b[RS_AUTH_NEW_TOKEN_LEN + 1], small[8];

    T_OK(rs_auth_token_new(a, sizeof a));
    T_OK(rs_auth_token_new(b, sizeof b));
    T_EQ(strlen(a), RS_AUTH_NEW_TOKEN_LEN);
    T_CHECK(strncmp(a, "rst_", 4) == 0 && strspn(a + 4, "0123456789abcdef") == 64);
    T_CHECK(rs_auth_token_valid(a));
    T_CHECK(strcmp(a, b) != 0);
    T_EQ(rs_auth_token_new(small, sizeof small), -22);
}

static int
write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    fclose(f);
    return chmod(path, mode);
}

static void
reading(void)
{
    char dir[] = "/tmp/rs-auth-token-XXXXXX", path[64], tok[RS_AUTH_TOKEN_MAX + 1], err[512];

    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t", dir);
    T_EQ(write_file(path, "  rst_0123456789abcdef0123 \t\r\nsecond line\n", 0600), 0);
    T_OK(rs_auth_token_read_file(path, tok, sizeof tok, err, sizeof err));
    T_CHECK(strcmp(tok, "rst_0123456789abcdef0123") == 0);
    T_EQ(chmod(path, 0640), 0); /* a group that may read (a service's group) is fine */
    T_OK(rs_auth_token_read_file(path, tok, sizeof tok, err, sizeof err));
    T_EQ(chmod(path, 0644), 0);
    T_EQ(rs_auth_token_read_file(path, tok, sizeof tok, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "mode 0644") != NULL);
    T_EQ(chmod(path, 0660), 0);
    T_EQ(rs_auth_token_read_file(path, tok, sizeof tok, err, sizeof err), RS_E_CONFIG);
    T_EQ(write_file(path, "\n", 0600), 0);
    T_EQ(rs_auth_token_read_file(path, tok, sizeof tok, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "does not hold a token") != NULL);
    T_EQ(write_file(path, "two words here-and-more\n", 0600), 0);
    T_EQ(rs_auth_token_read_file(path, tok, sizeof tok, err, sizeof err), RS_E_CONFIG);
    T_EQ(write_file(path, "rst_0123456789abcdef0123\n", 0600), 0);
    T_EQ(rs_auth_token_read_file(path, tok, 8, err, sizeof err), RS_E_CONFIG); /* no room */
    T_EQ(rs_auth_token_read_file(dir, tok, sizeof tok, err, sizeof err), RS_E_CONFIG);
    unlink(path);
    T_EQ(rs_auth_token_read_file(path, tok, sizeof tok, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "cannot open") != NULL);
    rmdir(dir);
}

int
main(void)
{
    T_RUN(validity);
    T_RUN(hashing);
    T_RUN(new_tokens);
    T_RUN(reading);
    return T_DONE("common/auth_token");
}
