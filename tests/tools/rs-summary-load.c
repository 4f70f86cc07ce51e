/* Benchmark tool: sustained ingest of rank-window summaries (issue 4). Stands in for the agents of
 * a large cluster whose agents summarize (rankscope-agent --summarize): RANKS ranks of one job,
 * each sending one summary per 1 s window — 60 kernel totals (names of real PyTorch kernels'
 * length), 2 copy totals, its step with measured metrics and 4 AllReduce records, as an agent
 * sends them. AGENTS threads, each an agent with its own NNG req socket, send batches of
 * RANKS_PER_AGENT ranks (one node) one at a time and wait for each acknowledgement: a summary
 * counts once the server has committed it. Each agent owns RANKS / AGENTS ranks and goes through
 * them node by node, then on to the next window (so at 20,000 summaries/s a 20,480-rank job
 * advances about one window per second, as at 1 Hz). With OFFERED (summaries/s) the agents send
 * on a schedule instead, as a cluster whose RANKS GPUs summarize at OFFERED / RANKS Hz would:
 * each its next request when it is due, or at once when it is behind (a request is never sent
 * before the previous one is acknowledged); how far behind schedule the agents fall says whether
 * the server keeps up — bounded lag: it does; lag that grows: it does not. Runs for SECONDS, then
 * prints one JSON line: {"summaries":N,"seconds":S,"per_second":R,"batches":B,"retries":T,
 * "offered":O,"max_lag_s":L,"final_lag_s":F} (lags 0 without OFFERED).
 * usage: rs-summary-load URL RANKS SECONDS [AGENTS] [RANKS_PER_AGENT] [WINDOWS_PER_RANK]
 *        [OFFERED] */
#include "common/clock.h"
#include "proto/wire.h"
#include "tests/t_batch.h"

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KERNEL_NAMES 60
#define COLLS 4
#define S 1000000000ull

static char names[KERNEL_NAMES + 1][192];
static const char *name_ptrs[KERNEL_NAMES + 1];
static const char *url;
static uint32_t ranks, agents, per_agent, per_rank;
static uint64_t t0, begin, stop_at;
static double offered; /* summaries/s on schedule; 0: as fast as acknowledged */
static atomic_ullong summaries, batches, retries;
static atomic_ullong max_lag_ns, interval_lag_ns; /* behind schedule: over the run, this interval */
static atomic_ullong *final_lag_ns;               /* per agent, at its last request */

static void
atomic_max(atomic_ullong *a, uint64_t v)
{
    uint64_t old = atomic_load(a);
    while (v > old && !atomic_compare_exchange_weak(a, &old, v))
        ;
}

/* Waits until request k of agent `id` is due (OFFERED); returns how late it is (0 when not). */
static uint64_t
wait_due(uint32_t id, uint64_t k)
{
    if (offered <= 0)
        return 0;
    /* every agent sends per_agent x per_rank summaries per request; agents start staggered */
    double every_ns = (double)per_agent * per_rank * agents / offered * 1e9;
    uint64_t due = begin + (uint64_t)(every_ns * ((double)k + (double)id / agents));
    uint64_t now = rs_clock_mono_ns();
    if (due > now) {
        rs_clock_sleep_ns(due - now);
        return 0;
    }
    return now - due;
}

/* One rank's summaries of windows w .. w + per_rank - 1 (1 s windows from t0). */
static void
fill_rank(struct rs_rank_batch *rb, uint32_t rank, uint64_t w, struct rs_kernel_total *kt,
          struct rs_copy_total *ct, struct rs_step_record *st, struct rs_collective_record *c)
{
    for (uint32_t k = 0; k < per_rank; k++) {
        uint64_t win = w + k, start = t0 + win * S, compute = 0, comm = 0;
        for (uint32_t i = 0; i < KERNEL_NAMES; i++) {
            uint64_t count = 1 + i % 17, each = 20000 + (uint64_t)i * 1500 + rank % 7 * 100;
            kt[k * KERNEL_NAMES + i] =
                (struct rs_kernel_total){start, S, i, count, count * each, each};
            compute += count * each;
        }
        ct[k * 2] = (struct rs_copy_total){start, S, RS_COPY_HTOD, 3, 90000, 40000, 3 << 20};
        ct[k * 2 + 1] = (struct rs_copy_total){start, S, RS_COPY_MEMSET, 10, 20000, 2500, 40960};
        for (uint32_t i = 0; i < COLLS; i++) {
            uint64_t cs = start + 100000000ull * (i + 1), dur = 5000000 + rank % 13 * 10000;
            c[k * COLLS + i] = (struct rs_collective_record){cs,
                                                             cs + dur,
                                                             25u << 20,
                                                             0x5354524d00000007ull,
                                                             (t0 / S + win) * COLLS + i,
                                                             RS_COLL_ALLREDUCE,
                                                             KERNEL_NAMES,
                                                             7,
                                                             false};
            comm += dur;
        }
        /* compute and NCCL do not overlap here: exposed = comm */
        st[k] = (struct rs_step_record){
            .step = t0 / S + win, /* runs never overlap */
            .start_ns = start,
            .end_ns = start + S,
            .measured = true,
            .metrics = {compute, comm, comm, S - compute - comm, 10000, KERNEL_NAMES * 9 + COLLS}};
    }
    *rb = (struct rs_rank_batch){.identity = T_IDENTITY_OF("summary-bench", rank, rank % 8, ranks,
                                                           "node", "GPU-bench", 1000 + rank),
                                 .clock = {t0 + (w + per_rank) * S, t0 + (w + per_rank) * S},
                                 T_RECORDS(strings, name_ptrs, KERNEL_NAMES + 1),
                                 T_RECORDS(collectives, c, COLLS * per_rank),
                                 T_RECORDS(steps, st, per_rank),
                                 .kernel_totals = kt,
                                 .n_kernel_totals = KERNEL_NAMES * per_rank,
                                 .copy_totals = ct,
                                 .n_copy_totals = 2 * per_rank};
}

static void *
agent(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg, share = ranks / agents, first = id * share;
    struct rs_rank_batch *rb = calloc(per_agent, sizeof *rb);
    size_t wins = (size_t)per_agent * per_rank;
    struct rs_kernel_total *kt = calloc(wins * KERNEL_NAMES, sizeof *kt);
    struct rs_copy_total *ct = calloc(wins * 2, sizeof *ct);
    struct rs_step_record *st = calloc(wins, sizeof *st);
    struct rs_collective_record *c = calloc(wins * COLLS, sizeof *c);
    nng_socket sock;
    int rv;

    if (!rb || !kt || !ct || !st || !c || (rv = nng_req0_open(&sock)) != 0 ||
        (rv = nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, 10000)) != 0 ||
        (rv = nng_dial(sock, url, NULL, 0)) != 0) {
        fprintf(stderr, "rs-summary-load: agent %u cannot start\n", id);
        exit(1);
    }
    /* a new agent id per run: a second run against the same store must not be deduplicated */
    uint64_t agent_id = (t0 / S) << 20 | id, seq = 0, w = 0;
    for (uint32_t node = 0; rs_clock_mono_ns() < stop_at; node += per_agent) {
        uint64_t lag = wait_due(id, seq);
        if (rs_clock_mono_ns() >= stop_at)
            break;
        atomic_max(&max_lag_ns, lag);
        atomic_max(&interval_lag_ns, lag);
        atomic_store(&final_lag_ns[id], lag);
        if (node + per_agent > share) { /* every rank has sent this window: the next one */
            node = 0;
            w += per_rank;
        }
        for (uint32_t i = 0; i < per_agent; i++)
            fill_rank(&rb[i], first + node + i, w, &kt[i * per_rank * KERNEL_NAMES],
                      &ct[i * per_rank * 2], &st[i * per_rank], &c[i * per_rank * COLLS]);
        struct rs_agent_batch b = {.agent_id = agent_id,
                                   .boot_id = 1,
                                   .batch_seq = ++seq,
                                   .hello = {.agent_id = agent_id,
                                             .boot_id = 1,
                                             .host = "node",
                                             .agent_version = "bench",
                                             .clock = {0, 0}},
                                   .ranks = rb,
                                   .n_ranks = per_agent,
                                   .agent_dropped = 0};
        uint8_t *data;
        size_t len;
        if (rs_wire_agent_batch_encode(&b, &data, &len) != 0) {
            fprintf(stderr, "rs-summary-load: cannot encode\n");
            exit(1);
        }
        for (;;) { /* until acknowledged */
            struct rs_server_reply r;
            char err[256], *reply = NULL;
            size_t rlen = 0;
            if (nng_send(sock, data, len, 0) == 0 &&
                nng_recv(sock, &reply, &rlen, NNG_FLAG_ALLOC) == 0) {
                rv = rs_wire_reply_decode((uint8_t *)reply, rlen, &r, err, sizeof err);
                nng_free(reply, rlen);
                if (rv == 0 && (r.status == RS_REPLY_ACK || r.status == RS_REPLY_DUPLICATE))
                    break;
                if (rv == 0 && r.status == RS_REPLY_REJECTED) {
                    fprintf(stderr, "rs-summary-load: rejected: %s\n", err);
                    exit(1);
                }
            }
            atomic_fetch_add(&retries, 1);
        }
        free(data);
        if (rs_clock_mono_ns() <= stop_at) { /* count what was committed in the time */
            atomic_fetch_add(&summaries, (uint64_t)per_agent * per_rank);
            atomic_fetch_add(&batches, 1);
        }
    }
    nng_close(sock);
    free(rb);
    free(kt);
    free(ct);
    free(st);
    free(c);
    return NULL;
}

int
main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: rs-summary-load URL RANKS SECONDS [AGENTS] [RANKS_PER_AGENT] "
                        "[WINDOWS_PER_RANK] [OFFERED]\n");
        return 2;
    }
    url = argv[1];
    ranks = (uint32_t)strtoul(argv[2], NULL, 10);
    double seconds = strtod(argv[3], NULL);
    agents = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 16;
    per_agent = argc > 5 ? (uint32_t)strtoul(argv[5], NULL, 10) : 8;
    per_rank = argc > 6 ? (uint32_t)strtoul(argv[6], NULL, 10) : 1;
    offered = argc > 7 ? strtod(argv[7], NULL) : 0;
    if (ranks == 0 || agents == 0 || per_agent == 0 || per_rank == 0 ||
        agents * per_agent > ranks || seconds <= 0 || offered < 0) {
        fprintf(stderr, "rs-summary-load: need RANKS >= AGENTS x RANKS_PER_AGENT > 0\n");
        return 2;
    }
    for (int i = 0; i < KERNEL_NAMES; i++) {
        snprintf(names[i], sizeof names[i],
                 "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_%02d"
                 "<at::native::BinaryFunctor<float, float, float>>>(int)",
                 i);
        name_ptrs[i] = names[i];
    }
    snprintf(names[KERNEL_NAMES], sizeof names[0], "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
    name_ptrs[KERNEL_NAMES] = names[KERNEL_NAMES];
    t0 = rs_clock_realtime_ns() / S * S;
    begin = rs_clock_mono_ns();
    stop_at = begin + (uint64_t)(seconds * 1e9);
    pthread_t *th = calloc(agents, sizeof *th);
    if (!(final_lag_ns = calloc(agents, sizeof *final_lag_ns)))
        return 1;
    for (uint32_t i = 0; th && i < agents; i++)
        pthread_create(&th[i], NULL, agent, (void *)(uintptr_t)i);
    /* progress on stderr every 5 s: the rate of each interval (a new store is slower at first,
     * while its file grows) */
    uint64_t last = 0, last_at = begin;
    while (rs_clock_mono_ns() + 5 * S <= stop_at) {
        struct timespec ts = {5, 0};
        nanosleep(&ts, NULL);
        uint64_t now = rs_clock_mono_ns(), n = atomic_load(&summaries);
        fprintf(stderr, "rs-summary-load: %.0f s: %.0f summaries/s, behind schedule %.1f s\n",
                (double)(now - begin) / 1e9, (double)(n - last) / ((double)(now - last_at) / 1e9),
                (double)atomic_exchange(&interval_lag_ns, 0) / 1e9);
        last = n;
        last_at = now;
    }
    for (uint32_t i = 0; th && i < agents; i++)
        pthread_join(th[i], NULL);
    double took = (double)(stop_at - begin) / 1e9;
    uint64_t final_lag = 0;
    for (uint32_t i = 0; i < agents; i++)
        final_lag = final_lag_ns[i] > final_lag ? final_lag_ns[i] : final_lag;
    printf("{\"summaries\":%llu,\"seconds\":%.3f,\"per_second\":%.0f,\"batches\":%llu,"
           "\"retries\":%llu,\"offered\":%.0f,\"max_lag_s\":%.3f,\"final_lag_s\":%.3f}\n",
           (unsigned long long)summaries, took, (double)summaries / took,
           (unsigned long long)batches, (unsigned long long)retries, offered,
           (double)max_lag_ns / 1e9, (double)final_lag / 1e9);
    free(th);
    free(final_lag_ns);
    return 0;
}
