/* Unit tests of the hang rule (query/hangs.h) on hand-built rank infos: a world communicator with
 * one rank that never arrived, a sub-communicator, several communicators, the majority (op, seq),
 * ranks that stopped sending, clearing, and the JSON. */
#include "common/error.h"
#include "proto/wire.h"
#include "proto/in_flight.h"
#include "query/hangs.h"
#include "tests/t.h"

#include <stdio.h>
#include <string.h>

#define SEC 1000000000ull
#define NOW (1800000000ull * SEC)

static struct rs_rank_info ranks[8];

/* World of n ranks, fresh, no condition. */
static void
world(size_t n)
{
    memset(ranks, 0, sizeof ranks);
    for (size_t i = 0; i < n; i++) {
        ranks[i].rank = (uint32_t)i;
        ranks[i].world_size = (uint32_t)n;
        ranks[i].last_ns = NOW - SEC;
        snprintf(ranks[i].host, sizeof ranks[i].host, "node%zu", i / 2);
        snprintf(ranks[i].gpu_uuid, sizeof ranks[i].gpu_uuid, "GPU-%zu", i);
    }
}

/* Rank i's collector said, at `said_ns`, that it waits since `since_ns`. */
static void
in_flight_said(size_t i, uint64_t comm, unsigned comm_rank, unsigned size, const char *op,
               unsigned long long seq, uint64_t since_ns, int gpu, uint64_t said_ns)
{
    struct rs_in_flight f = {
        comm, seq,     since_ns / 1000000, (said_ns - since_ns) / 1000000, comm_rank, size,
        "",   gpu == 1};
    snprintf(f.op, sizeof f.op, "%s", op);
    ranks[i].collector_flags |= RS_COLLECTOR_IN_FLIGHT;
    T_EQ(rs_in_flight_format(&f, ranks[i].collector_status, sizeof ranks[i].collector_status), 0);
}

static void
in_flight(size_t i, uint64_t comm, unsigned comm_rank, unsigned size, const char *op,
          unsigned long long seq, uint64_t since_ns, int gpu)
{
    in_flight_said(i, comm, comm_rank, size, op, seq, since_ns, gpu, NOW - SEC / 4);
}

/* 4 ranks; 0, 1 and 3 wait at AllReduce 41 of the world communicator, rank 2 never arrived. */
static void
world_communicator(void)
{
    struct rs_hang_report rep;
    world(4);
    in_flight(0, 0xfeed, 0, 4, "AllReduce", 41, NOW - 20 * SEC, 1);
    in_flight(1, 0xfeed, 1, 4, "AllReduce", 41, NOW - 25 * SEC, 1);
    in_flight(3, 0xfeed, 3, 4, "AllReduce", 41, NOW - 21 * SEC, 0);
    T_OK(rs_hangs_find(ranks, 4, NOW, 60 * SEC, &rep));
    T_EQ(rep.n, 1);
    T_EQ(rep.hangs[0].comm, 0xfeed);
    T_EQ(rep.hangs[0].seq, 41);
    T_CHECK(strcmp(rep.hangs[0].op, "AllReduce") == 0);
    T_EQ(rep.hangs[0].since_ns, NOW - 25 * SEC);
    T_EQ(rep.hangs[0].n_waiting, 3);
    T_EQ(rep.hangs[0].waiting[2].rank, 3);
    T_CHECK(!rep.hangs[0].waiting[2].gpu_started && rep.hangs[0].waiting[0].gpu_started);
    T_EQ(rep.hangs[0].n_absent, 1);
    T_EQ(rep.hangs[0].absent[0].rank, 2);
    T_CHECK(strcmp(rep.hangs[0].absent[0].host, "node1") == 0);
    T_CHECK(strcmp(rep.hangs[0].absent[0].gpu_uuid, "GPU-2") == 0);
    T_EQ(rep.hangs[0].absent_unknown, 0);

    json_t *j = rs_hang_report_json(&rep);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    T_CHECK(s && strstr(s, "\"comm\":\"0x000000000000feed\""));
    T_CHECK(
        s &&
        strstr(s, "\"never_arrived\":[{\"rank\":2,\"host\":\"node1\",\"gpu_uuid\":\"GPU-2\"}]"));
    T_CHECK(s && strstr(s, "\"gpu_started\":false"));
    free(s);
    json_decref(j);
    rs_hang_report_fini(&rep);
}

/* A pipeline pair (size 2) of a world of 4: rank 2 waits at its Send; the other member is not
 * known by rank, only counted. A second communicator with its own hang. */
static void
sub_communicators(void)
{
    struct rs_hang_report rep;
    world(4);
    in_flight(2, 0x22, 0, 2, "Send", 7, NOW - 30 * SEC, 0);
    in_flight(0, 0x11, 0, 2, "AllGather", 3, NOW - 15 * SEC, 1);
    in_flight(1, 0x11, 1, 2, "AllGather", 3, NOW - 15 * SEC, 1);
    T_OK(rs_hangs_find(ranks, 4, NOW, 60 * SEC, &rep));
    T_EQ(rep.n, 2);
    T_EQ(rep.hangs[0].comm, 0x11); /* by communicator */
    T_EQ(rep.hangs[0].n_waiting, 2);
    T_EQ(rep.hangs[0].n_absent + rep.hangs[0].absent_unknown, 0); /* both members wait */
    T_EQ(rep.hangs[1].comm, 0x22);
    T_EQ(rep.hangs[1].n_waiting, 1);
    T_EQ(rep.hangs[1].n_absent, 0);
    T_EQ(rep.hangs[1].absent_unknown, 1);
    rs_hang_report_fini(&rep);
}

/* Waiting ranks that disagree: the (op, seq) most report names the verdict; a tie goes to the
 * lower sequence. */
static void
majority(void)
{
    struct rs_hang_report rep;
    world(4);
    in_flight(0, 0x5, 0, 4, "AllReduce", 11, NOW - SEC * 12, 0);
    in_flight(1, 0x5, 1, 4, "AllReduce", 10, NOW - SEC * 12, 0);
    in_flight(2, 0x5, 2, 4, "AllReduce", 10, NOW - SEC * 12, 0);
    T_OK(rs_hangs_find(ranks, 4, NOW, 0, &rep));
    T_EQ(rep.n, 1);
    T_EQ(rep.hangs[0].seq, 10);
    rs_hang_report_fini(&rep);
    world(2);
    in_flight(0, 0x5, 0, 2, "AllReduce", 11, NOW - SEC * 12, 0);
    in_flight(1, 0x5, 1, 2, "AllReduce", 10, NOW - SEC * 12, 0);
    T_OK(rs_hangs_find(ranks, 2, NOW, 0, &rep));
    T_EQ(rep.hangs[0].seq, 10);
    rs_hang_report_fini(&rep);
}

/* A rank that said it waits but has not said so for long (its process is gone) is neither
 * waiting nor absent; a rank quiet for long that reports nothing in flight is absent (maybe stuck
 * outside NCCL); with no rank in flight there is no verdict (the condition cleared); a status that
 * does not parse is counted, not a verdict. */
static void
stale_cleared_malformed(void)
{
    struct rs_hang_report rep;
    world(3);
    in_flight_said(0, 0x9, 0, 3, "Broadcast", 1, NOW - 190 * SEC, 0, NOW - 120 * SEC);
    in_flight(1, 0x9, 1, 3, "Broadcast", 1, NOW - 20 * SEC, 0);
    ranks[2].last_ns = NOW - 120 * SEC;
    T_OK(rs_hangs_find(ranks, 3, NOW, 60 * SEC, &rep));
    T_EQ(rep.n, 1);
    T_EQ(rep.hangs[0].n_waiting, 1);
    T_EQ(rep.hangs[0].waiting[0].rank, 1);
    T_EQ(rep.hangs[0].n_absent, 1);
    T_EQ(rep.hangs[0].absent[0].rank, 2);
    T_EQ(rep.hangs[0].absent_unknown, 1);
    rs_hang_report_fini(&rep);
    in_flight_said(1, 0x9, 1, 3, "Broadcast", 1, NOW - 190 * SEC, 0, NOW - 120 * SEC);
    T_OK(rs_hangs_find(ranks, 3, NOW, 60 * SEC, &rep));
    T_EQ(rep.n, 0); /* nobody heard of */
    rs_hang_report_fini(&rep);

    world(3);
    T_OK(rs_hangs_find(ranks, 3, NOW, 60 * SEC, &rep));
    T_EQ(rep.n, 0);
    rs_hang_report_fini(&rep);

    ranks[1].collector_flags = RS_COLLECTOR_IN_FLIGHT;
    snprintf(ranks[1].collector_status, sizeof ranks[1].collector_status, "in flight: gibberish");
    T_OK(rs_hangs_find(ranks, 3, NOW, 60 * SEC, &rep));
    T_EQ(rep.n, 0);
    T_EQ(rep.malformed, 1);
    rs_hang_report_fini(&rep);
    T_OK(rs_hangs_find(ranks, 0, NOW, 60 * SEC, &rep));
    T_EQ(rep.n, 0);
    rs_hang_report_fini(&rep);
}

int
main(void)
{
    T_RUN(world_communicator);
    T_RUN(sub_communicators);
    T_RUN(majority);
    T_RUN(stale_cleared_malformed);
    return T_DONE("query/hangs");
}
