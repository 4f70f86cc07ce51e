/* Unit tests of the token file (server/auth_file.c): a valid file with comments, blanks and CRLF;
 * lookup by token (a NIST SHA-256 vector, so the hash is SHA-256 and not our own idea of it);
 * every refusal with its line number; roles; the mode check of rs_auth_table_load. */
#include "common/error.h"
#include "server/auth_file.h"
#include "tests/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* FIPS 180-2 appendix B.2: SHA-256 of this 56-character message (a valid token: letters only). */
#define NIST_MSG "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
#define NIST_HASH "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
#define OTHER_HASH "sha256:0000000000000000000000000000000000000000000000000000000000000001"

static int
parse(const char *text, rs_auth_table **t, char *err, size_t len)
{
    return rs_auth_table_parse(text, strlen(text), "tokens", t, err, len);
}

static void
valid_file(void)
{
    static const char text[] = "# principals\n"
                               "\n"
                               "   # indented comment\n"
                               "alice admin " NIST_HASH "\r\n"
                               "\tbob\tread  " OTHER_HASH "   \n"
                               "agent-1.node@x ingest sha256:"
                               "ABCDEF0000000000000000000000000000000000000000000000000000000000";
    rs_auth_table *t = NULL;
    char err[256] = "";

    T_OK(parse(text, &t, err, sizeof err));
    T_EQ(rs_auth_table_count(t), 3);
    const struct rs_auth_principal *p = rs_auth_table_find(t, NIST_MSG);
    T_CHECK(p && strcmp(p->name, "alice") == 0 && p->role == RS_AUTH_ROLE_ADMIN);
    T_CHECK(rs_auth_table_find(t, NIST_MSG "x") == NULL);       /* one more character */
    T_CHECK(rs_auth_table_find(t, "abcdbcdecdefdefg") == NULL); /* a prefix */
    T_CHECK(rs_auth_table_find(t, "short") == NULL);            /* not a token at all */
    T_CHECK(rs_auth_table_find(t, "") == NULL);
    T_CHECK(rs_auth_table_find(NULL, NIST_MSG) == NULL);
    rs_auth_table_free(t);

    /* an empty file: a table of nobody (every request refused) */
    T_OK(parse("# nobody yet\n", &t, err, sizeof err));
    T_EQ(rs_auth_table_count(t), 0);
    T_CHECK(rs_auth_table_find(t, NIST_MSG) == NULL);
    rs_auth_table_free(t);
}

static void
refusals(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"alice admin\n", "tokens:1: expected NAME ROLE sha256:HEX, found 2 fields"},
        {"#\nalice admin " NIST_HASH " extra\n",
         "tokens:2: expected NAME ROLE sha256:HEX, found 4"},
        {"a b c d e f\n", "tokens:1: expected NAME ROLE sha256:HEX, found 5"},
        {"al/ice admin " NIST_HASH "\n", "tokens:1: bad name"},
        {"alice root " NIST_HASH "\n", "tokens:1: unknown role 'root'"},
        {"alice Admin " NIST_HASH "\n", "tokens:1: unknown role 'Admin'"},
        {"alice admin sha256:248d\n", "tokens:1: the third field is not sha256:"},
        {"alice admin sha1:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1\n",
         "tokens:1: the third field"},
        {"alice admin sha256:g48d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1\n",
         "tokens:1: the third field"},
        {"alice admin " NIST_HASH "\nalice read " OTHER_HASH "\n",
         "tokens:2: name given on an earlier line too"},
        {"alice admin " NIST_HASH "\nbob read " NIST_HASH "\n",
         "tokens:2: token hash given on an earlier line too"},
    };
    rs_auth_table *t = NULL;
    char err[256];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = '\0';
        T_EQ(parse(cases[i].text, &t, err, sizeof err), RS_E_CONFIG);
        if (!strstr(err, cases[i].want))
            fprintf(stderr, "  case %zu: got '%s', want '%s'\n", i, err, cases[i].want);
        T_CHECK(strstr(err, cases[i].want) != NULL);
    }
    /* a NUL byte */
    static const char nul[] = "alice admin \0 x\n";
    T_EQ(rs_auth_table_parse(nul, sizeof nul - 1, "tokens", &t, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "NUL") != NULL);
    /* a line over the limit */
    char *line = malloc(RS_AUTH_FILE_MAX_LINE + 10);
    T_CHECK(line != NULL);
    if (!line)
        return;
    memset(line, '#', RS_AUTH_FILE_MAX_LINE + 9);
    line[RS_AUTH_FILE_MAX_LINE + 9] = '\0';
    T_EQ(parse(line, &t, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "tokens:1: line over") != NULL);
    free(line);
    /* a file over the limit */
    char *big = calloc(RS_AUTH_FILE_MAX_BYTES + 2, 1);
    T_CHECK(big != NULL);
    if (!big)
        return;
    memset(big, '\n', RS_AUTH_FILE_MAX_BYTES + 1);
    T_EQ(parse(big, &t, err, sizeof err), RS_E_TOO_BIG);
    free(big);
}

static void
roles(void)
{
    enum rs_auth_role r;

    T_CHECK(rs_auth_role_allows(RS_AUTH_ROLE_ADMIN, RS_AUTH_ROLE_READ));
    T_CHECK(rs_auth_role_allows(RS_AUTH_ROLE_ADMIN, RS_AUTH_ROLE_INGEST));
    T_CHECK(rs_auth_role_allows(RS_AUTH_ROLE_ADMIN, RS_AUTH_ROLE_ADMIN));
    T_CHECK(rs_auth_role_allows(RS_AUTH_ROLE_READ, RS_AUTH_ROLE_READ));
    T_CHECK(!rs_auth_role_allows(RS_AUTH_ROLE_READ, RS_AUTH_ROLE_INGEST));
    T_CHECK(!rs_auth_role_allows(RS_AUTH_ROLE_READ, RS_AUTH_ROLE_ADMIN));
    T_CHECK(rs_auth_role_allows(RS_AUTH_ROLE_INGEST, RS_AUTH_ROLE_INGEST));
    T_CHECK(!rs_auth_role_allows(RS_AUTH_ROLE_INGEST, RS_AUTH_ROLE_READ));
    T_CHECK(!rs_auth_role_allows(RS_AUTH_ROLE_INGEST, RS_AUTH_ROLE_ADMIN));
    T_CHECK(!rs_auth_role_allows(RS_AUTH_ROLE_NONE, RS_AUTH_ROLE_READ));
    T_EQ(rs_auth_role_parse("ingest", &r), 0);
    T_EQ(r, RS_AUTH_ROLE_INGEST);
    T_EQ(rs_auth_role_parse("none", &r), RS_E_CONFIG);
    T_CHECK(strcmp(rs_auth_role_name(RS_AUTH_ROLE_READ), "read") == 0);
    T_CHECK(rs_auth_name_valid("a") && !rs_auth_name_valid("") && !rs_auth_name_valid("a b"));
}

static void
load_modes(void)
{
    char dir[] = "/tmp/rs-auth-file-XXXXXX", path[64], err[256];
    rs_auth_table *t = NULL;
    FILE *f;

    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/tokens", dir);
    T_CHECK((f = fopen(path, "w")) != NULL);
    if (!f)
        return;
    fputs("alice admin " NIST_HASH "\n", f);
    fclose(f);
    T_EQ(chmod(path, 0644), 0); /* hashes may be read by others: they are not the tokens */
    T_OK(rs_auth_table_load(path, &t, err, sizeof err));
    T_EQ(rs_auth_table_count(t), 1);
    rs_auth_table_free(t);
    T_EQ(chmod(path, 0620), 0); /* group-writable: anyone in it could make themselves admin */
    T_EQ(rs_auth_table_load(path, &t, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "mode 0620") != NULL);
    T_EQ(chmod(path, 0602), 0);
    T_EQ(rs_auth_table_load(path, &t, err, sizeof err), RS_E_CONFIG);
    T_EQ(rs_auth_table_load(dir, &t, err, sizeof err), RS_E_CONFIG); /* a directory */
    T_CHECK(strstr(err, "not a regular file") != NULL);
    unlink(path);
    T_EQ(rs_auth_table_load(path, &t, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "cannot open") != NULL);
    rmdir(dir);
}

int
main(void)
{
    T_RUN(valid_file);
    T_RUN(refusals);
    T_RUN(roles);
    T_RUN(load_modes);
    return T_DONE("server/auth_file");
}
