/* libFuzzer target for the server's token file (server/auth_file.c): arbitrary bytes as a token
 * file. A table that parses must hold only valid names and roles, and looking a token up in it
 * must find a principal of that table or none; the bytes as a bearer token must be refused or
 * hashed. */
#include "common/auth_token.h"
#include "server/auth_file.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_auth_table *t = NULL;
    char err[256], *text = malloc(size + 1);
    uint8_t hash[RS_AUTH_HASH_BYTES];

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (rs_auth_table_parse(text, size, "fuzz", &t, err, sizeof err) == 0) {
        const struct rs_auth_principal *p = rs_auth_table_find(t, "rst_0123456789abcdef0123");
        if (rs_auth_table_count(t) > RS_AUTH_MAX_PRINCIPALS ||
            (p && (!rs_auth_name_valid(p->name) || p->role == RS_AUTH_ROLE_NONE)))
            abort();
        rs_auth_table_free(t);
    } else if (!err[0]) {
        abort(); /* every refusal says why */
    }
    if (rs_auth_token_valid(text) != (rs_auth_token_hash(text, hash) == 0))
        abort();
    free(text);
    return 0;
}
