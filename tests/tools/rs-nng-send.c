/* Test tool: sends one request to a rankscope-server over NNG req and prints the reply as
 * "status=N seq=N error=...". The request is either raw bytes from a file (--raw FILE: garbage,
 * truncated or hostile input) or a small valid AgentBatch (--valid JOB SEQ), optionally as agent
 * AGENT_ID (hex) and with a bearer token appended (--token T), as an agent sends it; --host H and
 * --kernel K name the rank's host and its kernel (e.g. markup for the dashboard's test; default
 * "h" and "k"); --kernels N sends N kernel records (a request of megabytes: 400,000 take ~6 MB). */
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
        static char buf[RS_WIRE_MAX_BATCH_BYTES];
        FILE *f = fopen(argv[3], "rb");
        size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (f)
            fclose(f);
        return send_bytes(argv[1], buf, n);
    }
    if (argc >= 5 && strcmp(argv[2], "--valid") == 0) {
        uint64_t agent_id = 0x7e57;
        const char *token = NULL, *host = "h", *kernel = "k";
        uint32_t n_kernels = 1;
        for (int i = 5; i + 1 < argc; i += 2) {
            if (strcmp(argv[i], "--agent-id") == 0)
                agent_id = strtoull(argv[i + 1], NULL, 16);
            else if (strcmp(argv[i], "--token") == 0)
                token = argv[i + 1];
            else if (strcmp(argv[i], "--host") == 0)
                host = argv[i + 1];
            else if (strcmp(argv[i], "--kernel") == 0)
                kernel = argv[i + 1];
            else if (strcmp(argv[i], "--kernels") == 0)
                n_kernels = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        }
        const char *names[] = {kernel};
        struct rs_kernel_record *k = calloc(n_kernels ? n_kernels : 1, sizeof *k);
        if (!k)
            return 1;
        for (uint32_t i = 0; i < n_kernels; i++)
            k[i] = (struct rs_kernel_record){1000 + 2000ull * i, 2000 + 2000ull * i, 0, 7, 0, 0};
        struct rs_rank_batch rb = {.identity = T_IDENTITY_OF(argv[3], 0, 0, 1, host, "GPU-x", 1),
                                   T_RECORDS(strings, names, 1),
                                   T_RECORDS(kernels, k, n_kernels)};
        struct rs_agent_batch b = {
            agent_id, 1,   strtoull(argv[4], NULL, 10), {agent_id, 1, "h", "test", {0, 0}}, &rb, 1,
            0,        NULL,  NULL, 0};
        uint8_t *data, *with;
        size_t len, tlen = 0;
        uint8_t field[512];
        int erc = rs_wire_agent_batch_encode(&b, &data, &len);
        free(k);
        if (erc != 0)
            return 1;
        if (token && rs_wire_auth_token_field(token, field, sizeof field, &tlen) != 0) {
            fprintf(stderr, "rs-nng-send: not a valid token\n");
            return 2;
        }
        if (!(with = realloc(data, len + tlen)))
            return 1;
        data = with;
        memcpy(data + len, field, tlen);
        int rc = send_bytes(argv[1], data, len + tlen);
        free(data);
        return rc;
    }
    fprintf(stderr, "usage: rs-nng-send URL --raw FILE | URL --valid JOB SEQ [--agent-id HEX] "
                    "[--token T] [--host H] [--kernel K] [--kernels N]\n");
    return 2;
}
