/* libFuzzer target for the trace importer: the streaming JSON reader and the Kineto importer on
 * arbitrary bytes, read in chunks whose size the first byte picks (so that tokens straddle reads).
 * Every batch handed to the sink must be one the wire encoder accepts. Build with
 * `make fuzz-trace_import`; `make test` replays tests/fuzz/corpus/trace_import/. */
#include "import/kineto.h"

#include "common/error.h"

#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
    const uint8_t *p;
    size_t len, pos, chunk;
};

static ssize_t
input_read(void *arg, void *buf, size_t cap)
{
    struct input *in = arg;
    size_t n = in->len - in->pos;

    if (n > cap)
        n = cap;
    if (n > in->chunk)
        n = in->chunk;
    memcpy(buf, in->p + in->pos, n);
    in->pos += n;
    return (ssize_t)n;
}

static int
check_batch(void *arg, const struct rs_rank_batch *b)
{
    struct rs_agent_batch ab = {.agent_id = 1,
                                .boot_id = 1,
                                .batch_seq = 1,
                                .hello = {.agent_id = 1,
                                          .boot_id = 1,
                                          .host = "",
                                          .agent_version = "fuzz",
                                          .clock = b->clock},
                                .ranks = b,
                                .n_ranks = 1,
                                .agent_dropped = 0};
    uint8_t *out = NULL;
    size_t len;
    int rc = rs_wire_agent_batch_encode(&ab, &out, &len);

    /* what the importer produces must be what the wire (and so the server) accepts */
    if (rc == RS_E_MALFORMED)
        __builtin_trap();
    free(out);
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rs_kineto_options o = {.job = "fuzz", .rank = -1, .host = ""};
    struct rs_kineto_header h;
    struct rs_kineto_stats st;
    struct input in = {data, size, 0, size ? (size_t)data[0] % 64 + 1 : 1};
    rs_json_reader *r;
    char err[256];

    if (rs_json_reader_new(input_read, &in, &r) != 0)
        return 0;
    int rc = rs_kineto_import(r, &o, NULL, check_batch, NULL, &st, err, sizeof err);
    rs_json_reader_free(r);
    if (rc == RS_KINETO_NEED_HEADER) {
        in.pos = 0;
        if (rs_json_reader_new(input_read, &in, &r) != 0)
            return 0;
        rc = rs_kineto_header_scan(r, &h, err, sizeof err);
        rs_json_reader_free(r);
        if (rc == 0) {
            in.pos = 0;
            o.rank = h.have_rank ? -1 : 0;
            if (rs_json_reader_new(input_read, &in, &r) != 0)
                return 0;
            rs_kineto_import(r, &o, &h, check_batch, NULL, &st, err, sizeof err);
            rs_json_reader_free(r);
        }
    }
    return 0;
}
