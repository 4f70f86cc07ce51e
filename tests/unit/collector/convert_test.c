/* Unit tests of CUPTI record conversion with fake activity records: kernels vs NCCL collectives
 * (op, per-stream sequence numbers), copies, GPU UUID from the device record, untimed records,
 * CUPTI drop counts, demangling, launch waits — all the way to decoded frames on a fake agent
 * socket. */
#include "node-agent/collector/convert.h"
#include "proto/in_flight.h"
#include "tests/t.h"
#include "tests/t_socket.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static char sock_path[108];

static char *
fake_demangle(const char *mangled)
{
    return strcmp(mangled, "_Z4gemmv") == 0 ? strdup("gemm()") : NULL;
}

/* A host-to-device copy on device 1. */
static CUpti_ActivityMemcpy6
htod_copy(uint64_t start, uint64_t end, uint64_t bytes, uint32_t stream)
{
    CUpti_ActivityMemcpy6 cp;

    memset(&cp, 0, sizeof cp);
    cp.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    cp.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    cp.start = start;
    cp.end = end;
    cp.bytes = bytes;
    cp.deviceId = 1;
    cp.streamId = stream;
    return cp;
}

static CUpti_ActivityKernel10
kernel(const char *name, uint64_t start, uint64_t end, uint32_t stream)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.start = start;
    k.end = end;
    k.streamId = stream;
    k.deviceId = 1;
    k.correlationId = 7;
    return k;
}

/* NVTX range records as CUPTI reports them (a range's START and END share its id). */
static CUpti_ActivityMarker2
mark_start(uint64_t timestamp, uint32_t id, const char *name)
{
    return (CUpti_ActivityMarker2){.kind = CUPTI_ACTIVITY_KIND_MARKER,
                                   .flags = CUPTI_ACTIVITY_FLAG_MARKER_START,
                                   .timestamp = timestamp,
                                   .id = id,
                                   .name = name};
}

static CUpti_ActivityMarker2
mark_end(uint64_t timestamp, uint32_t id)
{
    return (CUpti_ActivityMarker2){.kind = CUPTI_ACTIVITY_KIND_MARKER,
                                   .flags = CUPTI_ACTIVITY_FLAG_MARKER_END,
                                   .timestamp = timestamp,
                                   .id = id};
}

/* A CUPTI synchronization record of 50 ns. */
static CUpti_ActivitySynchronization2
sync_record(CUpti_ActivitySynchronizationType type, uint64_t start, uint32_t stream)
{
    return (CUpti_ActivitySynchronization2){.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                            .type = type,
                                            .start = start,
                                            .end = start + 50,
                                            .streamId = stream};
}

/* A CUPTI driver-API record. */
static CUpti_ActivityAPI
api_record(CUpti_CallbackId cbid, uint64_t start, uint64_t end)
{
    return (CUpti_ActivityAPI){
        .kind = CUPTI_ACTIVITY_KIND_DRIVER, .cbid = cbid, .start = start, .end = end};
}

static void
records_to_frames(void)
{
    static const char nccl[] =
        "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
    struct rs_env_identity id = {.job = "job-c", .rank = 1, .world_size = 2, .host = "h", .pid = 9};
    struct rs_convert_stats st;
    CUpti_ActivityDevice5 dev;
    CUpti_ActivityMemcpy6 cp;
    CUpti_ActivityMemset4 ms;
    CUpti_Activity other = {CUPTI_ACTIVITY_KIND_OVERHEAD};
    rs_convert *c = NULL;
    uint8_t buf[RS_WIRE_MAX_FRAME_BYTES + 1];
    int lfd = t_listen_seqpacket(sock_path), afd;

    T_CHECK(lfd >= 0);
    struct rs_convert_options opts = {sock_path, fake_demangle, "train_step", 0};
    T_OK(rs_convert_new(&id, &opts, &c));
    rs_convert_count_dropped(c, 3); /* before the connection exists: kept and sent later */
    /* NVTX: ProfilerStep#7 [100, 900], a configured "train_step" range, an unrelated range and an
     * END without a START; step markers may come before any GPU record. */
    CUpti_ActivityMarker2 m[] = {
        mark_start(100, 5, "ProfilerStep#7"),
        mark_start(150, 6, "forward"),
        mark_end(800, 6),
        mark_end(900, 5),
        mark_end(950, 77),
        mark_start(1000, 8, "train_step"),
        mark_end(1900, 8),
        /* the same under PyTorch's emit_nvtx(), which appends ", op_id = N" and more; names that
         * only begin like a step range are none */
        mark_start(2000, 9, "ProfilerStep#9, op_id = 31"),
        mark_end(2900, 9),
        mark_start(3000, 10, "train_step, op_id = 4, sizes = []"),
        mark_end(3900, 10),
        mark_start(4000, 11, "train_steps"),
        mark_end(4100, 11),
        mark_start(4200, 12, "ProfilerStep#12x"),
        mark_end(4300, 12),
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        rs_convert_record(c, (CUpti_Activity *)&m[i]);
    memset(&dev, 0, sizeof dev);
    dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    dev.id = 1;
    for (int i = 0; i < 16; i++)
        dev.uuid.bytes[i] = (char)(0x10 + i);
    rs_convert_record(c, (CUpti_Activity *)&dev);
    CUpti_ActivityKernel10 k1 = kernel("_Z4gemmv", 1000, 2000, 7),
                           a1 = kernel(nccl, 2000, 5000, 13), a2 = kernel(nccl, 6000, 7000, 13),
                           a3 = kernel(nccl, 6000, 9000, 14), untimed = kernel("_Z4gemmv", 0, 0, 7);
    rs_convert_record(c, (CUpti_Activity *)&k1);
    rs_convert_record(c, (CUpti_Activity *)&a1);
    rs_convert_record(c, (CUpti_Activity *)&a2);
    rs_convert_record(c, (CUpti_Activity *)&a3);
    rs_convert_record(c, (CUpti_Activity *)&untimed);
    cp = htod_copy(3000, 3500, 4096, 0);
    rs_convert_record(c, (CUpti_Activity *)&cp);
    memset(&ms, 0, sizeof ms);
    ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    ms.bytes = 64;
    ms.start = 3600;
    ms.end = 3700;
    rs_convert_record(c, (CUpti_Activity *)&ms);
    /* host synchronizations: copy records of the sync kinds; an unknown type is not converted */
    CUpti_ActivitySynchronization2 sy[3] = {
        sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 3800, 7),
        sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 3900,
                    CUPTI_SYNCHRONIZATION_INVALID_VALUE),
        sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN, 4000, 0)};
    for (int i = 0; i < 3; i++)
        rs_convert_record(c, (CUpti_Activity *)&sy[i]);
    /* ... or driver-API records of the synchronizing calls (RANKSCOPE_SYNC=api) */
    CUpti_ActivityAPI api[2] = {
        api_record(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, 4100, 4180),
        api_record(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, 4200, 4280)}; /* not enabled: skipped */
    for (int i = 0; i < 2; i++)
        rs_convert_record(c, (CUpti_Activity *)&api[i]);
    rs_convert_record(c, &other);
    T_EQ(rs_convert_device(c), 1); /* of the latest kernel */
    /* PC-sampling counts (pcsampling.c): the function name is demangled like kernel names */
    rs_convert_stall(c, "_Z4gemmv", "smsp__pcsamp_warps_issue_stalled_long_scoreboard", 0x1a0, 42,
                     0x1234567890abcdefull);
    rs_convert_stall(c, NULL, "x", 0, 1, 0); /* no name: dropped and counted */

    rs_convert_get_stats(c, &st);
    T_EQ(st.stalls, 1);
    T_EQ(st.kernels, 1);
    T_EQ(st.collectives, 3);
    T_EQ(st.memcpys, 1);
    T_EQ(st.memsets, 1);
    T_EQ(st.syncs, 3);
    T_EQ(st.untimed, 1);
    T_EQ(st.other, 3);
    T_EQ(st.cupti_dropped, 4);
    T_EQ(st.steps, 4);

    struct rs_clock_pair clock = {5, 6};
    T_CHECK(!rs_convert_check_clock(c, &clock)); /* 1 ns apart: the same clock */
    struct rs_clock_pair tsc = {123456789, 1790000000000000000ull};
    T_CHECK(rs_convert_check_clock(c, &tsc)); /* a TSC-like clock: reported once */
    T_CHECK(!rs_convert_check_clock(c, &tsc));
    T_OK(rs_convert_flush(c, &clock, false));
    afd = accept(lfd, NULL, NULL);
    ssize_t n = recv(afd, buf, sizeof buf, MSG_DONTWAIT);
    rs_wire_rank_frame *f = NULL;
    T_CHECK(n > 0 && rs_wire_rank_frame_decode(buf, (size_t)n, sizeof buf, &f) == 0);
    if (f) {
        const struct rs_rank_batch *b = rs_wire_rank_frame_batch(f);
        T_CHECK(strcmp(b->identity.gpu_uuid, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f") == 0);
        T_CHECK(strcmp(b->identity.job, "job-c") == 0);
        T_EQ(b->identity.rank, 1);
        T_EQ(b->n_kernels, 1);
        T_CHECK(strcmp(b->strings[b->kernels[0].name_id], "gemm()") == 0);
        T_EQ(b->n_collectives, 3);
        T_EQ(b->collectives[0].op, RS_COLL_ALLREDUCE);
        T_EQ(b->collectives[0].seq, 0);
        T_EQ(b->collectives[1].seq, 1); /* second AllReduce on stream 13 */
        T_EQ(b->collectives[2].seq, 0); /* first on stream 14 */
        T_CHECK(b->collectives[0].comm_hash != b->collectives[2].comm_hash);
        T_CHECK(!b->collectives[0].seq_exact);
        T_EQ(b->n_memcpys, 5);
        T_EQ(b->memcpys[0].kind, RS_COPY_HTOD);
        T_EQ(b->memcpys[1].kind, RS_COPY_MEMSET);
        T_CHECK(b->n_memcpys == 5 && b->memcpys[2].kind == RS_SYNC_STREAM &&
                b->memcpys[2].stream == 7 && b->memcpys[2].start_ns == 3800 &&
                b->memcpys[2].end_ns == 3850 && b->memcpys[2].bytes == 0 &&
                b->memcpys[3].kind == RS_SYNC_CONTEXT);
        T_CHECK(b->n_memcpys == 5 && b->memcpys[4].kind == RS_SYNC_STREAM &&
                b->memcpys[4].end_ns - b->memcpys[4].start_ns == 80);
        T_EQ(b->dropped_records, 4);
        T_EQ(b->n_stalls, 1);
        T_CHECK(b->n_stalls == 1 &&
                strcmp(b->strings[b->stalls[0].kernel_name_id], "gemm()") == 0 &&
                strcmp(b->strings[b->stalls[0].reason_id],
                       "smsp__pcsamp_warps_issue_stalled_long_scoreboard") == 0 &&
                b->stalls[0].count == 42 && b->stalls[0].pc_offset == 0x1a0 &&
                b->stalls[0].cubin_crc == 0x90abcdefu);
        T_EQ(b->clock.source_ns, 5);
        T_EQ(b->collector_flags, RS_COLLECTOR_CLOCK_REPLACED);
        T_CHECK(strstr(b->collector_status, "CLOCK_REALTIME") != NULL);
        T_EQ(b->n_steps, 4);
        T_CHECK(b->n_steps == 4 && b->steps[0].step == 7 && b->steps[0].start_ns == 100 &&
                b->steps[0].end_ns == 900);
        T_CHECK(b->n_steps == 4 && b->steps[1].step == 0 && b->steps[1].end_ns == 1900);
        T_CHECK(b->n_steps == 4 && b->steps[2].step == 9 && b->steps[2].start_ns == 2000);
        T_CHECK(b->n_steps == 4 && b->steps[3].step == 1 && b->steps[3].end_ns == 3900);
    }
    rs_wire_rank_frame_free(f);
    rs_convert_free(c);
    close(afd);
    close(lfd);
    unlink(sock_path);
}

static void
launcher_sends_nothing(void)
{
    struct rs_env_identity id = {.job = "job-l", .world_size = 1, .host = "h", .pid = 1};
    struct rs_clock_pair clock = {0, 0};
    rs_convert *c = NULL;
    int lfd = t_listen_seqpacket(sock_path);

    struct rs_convert_options opts = {sock_path, NULL, NULL, 0};
    T_OK(rs_convert_new(&id, &opts, &c));
    T_OK(rs_convert_flush(c, &clock, false));
    struct timeval tv = {0, 100000};
    setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    T_CHECK(accept(lfd, NULL, NULL) < 0); /* no connection was ever made */
    rs_convert_free(c);
    close(lfd);
    unlink(sock_path);
}

/* Every driver call that RANKSCOPE_SYNC=api enables converts into a host synchronization. */
static void
enabled_sync_calls_convert(void)
{
    struct rs_env_identity id = {.job = "job-s", .world_size = 1, .host = "h", .pid = 1};
    struct rs_convert_stats st;
    CUpti_CallbackId cbid;
    rs_convert *c = NULL;
    size_t n = 0;
    int lfd = t_listen_seqpacket(sock_path);

    struct rs_convert_options opts = {sock_path, NULL, NULL, 0};
    T_OK(rs_convert_new(&id, &opts, &c));
    for (; rs_convert_sync_call(n, &cbid); n++) {
        CUpti_ActivityAPI a = api_record(cbid, 1000 + n * 100, 1050 + n * 100);
        rs_convert_record(c, (CUpti_Activity *)&a);
    }
    rs_convert_get_stats(c, &st);
    T_CHECK(n >= 4); /* event, stream wait, stream and context synchronize */
    T_EQ(st.syncs, n);
    T_EQ(st.other, 0);
    rs_convert_free(c);
    close(lfd);
    unlink(sock_path);
}

/* The frame that reached the agent socket's listener `lfd` (NULL if none). */
static rs_wire_rank_frame *
received_frame(int lfd, int *afd)
{
    static uint8_t buf[RS_WIRE_MAX_FRAME_BYTES + 1];
    rs_wire_rank_frame *f = NULL;

    if (*afd < 0)
        *afd = accept(lfd, NULL, NULL);
    ssize_t n = recv(*afd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0 || rs_wire_rank_frame_decode(buf, (size_t)n, sizeof buf, &f) != 0)
        return NULL;
    return f;
}

/* Launch waits leave as host-side records once settled: the gap before a kernel the host queued
 * late, up to its queue time; no wait before a kernel queued in time, a copy (no queue time), or
 * work on another device. With a lag of 1 us, a flush settles only what lies 1 us (plus the
 * longest interval) behind the newest start; the last flush settles the rest. */
static void
launch_waits_to_frames(void)
{
    struct rs_env_identity id = {.job = "job-w", .world_size = 1, .host = "h", .pid = 1};
    struct rs_clock_pair clock = {0, 0};
    rs_convert *c = NULL;
    int lfd = t_listen_seqpacket(sock_path), afd = -1;

    struct rs_convert_options opts = {sock_path, NULL, NULL, 1000};
    T_OK(rs_convert_new(&id, &opts, &c));
    CUpti_ActivityKernel10 k[] = {kernel("a", 1000, 1100, 7), kernel("b", 1300, 1400, 7),
                                  kernel("c", 1500, 1600, 7), kernel("d", 3000, 3100, 7),
                                  kernel("e", 5000, 5100, 8)};
    k[0].queued = 900;
    k[1].queued = 1250;      /* late: waits [1100, 1250) */
    k[2].queued = 1200;      /* in time */
    k[3].correlationId = 42; /* late, behind a copy: its launch call (below) waits [1800, 2700) */
    k[4].queued = 4000;      /* on another device: no work before it there */
    k[4].deviceId = 2;
    CUpti_ActivityMemcpy6 cp = htod_copy(1700, 1800, 0, 7);
    rs_convert_record(c, (CUpti_Activity *)&k[3]); /* out of order */
    rs_convert_record(c, (CUpti_Activity *)&k[1]);
    rs_convert_record(c, (CUpti_Activity *)&k[0]);
    rs_convert_record(c, (CUpti_Activity *)&cp);
    rs_convert_record(c, (CUpti_Activity *)&k[2]);
    rs_convert_record(c, (CUpti_Activity *)&k[4]);
    /* its launch call's record, after the kernel's; a launch call without a kernel; the sync
     * calls are host syncs as ever */
    CUpti_ActivityAPI call = api_record(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 2500, 2700);
    call.correlationId = 42;
    rs_convert_record(c, (CUpti_Activity *)&call);
    call = api_record(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, 2500, 2600);
    call.correlationId = 43;
    rs_convert_record(c, (CUpti_Activity *)&call);
    /* newest start 3000, lag 1000 + 100: settled before 1900, the first wait only */
    T_OK(rs_convert_flush(c, &clock, false));
    rs_wire_rank_frame *f = received_frame(lfd, &afd);
    T_CHECK(f != NULL);
    if (f) {
        const struct rs_rank_batch *b = rs_wire_rank_frame_batch(f);
        size_t waits = 0;
        for (uint32_t i = 0; i < b->n_memcpys; i++)
            if (b->memcpys[i].kind == RS_LAUNCH_WAIT) {
                waits++;
                T_CHECK(b->memcpys[i].start_ns == 1100 && b->memcpys[i].end_ns == 1250 &&
                        b->memcpys[i].stream == 7 && b->memcpys[i].bytes == 0);
            }
        T_EQ(waits, 1);
    }
    rs_wire_rank_frame_free(f);
    T_OK(rs_convert_flush(c, &clock, true));
    f = received_frame(lfd, &afd);
    T_CHECK(f != NULL);
    if (f) {
        const struct rs_rank_batch *b = rs_wire_rank_frame_batch(f);
        T_CHECK(b->n_memcpys == 1 && b->memcpys[0].kind == RS_LAUNCH_WAIT &&
                b->memcpys[0].start_ns == 1800 && b->memcpys[0].end_ns == 2700);
    }
    rs_wire_rank_frame_free(f);
    struct rs_convert_stats st;
    rs_convert_get_stats(c, &st);
    T_EQ(st.launch_wait.waits, 2);
    T_EQ(st.launch_wait.wait_ns, 150 + 900);
    T_EQ(st.launch_wait.unqueued, 1); /* the copy */
    T_EQ(st.launch_calls, 2);
    T_EQ(st.other, 0);
    rs_convert_free(c);
    close(afd);
    close(lfd);
    unlink(sock_path);
}

/* The last status frame of what reached `lfd`: its flags and text (into text). */
static uint32_t
last_status(int lfd, int *afd, char *text, size_t cap)
{
    rs_wire_rank_frame *f;
    uint32_t flags = UINT32_MAX;

    while ((f = received_frame(lfd, afd))) {
        const struct rs_rank_batch *b = rs_wire_rank_frame_batch(f);
        flags = b->collector_flags;
        snprintf(text, cap, "%s", b->collector_status ? b->collector_status : "");
        rs_wire_rank_frame_free(f);
    }
    return flags;
}

/* Between kernel windows a rank sends only the plugin's records: its GPU is the one its
 * communicator was initialised on (rs_plugin_op.device), named by CUPTI's DEVICE record, so that
 * a hang verdict names the GPU of a rank that never traced a kernel — also when its first
 * operation is the one that hangs (`hung`). */
static void
plugin_names_the_gpu_when(bool hung)
{
    struct rs_env_identity id = {.job = "job-g", .world_size = 2, .rank = 1, .host = "h", .pid = 1};
    struct rs_clock_pair clock = {0, 0};
    struct rs_plugin_op op = {.comm_hash = 0xabcull, .comm_rank = 1, .comm_size = 2,
                              .op = RS_COLL_ALLREDUCE, .seq = 5, .seq_exact = true,
                              .func = "AllReduce", .algo = "RING", .proto = "LL",
                              .enqueue_ns = 1000000000ull, .enqueued_ns = 1000001000ull,
                              .device = 2};
    CUpti_ActivityDevice5 dev[2];
    rs_convert *c = NULL;
    int lfd = t_listen_seqpacket(sock_path), afd = -1;
    char uuid[64] = "";

    struct rs_convert_options opts = {sock_path, NULL, NULL, 0};
    T_OK(rs_convert_new(&id, &opts, &c));
    memset(dev, 0, sizeof dev);
    for (int d = 0; d < 2; d++) { /* the process sees two GPUs; the communicator is on the second */
        dev[d].kind = CUPTI_ACTIVITY_KIND_DEVICE;
        dev[d].id = (uint32_t)d + 1;
        for (int i = 0; i < 16; i++)
            dev[d].uuid.bytes[i] = (char)(0x10 * (d + 1) + i);
        rs_convert_record(c, (CUpti_Activity *)&dev[d]);
    }
    if (hung) { /* its first operation: in flight, never finished */
        rs_convert_in_flight_begin(c);
        rs_convert_in_flight(c, &op, 3000000000ull);
        rs_convert_in_flight_end(c);
    } else {
        rs_convert_plugin_op(c, &op);
    }
    T_OK(rs_convert_flush(c, &clock, false));
    rs_wire_rank_frame *f;
    while ((f = received_frame(lfd, &afd))) {
        const struct rs_rank_batch *b = rs_wire_rank_frame_batch(f);
        if (b->identity.gpu_uuid && b->identity.gpu_uuid[0])
            snprintf(uuid, sizeof uuid, "%s", b->identity.gpu_uuid);
        rs_wire_rank_frame_free(f);
    }
    T_CHECK(strcmp(uuid, "GPU-20212223-2425-2627-2829-2a2b2c2d2e2f") == 0);
    rs_convert_free(c);
    close(afd);
    close(lfd);
    unlink(sock_path);
}

static void
plugin_names_the_gpu(void)
{
    plugin_names_the_gpu_when(false);
}

static void
plugin_names_the_gpu_of_a_hang(void)
{
    plugin_names_the_gpu_when(true);
}

/* While an NCCL operation is in flight past the hang limit its text is what the collector says,
 * refreshed at each drain, also when a report comes meanwhile (the report used to replace it
 * while the in-flight flag stayed); once it completes, the report's text is said. */
static void
in_flight_text_stays_until_cleared(void)
{
    struct rs_env_identity id = {.job = "job-h", .world_size = 1, .host = "h", .pid = 1};
    struct rs_clock_pair clock = {0, 0};
    struct rs_plugin_op op = {.comm_hash = 0xabcull, .comm_size = 1, .op = RS_COLL_ALLREDUCE,
                              .seq = 5, .func = "AllReduce", .algo = "", .proto = "",
                              .enqueue_ns = 1000000000ull};
    rs_convert *c = NULL;
    int lfd = t_listen_seqpacket(sock_path), afd = -1;
    char text[512];

    struct rs_convert_options opts = {sock_path, NULL, NULL, 0};
    T_OK(rs_convert_new(&id, &opts, &c));
    rs_convert_in_flight_begin(c);
    rs_convert_in_flight(c, &op, 3000000000ull); /* 2 s in flight */
    rs_convert_in_flight_end(c);
    T_OK(rs_convert_flush(c, &clock, false));
    T_CHECK(last_status(lfd, &afd, text, sizeof text) & RS_COLLECTOR_IN_FLIGHT);
    T_CHECK(strstr(text, "AllReduce") != NULL);
    rs_convert_report(c, RS_COLLECTOR_CLOCK_REPLACED, "clock replaced");
    T_OK(rs_convert_flush(c, &clock, false));
    uint32_t flags = last_status(lfd, &afd, text, sizeof text);
    T_CHECK(flags & RS_COLLECTOR_IN_FLIGHT && flags & RS_COLLECTOR_CLOCK_REPLACED);
    T_CHECK(strstr(text, "AllReduce") != NULL); /* still the in-flight text */
    rs_convert_in_flight_begin(c);
    rs_convert_in_flight(c, &op, 5000000000ull); /* 4 s now: refreshed */
    rs_convert_in_flight_end(c);
    T_OK(rs_convert_flush(c, &clock, false));
    last_status(lfd, &afd, text, sizeof text);
    struct rs_in_flight f;
    T_CHECK(rs_in_flight_parse(text, &f) == 0 && f.for_ms == 4000 && f.seq == 5);
    rs_convert_in_flight_begin(c); /* it completed */
    rs_convert_in_flight_end(c);
    T_OK(rs_convert_flush(c, &clock, false));
    flags = last_status(lfd, &afd, text, sizeof text);
    T_EQ(flags, RS_COLLECTOR_CLOCK_REPLACED);
    T_CHECK(strcmp(text, "clock replaced") == 0);
    rs_convert_free(c);
    close(afd);
    close(lfd);
    unlink(sock_path);
}

int
main(void)
{
    snprintf(sock_path, sizeof sock_path, "/tmp/rs-convert-test-%d.sock", (int)getpid());
    T_RUN(records_to_frames);
    T_RUN(launcher_sends_nothing);
    T_RUN(enabled_sync_calls_convert);
    T_RUN(launch_waits_to_frames);
    T_RUN(in_flight_text_stays_until_cleared);
    T_RUN(plugin_names_the_gpu);
    T_RUN(plugin_names_the_gpu_of_a_hang);
    return T_DONE("collector/convert");
}
