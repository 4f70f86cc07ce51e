/* Test tool: an agent stand-in for crash tests. Sends batches 1..N (one rank batch of K kernels
 * each) to a server over NNG req, one at a time, resending each until it is acknowledged —
 * surviving any number of server deaths — and appends every acknowledged sequence number to a
 * file. usage: rs-load URL BATCHES KERNELS ACKED_FILE */
#include "common/clock.h"
#include "proto/wire.h"
#include "tests/t_batch.h"

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
    static const char *const names[] = {"crash_test_kernel"};
    nng_socket sock;
    nng_dialer dialer;
    FILE *acked;
    int rv;

    if (argc != 5) {
        fprintf(stderr, "usage: rs-load URL BATCHES KERNELS ACKED_FILE\n");
        return 2;
    }
    unsigned long n = strtoul(argv[2], NULL, 10), per = strtoul(argv[3], NULL, 10);
    struct rs_kernel_record *k = calloc(per, sizeof *k);
    if (!k || !(acked = fopen(argv[4], "a")))
        return 1;
    if ((rv = nng_req0_open(&sock)) || (rv = nng_dialer_create(&dialer, sock, argv[1])) ||
        (rv = nng_dialer_set_ms(dialer, NNG_OPT_RECONNMINT, 50)) ||
        (rv = nng_dialer_set_ms(dialer, NNG_OPT_RECONNMAXT, 200)) ||
        (rv = nng_dialer_start(dialer, NNG_FLAG_NONBLOCK)) ||
        (rv = nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, 1000)) ||
        (rv = nng_socket_set_ms(sock, NNG_OPT_SENDTIMEO, 1000))) {
        fprintf(stderr, "rs-load: %s\n", nng_strerror(rv));
        return 1;
    }
    /* real times: the server's retention must see a live job */
    uint64_t base = rs_clock_realtime_ns();
    for (unsigned long seq = 1; seq <= n; seq++) {
        for (unsigned long i = 0; i < per; i++)
            k[i] = (struct rs_kernel_record){base + seq * 1000000 + i * 10,
                                             base + seq * 1000000 + i * 10 + 5,
                                             0,
                                             7,
                                             0,
                                             (uint32_t)i};
        struct rs_rank_batch rb = {.identity = T_IDENTITY("crash", 0, 1, "GPU-x"),
                                   T_RECORDS(strings, names, 1),
                                   T_RECORDS(kernels, k, (uint32_t)per)};
        struct rs_agent_batch b = {.agent_id = 0xc0ffee,
                                   .boot_id = 1,
                                   .batch_seq = seq,
                                   .hello = {.agent_id = 0xc0ffee,
                                             .boot_id = 1,
                                             .host = "h",
                                             .agent_version = "load",
                                             .clock = {0, 0}},
                                   .ranks = &rb,
                                   .n_ranks = 1,
                                   .agent_dropped = 0};
        uint8_t *data;
        size_t len;
        if (rs_wire_agent_batch_encode(&b, &data, &len) != 0)
            return 1;
        for (;;) { /* until acknowledged: the server may die and come back meanwhile */
            struct rs_server_reply r;
            char err[256], *reply = NULL;
            size_t rlen = 0;
            if (nng_send(sock, data, len, 0) != 0 ||
                nng_recv(sock, &reply, &rlen, NNG_FLAG_ALLOC) != 0)
                continue;
            rv = rs_wire_reply_decode((uint8_t *)reply, rlen, &r, err, sizeof err);
            nng_free(reply, rlen);
            if (rv == 0 && r.batch_seq == seq &&
                (r.status == RS_REPLY_ACK || r.status == RS_REPLY_DUPLICATE))
                break;
        }
        free(data);
        fprintf(acked, "%lu\n", seq);
        fflush(acked);
    }
    fclose(acked);
    nng_close(sock);
    free(k);
    return 0;
}
