/* Unit tests of the collector's entry point (node-agent/collector/injection.c) against the
 * stand-in CUPTI (fake_cupti.h) and a stand-in agent socket: InitializeInjection in a process
 * that then exits normally — what reaches the agent, what is said on stderr — when collecting
 * (records flushed at exit), launch waits as RANKSCOPE_LAUNCH_WAIT asks (launch-call records by
 * default, latency timestamps, none), when another tool holds CUPTI (steps aside), when libcupti's
 * version differs from the headers', with the kill switch, and in a forked child (inert: it sends
 * nothing and exits without hanging). Each case is a child process (t_isolated.h); the agent's
 * side is read here after it ends. */
#include "node-agent/collector/convert.h"
#include "node-agent/collector/plugin.h"
#include "proto/in_flight.h"
#include "proto/wire.h"
#include "tests/t.h"
#include "tests/t_isolated.h"
#include "tests/t_socket.h"
#include "tests/unit/collector/fake_cupti.h"
#include "tests/unit/collector/fake_nccl.h"

#include <fcntl.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int InitializeInjection(void); /* the collector's entry point, as CUDA calls it */

static char sock_path[108];
static int listener = -1;

/* What the stand-in agent got from the cases' processes since the last call. */
static struct {
    unsigned connections, frames;
    uint64_t kernels, launch_waits;
    uint64_t collectives, exact; /* exact: seq_exact with the test's communicator hash */
    uint32_t flags;
    char status[256];
} got;

static void
read_agent_side(void)
{
    static uint8_t buf[1 << 20];
    int fd;

    memset(&got, 0, sizeof got);
    while ((fd = accept(listener, NULL, NULL)) >= 0) {
        ssize_t n;
        got.connections++;
        while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
            rs_wire_rank_frame *f = NULL;
            if (rs_wire_rank_frame_decode(buf, (size_t)n, sizeof buf, &f) == 0) {
                const struct rs_rank_batch *b = rs_wire_rank_frame_batch(f);
                got.frames++;
                got.kernels += b->n_kernels;
                got.collectives += b->n_collectives;
                for (uint32_t i = 0; i < b->n_collectives; i++)
                    got.exact += b->collectives[i].seq_exact &&
                                 b->collectives[i].comm_hash == 0xc0ffee0000000001ull &&
                                 b->collectives[i].end_ns > b->collectives[i].start_ns;
                for (uint32_t i = 0; i < b->n_memcpys; i++)
                    got.launch_waits += b->memcpys[i].kind == RS_LAUNCH_WAIT;
                got.flags |= b->collector_flags;
                if (b->collector_status && b->collector_status[0])
                    snprintf(got.status, sizeof got.status, "%s", b->collector_status);
            }
            rs_wire_rank_frame_free(f);
        }
        close(fd);
    }
}

/* The environment of rank 0 of a one-rank job sending to the stand-in agent, kernels traced all
 * the time (the cases below look at what is traced; the default, windows, has its own case). */
static void
rank_environment(void)
{
    setenv("RANKSCOPE_KERNELS", "always", 1);
    setenv("RANKSCOPE_AGENT_SOCKET", sock_path, 1);
    setenv("RANKSCOPE_JOB_ID", "job-inj", 1);
    setenv("RANK", "0", 1);
    setenv("WORLD_SIZE", "1", 1);
    unsetenv("RANKSCOPE_DISABLE");
    unsetenv("RANKSCOPE_PC_SAMPLING");
    unsetenv("RANKSCOPE_LAUNCH_WAIT");
}

/* ---- cases: each ends with exit(), so the collector's exit handler runs ---------------------- */
static void
collects_then_flushes_at_exit(void)
{
    rank_environment();
    T_EQ(InitializeInjection(), 1);
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    T_CHECK(fake_cupti_kernels(3));
    T_CHECK(t_said()[0] == '\0');
    t_isolated_exit();
}

/* By default kernels are traced in windows: nothing of them at start (the stand-in's clock is
 * far from a window), and CUPTI is detached between windows (attach.h), so nothing is set at start
 * that a window could not set again: no latency timestamps (no launch waits), no MARKER records,
 * no driver-API records. */
static void
windows_by_default(void)
{
    CUpti_CallbackId cbid;

    rank_environment();
    unsetenv("RANKSCOPE_KERNELS");
    unsetenv("NVTX_INJECTION64_PATH");
    setenv("RANKSCOPE_WINDOW_MS", "100", 1);
    setenv("RANKSCOPE_WINDOW_PERIOD_MS", "86400000", 1);
    T_EQ(InitializeInjection(), 1);
    T_CHECK(!fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_DEVICE));
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_MARKER));
    T_CHECK(!fake_cupti_latency);
    for (size_t i = 0; rs_convert_launch_call(i, &cbid); i++)
        T_CHECK(!fake_cupti_driver_api_on(cbid));
    for (size_t i = 0; rs_convert_sync_call(i, &cbid); i++)
        T_CHECK(!fake_cupti_driver_api_on(cbid));
    t_isolated_exit();
}

/* CUPTI stays attached between windows where NVTX goes to CUPTI (its markers need it; said once)
 * or RANKSCOPE_DETACH=0 asks so; still no launch waits in windows (no latency timestamps: they
 * hung the LM with windows, measured). */
static void
attached_between_windows(const char *nvtx, const char *detach)
{
    rank_environment();
    unsetenv("RANKSCOPE_KERNELS");
    if (nvtx)
        setenv("NVTX_INJECTION64_PATH", nvtx, 1);
    if (detach)
        setenv("RANKSCOPE_DETACH", detach, 1);
    setenv("RANKSCOPE_WINDOW_MS", "100", 1);
    setenv("RANKSCOPE_WINDOW_PERIOD_MS", "86400000", 1);
    T_EQ(InitializeInjection(), 1);
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_MARKER));
    T_CHECK(!fake_cupti_latency);
    T_CHECK((strstr(t_said(), "NVTX_INJECTION64_PATH is set: CUPTI stays attached") != NULL) ==
            (nvtx != NULL));
    t_isolated_exit();
}

static void
attached_for_nvtx(void)
{
    attached_between_windows("/opt/rankscope/lib/librankscope.so", NULL);
}

static void
attached_when_asked(void)
{
    attached_between_windows(NULL, "0");
}

/* With PC sampling, kernels are traced from the start and all the time, whatever
 * RANKSCOPE_KERNELS says: CUPTI refuses CONCURRENT_KERNEL turned on once PC sampling is enabled
 * (measured on an H100, tests/gpu/pc_order.cu; the stand-in refuses it too), so no window or
 * capture could trace them. Said once on stderr. */
static void
pc_sampling_keeps_kernels_on(void)
{
    rank_environment();
    unsetenv("RANKSCOPE_KERNELS");
    setenv("RANKSCOPE_PC_SAMPLING", "1", 1);
    T_EQ(InitializeInjection(), 1);
    T_CHECK(fake_cupti_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    T_CHECK(strstr(t_said(), "kernels are traced all the time") != NULL);
    T_CHECK(fake_cupti_kernels(2));
    t_isolated_exit();
}

/* RANKSCOPE_LAUNCH_WAIT for the next case: NULL unset. */
static const char *launch_wait_setting;

/* Launch waits by default from the launch calls' driver-API records; "latency" from CUPTI's
 * latency timestamps (turned on before the kinds; the stand-in's kernels 1 and 3 come late,
 * so two launch waits go at exit); "0" neither. */
static void
launch_waits_as_set(void)
{
    CUpti_CallbackId cbid;
    bool latency = launch_wait_setting && strcmp(launch_wait_setting, "latency") == 0,
         api = !launch_wait_setting || strcmp(launch_wait_setting, "api") == 0;

    rank_environment();
    if (launch_wait_setting)
        setenv("RANKSCOPE_LAUNCH_WAIT", launch_wait_setting, 1);
    T_EQ(InitializeInjection(), 1);
    T_CHECK(fake_cupti_latency == latency);
    T_CHECK((strstr(fake_cupti_log(), "LK") != NULL) == latency);
    for (size_t i = 0; rs_convert_launch_call(i, &cbid); i++)
        T_CHECK(fake_cupti_driver_api_on(cbid) == api);
    T_CHECK(fake_cupti_kernels(5));
    t_isolated_exit();
}

/* NCCL's side of the plugin as NCCL 2.28 calls it (plugin_test.c has the details; the descriptor
 * is tests/unit/collector/fake_nccl.h): a grouped send/recv to oneself with kernel-channel
 * events, and an all-reduce that stays queued. */
static void
nccl_op(void *ctx, struct nccl_descr *d, bool finish)
{
    void *h = NULL, *ch = NULL;
    struct timespec ts;

    T_EQ(ncclProfiler_v5.start_event(ctx, &h, d), 0);
    T_CHECK(h != NULL);
    if (finish) {
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - 50000;
        struct nccl_descr c = {.type = KERNEL_CH, .parentObj = h, .kernelCh = {0, t}};
        ncclProfiler_v5.start_event(ctx, &ch, &c);
        uint64_t stop = t + 20000;
        ncclProfiler_v5.record_event_state(ch, 22, &stop);
        ncclProfiler_v5.stop_event(ch);
    }
    ncclProfiler_v5.stop_event(h);
}

/* The plugin through the whole collector: NCCL's init is accepted once collection runs; finished
 * operations reach the agent as collective records with the communicator hash and seq_exact; an
 * operation left queued past RANKSCOPE_HANG_MS sets the in-flight condition with its text. */
static void
nccl_plugin_in_the_collector(void)
{
    void *ctx = NULL;
    int mask = 0;

    rank_environment();
    setenv("RANKSCOPE_HANG_MS", "1000", 1);
    T_CHECK(ncclProfiler_v5.init(&ctx, 1, &mask, "early", 1, 1, 0, NULL) != 0); /* not yet */
    T_EQ(InitializeInjection(), 1);
    T_EQ(ncclProfiler_v6.init(&ctx, 0xc0ffee0000000001ull, &mask, "c", 1, 1, 0, NULL), 0);
    for (int i = 0; i < 3; i++) {
        struct nccl_descr send = {.type = P2P,
                                  .p2p = {"Send", NULL, "ncclFloat32", 256, 0, 1, NULL}};
        struct nccl_descr recv = {.type = P2P,
                                  .p2p = {"Recv", NULL, "ncclFloat32", 256, 0, 1, NULL}};
        nccl_op(ctx, &send, true);
        nccl_op(ctx, &recv, true);
    }
    struct nccl_descr ar = {
        .type = COLL,
        .coll = {7, "AllReduce", NULL, NULL, 4, 0, "ncclFloat32", 1, 8, "RING", "LL", NULL}};
    nccl_op(ctx, &ar, false); /* queued behind something that never ends */
    usleep(1800 * 1000);      /* past the limit, and a few flushes */
    t_isolated_exit();
}

static void
nccl_plugin(void)
{
    t_isolated(nccl_plugin_in_the_collector);
    read_agent_side();
    T_EQ(got.exact, 6); /* send and recv to oneself share a key: the store keeps one */
    T_EQ(got.collectives, 6);
    T_CHECK(got.flags & RS_COLLECTOR_IN_FLIGHT);
    struct rs_in_flight f;
    T_OK(rs_in_flight_parse(got.status, &f));
    T_EQ(f.comm, 0xc0ffee0000000001ull);
    T_CHECK(strcmp(f.op, "AllReduce") == 0 && f.seq == 7 && f.comm_rank == 0 && f.comm_size == 1);
    T_CHECK(f.for_ms >= 1000 && !f.gpu_started);
}

static void
steps_aside_when_cupti_is_held(void)
{
    rank_environment();
    fake_cupti_subscribe_v2_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    fake_cupti_holder = "Nsight Systems";
    T_EQ(InitializeInjection(), 1);
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    T_CHECK(strcmp(fake_cupti_log(), "") == 0); /* nothing of CUPTI touched */
    const char *said = t_said(), *line = strstr(said, "CUPTI is in use by Nsight Systems");
    T_CHECK(line && !strstr(line + 1, "CUPTI is in use")); /* said once */
    t_isolated_exit();
}

static void
off_when_cupti_version_differs(void)
{
    rank_environment();
    fake_cupti_version = CUPTI_API_VERSION + 100; /* the next minor version */
    T_EQ(InitializeInjection(), 1);
    T_CHECK(!fake_cupti_kind_ever(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    T_CHECK(strstr(t_said(), "collection is off") != NULL);
    t_isolated_exit();
}

static void
kill_switch(void)
{
    rank_environment();
    setenv("RANKSCOPE_DISABLE", "1", 1);
    setenv("RANKSCOPE_FLUSH_MS", "fast", 1); /* not even this is said */
    T_EQ(InitializeInjection(), 1);
    T_CHECK(strcmp(fake_cupti_log(), "") == 0);
    T_CHECK(t_said()[0] == '\0');
    t_isolated_exit();
}

/* A value the collector cannot use is said once on stderr, and it collects with the default. */
static void
bad_setting_said(void)
{
    rank_environment();
    setenv("RANKSCOPE_FLUSH_MS", "fast", 1);
    T_EQ(InitializeInjection(), 1);
    T_CHECK(fake_cupti_kernels(1));
    T_CHECK(strstr(t_said(), "RANKSCOPE_FLUSH_MS=fast is not 10 - 60000; using 250") != NULL);
    const char *first = strstr(t_said(), "RANKSCOPE_FLUSH_MS");
    T_CHECK(first && !strstr(first + 1, "RANKSCOPE_FLUSH_MS")); /* once */
    unsetenv("RANKSCOPE_FLUSH_MS");
    t_isolated_exit();
}

/* A collecting process forks (a DataLoader worker): the child exits normally, sends nothing,
 * flushes nothing; the parent's records still go at its exit. */
static void
forked_child_is_inert(void)
{
    int status = -1;
    pid_t child;

    rank_environment();
    T_EQ(InitializeInjection(), 1);
    T_CHECK(fake_cupti_kernels(2));
    fake_cupti_reset();
    if ((child = fork()) == 0)
        exit(strcmp(fake_cupti_log(), "") == 0 ? 0 : 3); /* the exit handler must do nothing */
    T_CHECK(child > 0 && waitpid(child, &status, 0) == child);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    t_isolated_exit();
}

/* ---- the agent's side, after each case's process has ended --------------------------------- */
static void
collects_then_flushes(void)
{
    t_isolated(collects_then_flushes_at_exit);
    read_agent_side();
    T_EQ(got.connections, 1);
    T_EQ(got.kernels, 3);
    T_EQ(got.flags, 0);
}

static void
default_windows(void)
{
    t_isolated(windows_by_default);
    read_agent_side();
    T_EQ(got.kernels, 0);
    T_EQ(got.flags, RS_COLLECTOR_KERNELS_SAMPLED);
}

static void
attached_windows(void)
{
    t_isolated(attached_for_nvtx);
    read_agent_side();
    t_isolated(attached_when_asked);
    read_agent_side();
}

static void
launch_waits(void)
{
    launch_wait_setting = NULL;
    t_isolated(launch_waits_as_set);
    read_agent_side();
    T_EQ(got.kernels, 5);
    T_EQ(got.launch_waits, 0); /* the stand-in records no launch calls */
    launch_wait_setting = "latency";
    t_isolated(launch_waits_as_set);
    read_agent_side();
    T_EQ(got.launch_waits, 2);
    launch_wait_setting = "0";
    t_isolated(launch_waits_as_set);
    read_agent_side();
    T_EQ(got.kernels, 5);
    T_EQ(got.launch_waits, 0);
}

static void
steps_aside(void)
{
    t_isolated(steps_aside_when_cupti_is_held);
    read_agent_side();
    T_EQ(got.flags, RS_COLLECTOR_STEPPED_ASIDE);
    T_EQ(got.kernels, 0);
    T_CHECK(strstr(got.status, "Nsight Systems") != NULL);
}

static void
version_mismatch(void)
{
    t_isolated(off_when_cupti_version_differs);
    read_agent_side();
    T_EQ(got.flags, RS_COLLECTOR_VERSION_MISMATCH);
    T_EQ(got.kernels, 0);
}

static void
pc_sampling_kernels(void)
{
    t_isolated(pc_sampling_keeps_kernels_on);
    read_agent_side();
    T_EQ(got.kernels, 2);
    T_EQ(got.flags & RS_COLLECTOR_KERNELS_SAMPLED, 0);
}

static void
disabled(void)
{
    t_isolated(kill_switch);
    read_agent_side();
    T_EQ(got.connections, 0);
}

static void
bad_setting(void)
{
    t_isolated(bad_setting_said);
    read_agent_side();
    T_EQ(got.kernels, 1);
}

static void
fork_child(void)
{
    t_isolated(forked_child_is_inert);
    read_agent_side();
    T_EQ(got.connections, 1); /* the parent's only */
    T_EQ(got.kernels, 2);
}

int
main(void)
{
    snprintf(sock_path, sizeof sock_path, "/tmp/rs-injection-test-%d.sock", (int)getpid());
    listener = t_listen_seqpacket(sock_path);
    T_CHECK(listener >= 0 && fcntl(listener, F_SETFL, O_NONBLOCK) == 0);
    t_isolated_context = fake_cupti_log;
    T_RUN(collects_then_flushes);
    T_RUN(default_windows);
    T_RUN(attached_windows);
    T_RUN(pc_sampling_kernels);
    T_RUN(launch_waits);
    T_RUN(steps_aside);
    T_RUN(version_mismatch);
    T_RUN(disabled);
    T_RUN(bad_setting);
    T_RUN(fork_child);
    T_RUN(nccl_plugin);
    close(listener);
    unlink(sock_path);
    t_isolated_done();
    return T_DONE("collector/injection");
}
