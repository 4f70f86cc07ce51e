/* Unit tests of the bearer token on the agent channel (proto/wire.c): the field appended to an
 * encoded AgentBatch is read back as auth_token by the decoder, a batch without one decodes with
 * "", a token the alphabet refuses is refused by the encoder and the decoder, the last of two
 * appended tokens wins (protobuf's merge), and the new reply status round-trips while one past it
 * is refused. The head reader (proto/wire_head.h), which the server runs before any decode, reads
 * the same token, agent and number as the decoder, and refuses what the decoder's top level would.
 */
#include "common/error.h"
#include "proto/wire.h"
#include "proto/wire_head.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdlib.h>
#include <string.h>

#define TOKEN "rst_00112233445566778899aabbccddeeff"

static uint8_t *
encoded(size_t *len)
{
    static const char *const names[] = {"k"};
    static const struct rs_kernel_record k = {1000, 2000, 0, 7, 0, 0};
    static struct rs_rank_batch rb = {.identity = T_IDENTITY("job", 0, 1, "GPU-1"),
                                      .strings = names,
                                      .n_strings = 1,
                                      .kernels = &k,
                                      .n_kernels = 1};
    struct rs_agent_batch b = t_agent_batch(9, 4, &rb, 1);
    uint8_t *buf = NULL;

    b.auth_token = "rst_never_encoded_0000"; /* decode-only: the encoder ignores it */
    T_EQ(rs_wire_agent_batch_encode(&b, &buf, len), 0);
    return buf;
}

/* buf[len] + the token field of `token` into a new buffer. */
static uint8_t *
with_token(const uint8_t *buf, size_t len, const char *token, size_t *out_len)
{
    uint8_t field[300];
    size_t n = 0;
    uint8_t *out;

    if (rs_wire_auth_token_field(token, field, sizeof field, &n) != 0 || !(out = malloc(len + n)))
        return NULL;
    memcpy(out, buf, len);
    memcpy(out + len, field, n);
    *out_len = len + n;
    return out;
}

static void
token_round_trip(void)
{
    size_t len = 0, n = 0, n2 = 0;
    uint8_t *buf = encoded(&len), *tok, *two;
    rs_wire_agent_batch *d = NULL;

    T_OK(rs_wire_agent_batch_decode(buf, len, &d));
    T_CHECK(strcmp(rs_wire_agent_batch_get(d)->auth_token, "") == 0); /* never spooled */
    rs_wire_agent_batch_free(d);
    T_CHECK((tok = with_token(buf, len, TOKEN, &n)) != NULL);
    T_OK(rs_wire_agent_batch_decode(tok, n, &d));
    T_CHECK(strcmp(rs_wire_agent_batch_get(d)->auth_token, TOKEN) == 0);
    T_EQ(rs_wire_agent_batch_get(d)->batch_seq, 4); /* the rest is untouched */
    T_EQ(rs_wire_agent_batch_get(d)->n_ranks, 1);
    rs_wire_agent_batch_free(d);
    T_CHECK((two = with_token(tok, n, "rst_second_token_9999", &n2)) != NULL);
    T_OK(rs_wire_agent_batch_decode(two, n2, &d));
    T_CHECK(strcmp(rs_wire_agent_batch_get(d)->auth_token, "rst_second_token_9999") == 0);
    rs_wire_agent_batch_free(d);
    free(two);
    free(tok);
    free(buf);
}

static void
bad_tokens(void)
{
    uint8_t field[300], small[8];
    size_t n = 0, len = 0;
    uint8_t *buf = encoded(&len), *bad;

    T_EQ(rs_wire_auth_token_field("short", field, sizeof field, &n), RS_E_MALFORMED);
    T_EQ(rs_wire_auth_token_field("has a space in it, so no", field, sizeof field, &n),
         RS_E_MALFORMED);
    T_EQ(rs_wire_auth_token_field(TOKEN, small, sizeof small, &n), RS_E_TOO_BIG);
    /* a hostile sender's token with a newline (it would reach a log): refused by the decoder */
    T_OK(rs_wire_auth_token_field("rst_aaaaaaaaaaaaaaaaaaaaaaaa", field, sizeof field, &n));
    T_CHECK((bad = malloc(len + n)) != NULL);
    if (!bad) {
        free(buf);
        return;
    }
    memcpy(bad, buf, len);
    memcpy(bad + len, field, n);
    bad[len + n - 5] = '\n';
    rs_wire_agent_batch *d = NULL;
    T_EQ(rs_wire_agent_batch_decode(bad, len + n, &d), RS_E_MALFORMED);
    free(bad);
    free(buf);
}

static void
unauthorized_reply(void)
{
    struct rs_server_reply r = {7, RS_REPLY_UNAUTHORIZED, "unauthorized: no token", 10000, {0}};
    struct rs_server_reply back;
    uint8_t buf[RS_WIRE_MAX_REPLY_BYTES];
    char err[128];
    size_t len = 0;

    T_OK(rs_wire_reply_encode(&r, buf, sizeof buf, &len));
    T_OK(rs_wire_reply_decode(buf, len, &back, err, sizeof err));
    T_EQ(back.status, RS_REPLY_UNAUTHORIZED);
    T_EQ(back.retry_after_ms, 10000);
    T_CHECK(strcmp(back.error, "unauthorized: no token") == 0);
    r.status = RS_REPLY_UNAUTHORIZED + 1;
    T_OK(rs_wire_reply_encode(&r, buf, sizeof buf, &len));
    T_EQ(rs_wire_reply_decode(buf, len, &back, err, sizeof err), RS_E_MALFORMED);
}

static void
head_reads_what_the_decoder_reads(void)
{
    size_t len = 0, n = 0, n2 = 0;
    uint8_t *buf = encoded(&len), *tok = with_token(buf, len, TOKEN, &n);
    uint8_t *two = tok ? with_token(tok, n, "rst_second_token_9999", &n2) : NULL;
    struct rs_wire_batch_head h;

    T_CHECK(tok && two);
    T_OK(rs_wire_agent_batch_head(buf, len, &h));
    T_EQ(h.agent_id, 9);
    T_EQ(h.batch_seq, 4);
    T_EQ(h.token_state, RS_WIRE_TOKEN_NONE);
    T_OK(rs_wire_agent_batch_head(tok, n, &h));
    T_EQ(h.token_state, RS_WIRE_TOKEN_VALID);
    T_CHECK(strcmp(h.token, TOKEN) == 0);
    T_OK(rs_wire_agent_batch_head(two, n2, &h)); /* the last one, as protobuf merges */
    T_CHECK(strcmp(h.token, "rst_second_token_9999") == 0);
    /* cut inside the token: its length runs past the end */
    T_EQ(rs_wire_agent_batch_head(tok, n - 1, &h), RS_E_MALFORMED);
    /* a token with a newline: read as no token, and refused */
    tok[n - 5] = '\n';
    T_OK(rs_wire_agent_batch_head(tok, n, &h));
    T_EQ(h.token_state, RS_WIRE_TOKEN_INVALID);
    T_CHECK(h.token[0] == '\0');
    free(two);
    free(tok);
    free(buf);
}

static void
head_refuses_what_is_not_protobuf(void)
{
    /* well-formed at the top, garbage inside a rank (field 6): the head is read, the decode
     * refuses it later */
    static const uint8_t nested[] = {0x20, 0x05, 0x32, 0x02, 0xff, 0xff};
    static const uint8_t group[] = {0x0b, 0x0c};                       /* field 1 as a group */
    static const uint8_t agent_varint[] = {0x10, 0x01};                /* agent_id is fixed64 */
    static const uint8_t seq_fixed[] = {0x21, 1, 2, 3, 4, 5, 6, 7, 8}; /* batch_seq is a varint */
    static const uint8_t long_varint[] = {0x20, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t field0[] = {0x00, 0x01};
    struct rs_wire_batch_head h = {.batch_seq = 77};
    rs_wire_agent_batch *d = NULL;

    T_OK(rs_wire_agent_batch_head(nested, sizeof nested, &h));
    T_EQ(h.batch_seq, 5);
    T_CHECK(rs_wire_agent_batch_decode(nested, sizeof nested, &d) != 0);
    h.batch_seq = 77;
    T_EQ(rs_wire_agent_batch_head(group, sizeof group, &h), RS_E_MALFORMED);
    T_EQ(rs_wire_agent_batch_head(agent_varint, sizeof agent_varint, &h), RS_E_MALFORMED);
    T_EQ(rs_wire_agent_batch_head(seq_fixed, sizeof seq_fixed, &h), RS_E_MALFORMED);
    T_EQ(rs_wire_agent_batch_head(long_varint, sizeof long_varint, &h), RS_E_MALFORMED);
    T_EQ(rs_wire_agent_batch_head(field0, sizeof field0, &h), RS_E_MALFORMED);
    T_EQ(h.batch_seq, 77); /* written only on success */
    T_EQ(rs_wire_agent_batch_head(nested, RS_WIRE_MAX_BATCH_BYTES + 1, &h), RS_E_TOO_BIG);
}

int
main(void)
{
    T_RUN(token_round_trip);
    T_RUN(bad_tokens);
    T_RUN(unauthorized_reply);
    T_RUN(head_reads_what_the_decoder_reads);
    T_RUN(head_refuses_what_is_not_protobuf);
    return T_DONE("proto/wire_auth");
}
