/* The head of an agent's request — who sent it, its number and its bearer token — read without
 * decoding the request: the server checks the token before it spends a decode on the batch
 * (docs/security.md "Tokens"). Thread-safe (no shared state). */
#ifndef RS_PROTO_WIRE_HEAD_H
#define RS_PROTO_WIRE_HEAD_H

#include "common/auth_token.h"
#include "proto/wire.h"

#include <stddef.h>
#include <stdint.h>

enum rs_wire_token_state {
    RS_WIRE_TOKEN_NONE = 0, /* the request carries no auth_token field */
    RS_WIRE_TOKEN_VALID,    /* a token of the valid form (rs_auth_token_valid), in token[] */
    RS_WIRE_TOKEN_INVALID   /* a field that is no token (too long, bad characters): token "" */
};

struct rs_wire_batch_head {
    uint64_t agent_id, batch_seq; /* 0 when absent */
    enum rs_wire_token_state token_state;
    char token[RS_AUTH_TOKEN_MAX + 1]; /* "" unless RS_WIRE_TOKEN_VALID */
};

/* Reads agent_id, batch_seq and auth_token (the last one, as the decoder merges repeated
 * fields) from an encoded AgentBatch, skipping every other top-level field by its length: a
 * walk over the top level only, O(fields), no allocation, nothing nested checked. Returns 0, or
 * RS_E_MALFORMED when the top level is not protobuf a decoder would take (a truncated field, a
 * length past the end, a wire type these fields cannot have, a group) and RS_E_TOO_BIG past
 * RS_WIRE_MAX_BATCH_BYTES; *out is written only on success. A request it accepts may still be
 * refused by rs_wire_agent_batch_decode (what is nested, versions, limits). */
int rs_wire_agent_batch_head(const uint8_t *buf, size_t len, struct rs_wire_batch_head *out);

#endif
