/* The head of an AgentBatch request read without decoding it (wire_head.h): a walk over the
 * top-level fields that reads three of them and skips the rest by their lengths. The server runs
 * it before anything else, so that a peer without a valid token cannot make it decode megabytes. */
#include "proto/wire_head.h"

#include "common/auth_token.h"
#include "common/error.h"

#include <string.h>

/* AgentBatch field numbers (rankscope.proto) and protobuf wire types. */
enum { F_AGENT_ID = 2, F_BATCH_SEQ = 4, F_AUTH_TOKEN = 8 };
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* Reads a varint at *p (< end). Returns 0 or RS_E_MALFORMED (truncated, over 10 bytes). */
static int
varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;

    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*p == end)
            return RS_E_MALFORMED;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return RS_E_MALFORMED;
}

int
rs_wire_agent_batch_head(const uint8_t *buf, size_t len, struct rs_wire_batch_head *out)
{
    const uint8_t *p = buf, *end = buf + len;
    struct rs_wire_batch_head h = {0};
    uint64_t tag, v;

    if (len > RS_WIRE_MAX_BATCH_BYTES)
        return RS_E_TOO_BIG;
    while (p < end) {
        if (varint(&p, end, &tag) != 0 || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
            return RS_E_MALFORMED;
        uint64_t field = tag >> 3;
        switch (tag & 7) {
        case WT_VARINT:
            if (varint(&p, end, &v) != 0 || field == F_AGENT_ID || field == F_AUTH_TOKEN)
                return RS_E_MALFORMED;
            if (field == F_BATCH_SEQ)
                h.batch_seq = v;
            break;
        case WT_I64:
            if (end - p < 8 || field == F_BATCH_SEQ || field == F_AUTH_TOKEN)
                return RS_E_MALFORMED;
            if (field == F_AGENT_ID) {
                v = 0;
                for (int i = 7; i >= 0; i--)
                    v = v << 8 | p[i]; /* fixed64 is little-endian */
                h.agent_id = v;
            }
            p += 8;
            break;
        case WT_LEN:
            if (varint(&p, end, &v) != 0 || v > (uint64_t)(end - p) || field == F_AGENT_ID ||
                field == F_BATCH_SEQ)
                return RS_E_MALFORMED;
            if (field == F_AUTH_TOKEN) { /* the last one counts, as for the decoder (merge) */
                h.token_state = RS_WIRE_TOKEN_INVALID;
                if (v <= RS_AUTH_TOKEN_MAX) {
                    memcpy(h.token, p, v);
                    h.token[v] = '\0';
                    if (rs_auth_token_valid(h.token))
                        h.token_state = RS_WIRE_TOKEN_VALID;
                }
                if (h.token_state != RS_WIRE_TOKEN_VALID)
                    h.token[0] = '\0';
            }
            p += v;
            break;
        case WT_I32:
            if (end - p < 4 || field == F_AGENT_ID || field == F_BATCH_SEQ || field == F_AUTH_TOKEN)
                return RS_E_MALFORMED;
            p += 4;
            break;
        default: /* groups (3, 4) are not proto3; 6 and 7 do not exist */
            return RS_E_MALFORMED;
        }
    }
    *out = h;
    return 0;
}
