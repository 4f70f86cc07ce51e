/* Unit tests of the in-flight condition's text (proto/in_flight.h): what the collector writes is
 * what the server reads, and every other text — another condition, a wrong field, a sign, a
 * terminal escape, trailing bytes, a rank not below the size — is refused. */
#include "common/error.h"
#include "proto/in_flight.h"
#include "tests/t.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void
round_trip(void)
{
    struct rs_in_flight f = {0xfeedbeef12345678ull,
                             1ull << 48 | 3ull << 32 | 9,
                             1795531099524ull,
                             12345,
                             1,
                             4,
                             "AllReduce",
                             true},
                        g;
    char text[128];

    T_OK(rs_in_flight_format(&f, text, sizeof text));
    T_CHECK(strcmp(text, "in flight: comm=feedbeef12345678 r=1/4 op=AllReduce seq=1000300000009 "
                         "t0_ms=1795531099524 ms=12345 gpu=1") == 0);
    T_OK(rs_in_flight_parse(text, &g));
    T_CHECK(g.comm == f.comm && g.seq == f.seq && g.since_ms == f.since_ms &&
            g.for_ms == f.for_ms && g.comm_rank == f.comm_rank && g.comm_size == f.comm_size &&
            strcmp(g.op, f.op) == 0 && g.gpu_started);
    /* the longest realistic values (ranks below 65536, ms of 10 digits) fit the 127 bytes the
     * server keeps; beyond, the writer refuses rather than be cut */
    f = (struct rs_in_flight){UINT64_MAX, UINT64_MAX, 9999999999999ull, 9999999999ull,
                              65534,      65535,      "ReduceScatter",  false};
    T_OK(rs_in_flight_format(&f, text, sizeof text));
    T_EQ(strlen(text), 124);
    T_OK(rs_in_flight_parse(text, &g));
    T_EQ(g.seq, UINT64_MAX);
    T_EQ(rs_in_flight_format(&f, text, 40), -ENOSPC);
    T_CHECK(text[0] == '\0');
    f.comm_size = 4000000000u;
    f.comm_rank = 3999999999u;
    f.for_ms = UINT64_MAX;
    T_EQ(rs_in_flight_format(&f, text, sizeof text), -ENOSPC);
    T_CHECK(text[0] == '\0');
    snprintf(f.op, sizeof f.op, "All Reduce");
    T_EQ(rs_in_flight_format(&f, text, sizeof text), RS_E_MALFORMED);
    snprintf(f.op, sizeof f.op, "Send");
    f.comm_rank = f.comm_size = 65535;
    T_EQ(rs_in_flight_format(&f, text, sizeof text), RS_E_MALFORMED);
}

static void
refused(void)
{
    struct rs_in_flight f;
    const char *bad[] = {
        NULL,
        "",
        "CUPTI is in use by Nsight Systems; rankscope steps aside in this process",
        "in flight: comm=00000000000000ab r=4/4 op=AllReduce seq=9 t0_ms=5 ms=1 gpu=0",
        "in flight: comm=00000000000000ab r=0/0 op=AllReduce seq=9 t0_ms=5 ms=1 gpu=0",
        "in flight: comm=00000000000000ab r=0/2 op=AllReduce seq=9 t0_ms=5 ms=1 gpu=2",
        "in flight: comm=00000000000000ab r=0/2 op=AllReduce seq=9 t0_ms=5 ms=1 gpu=0 x",
        "in flight: comm=00000000000000ab r=0/2 op=AllReduce seq=9 t0_ms=5 ms=1 gpu=0\n",
        "in flight: comm=00000000000000ab r=0/2 op=All\x1b[31mReduce seq=9 t0_ms=5 ms=1 gpu=0",
        "in flight: comm=00000000000000ab r=0/2 op=AllReduce seq=9 t0_ms=5",
        "in flight: comm=1234567890abcdef12 r=0/2 op=A seq=9 t0_ms=5 ms=1 gpu=0",
        "in flight: comm=ab r=0/2 op=AllReduce seq=9 t0_ms=5 ms=1 gpu=0", /* not 16 digits */
        "in flight: comm=00000000000000ab r=0/2 op=AllReduce seq=-1 t0_ms=5 ms=1 gpu=0",
        "in flight: comm=00000000000000ab r=0/2 op=AllReduce seq=+1 t0_ms=5 ms=1 gpu=0",
        "in flight: comm=00000000000000ab r=0/2 op=AllReduce seq=9 t0_ms=99999999999999999999 ms=1 "
        "gpu=0",
        "in flight: comm=00000000000000ab r=0/2 op=AllReduce seq=9 t0_ms=05 ms=1 gpu=0",
        "in flight: comm=00000000000000ab r= 0/2 op=AllReduce seq=9 t0_ms=5 ms=1 gpu=0",
        "in flight: comm=00000000000000ab r=0/2 op=AllReduceAllReduceAllReduceAllReduce seq=1 "
        "t0_ms=5 ms=1 gpu=0",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = rs_in_flight_parse(bad[i], &f);
        if (rc != RS_E_MALFORMED)
            fprintf(stderr, "  accepted: %s\n", bad[i] ? bad[i] : "(null)");
        T_EQ(rc, RS_E_MALFORMED);
    }
}

int
main(void)
{
    T_RUN(round_trip);
    T_RUN(refused);
    return T_DONE("proto/in_flight");
}
