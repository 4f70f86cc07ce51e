/* Test tool: sends one request to a rankscope-server over NNG req and prints the reply as
 * "status=N seq=N error=...". The request is either raw bytes from a file (--raw FILE: garbage,
 * truncated or hostile input) or a small valid AgentBatch (--valid JOB SEQ). */
#include "proto/wire.h"
#include "tests/t_batch.h"

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
send_bytes(const char *url, const void *data, size_t len)
{
    nng_socket s;
    char *reply = NULL, err[512];
    size_t rlen = 0;
    struct rs_server_reply r;
    int rv;

    if ((rv = nng_req0_open(&s)) || (rv = nng_dial(s, url, NULL, 0)) ||
        (rv = nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 5000)) ||
        (rv = nng_send(s, (void *)data, len, 0)) ||
        (rv = nng_recv(s, &reply, &rlen, NNG_FLAG_ALLOC))) {
        fprintf(stderr, "rs-nng-send: %s\n", nng_strerror(rv));
        return 1;
    }
    rv = rs_wire_reply_decode((uint8_t *)reply, rlen, &r, err, sizeof err);
    nng_free(reply, rlen);
    nng_close(s);
    if (rv != 0) {
        fprintf(stderr, "rs-nng-send: undecodable reply\n");
        return 1;
    }
    printf("status=%u seq=%llu error=%s\n", r.status, (unsigned long long)r.batch_seq, r.error);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[2], "--raw") == 0) {
        static char buf[1 << 20];
        FILE *f = fopen(argv[3], "rb");
        size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (f)
            fclose(f);
        return send_bytes(argv[1], buf, n);
    }
    if (argc == 5 && strcmp(argv[2], "--valid") == 0) {
        static const char *const names[] = {"k"};
        struct rs_kernel_record k = {1000, 2000, 0, 7, 0, 0};
        struct rs_rank_batch rb = {.identity = T_IDENTITY(argv[3], 0, 1, "GPU-x"),
                                   T_RECORDS(strings, names, 1),
                                   T_RECORDS(kernels, &k, 1)};
        struct rs_agent_batch b = {
            0x7e57, 1, strtoull(argv[4], NULL, 10), {0x7e57, 1, "h", "test", {0, 0}}, &rb, 1, 0, NULL, 0};
        uint8_t *data;
        size_t len;
        if (rs_wire_agent_batch_encode(&b, &data, &len) != 0)
            return 1;
        int rc = send_bytes(argv[1], data, len);
        free(data);
        return rc;
    }
    fprintf(stderr, "usage: rs-nng-send URL --raw FILE | URL --valid JOB SEQ\n");
    return 2;
}
