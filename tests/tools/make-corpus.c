/* Writes the seed corpus of tests/fuzz/corpus/wire/ (valid requests, frames and replies); run by
 * hand when the schema changes: build/tests/tools/make-corpus tests/fuzz/corpus/wire */
#include "proto/wire.h"
#include "tests/t_batch.h"

#include <stdio.h>
#include <stdlib.h>

static void
put(const char *dir, const char *name, const void *data, size_t len)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if ((f = fopen(path, "wb"))) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

int
main(int argc, char **argv)
{
    static const char *const names[] = {"gemm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "stall"};
    struct rs_kernel_record k[2] = {{1000, 2000, 0, 7, 0, 1}, {2100, 2600, 0, 7, 0, 2}};
    struct rs_collective_record c = {2000, 9000, 1024, 99, 3, RS_COLL_ALLREDUCE, 1, 17, true};
    struct rs_memcpy_record m = {1500, 1600, 64, RS_COPY_HTOD, 7};
    struct rs_step_record s[2] = {{.step = 1, .start_ns = 900, .end_ns = 9500},
                                  {.step = 2,
                                   .start_ns = 9500,
                                   .end_ns = 20000,
                                   .measured = true,
                                   .metrics = {6000, 4000, 3000, 1500, 100, 9}}};
    struct rs_stall_record x = {16, 5, 0, 2, 1234};
    struct rs_kernel_total kt = {0, 10000, 0, 3, 2500, 1000};
    struct rs_copy_total ct = {10000, 10000, RS_COPY_DTOH, 2, 300, 200, 4096};
    struct rs_rank_batch rb = {.identity = T_IDENTITY_OF("job", 1, 1, 2, "host", "GPU-1", 42),
                               .clock = {1, 2},
                               T_RECORDS(strings, names, 3),
                               T_RECORDS(kernels, k, 2),
                               T_RECORDS(memcpys, &m, 1),
                               T_RECORDS(collectives, &c, 1),
                               T_RECORDS(steps, s, 2),
                               T_RECORDS(stalls, &x, 1),
                               .kernel_totals = &kt,
                               .n_kernel_totals = 1,
                               .copy_totals = &ct,
                               .n_copy_totals = 1,
                               .collector_flags = RS_COLLECTOR_CLOCK_REPLACED,
                               .collector_status = "clock replaced"};
    struct rs_agent_batch b = {.agent_id = 5,
                               .boot_id = 6,
                               .batch_seq = 7,
                               .hello = {.agent_id = 5,
                                         .boot_id = 6,
                                         .host = "host",
                                         .agent_version = "0.1.0",
                                         .clock = {1, 2}},
                               .ranks = &rb,
                               .n_ranks = 1,
                               .agent_dropped = 0};
    struct rs_server_reply r = {7, RS_REPLY_ACK, "", 0, {.min_flush_ms = 1000}};
    uint8_t frame[RS_WIRE_MAX_FRAME_BYTES], *req, rep[256];
    size_t len;

    if (argc != 2)
        return 2;
    if (rs_wire_agent_batch_encode(&b, &req, &len) == 0) {
        put(argv[1], "agent-batch", req, len);
        put(argv[1], "agent-batch-truncated", req, len / 2);
        free(req);
    }
    if (rs_wire_rank_batch_encode(&rb, frame, sizeof frame, &len) == 0)
        put(argv[1], "rank-frame", frame, len);
    if (rs_wire_reply_encode(&r, rep, sizeof rep, &len) == 0)
        put(argv[1], "reply", rep, len);
    /* host synchronizations: schema version 3 */
    struct rs_memcpy_record syncs[2] = {m, {1700, 1800, 0, RS_SYNC_STREAM, 7}};
    struct rs_copy_total sync_totals[2] = {ct, {10000, 10000, RS_SYNC_EVENT, 4, 900, 400, 0}};
    rb.memcpys = syncs;
    rb.n_memcpys = 2;
    rb.copy_totals = sync_totals;
    rb.n_copy_totals = 2;
    if (rs_wire_agent_batch_encode(&b, &req, &len) == 0) {
        put(argv[1], "agent-batch-sync", req, len);
        free(req);
    }
    if (rs_wire_rank_batch_encode(&rb, frame, sizeof frame, &len) == 0)
        put(argv[1], "rank-frame-sync", frame, len);
    /* GPU telemetry: schema version 5, a batch of readings alone; and the same bytes claiming
     * version 4, which cannot carry them */
    struct rs_gpu_sample g[2] = {
        {.uuid = "GPU-5a110001-0000-4000-8000-000000000002",
         .time_ns = 1000,
         .present = RS_GPU_FIELDS_ALL,
         .sm_clock_mhz = 1410,
         .sm_clock_max_mhz = 1980,
         .clock_reasons = RS_GPU_REASON_SW_POWER_CAP,
         .power_violation_ns = 780000000,
         .power_mw = 699000,
         .power_limit_mw = 700000,
         .temperature_c = 83,
         .util_gpu_pct = 98,
         .ecc_uncorrected = 2,
         .pcie_gen = 5,
         .pcie_gen_max = 5,
         .pcie_width = 8,
         .pcie_width_max = 16,
         .nvlink_up = 18,
         .xid_count = 1,
         .last_xid = 79},
        {.uuid = "GPU-b", .time_ns = 2000, .present = RS_GPU_SM_CLOCK, .sm_clock_mhz = 1980}};
    struct rs_agent_batch gb = {.agent_id = 5,
                                .boot_id = 6,
                                .batch_seq = 8,
                                .hello = {.agent_id = 5, .boot_id = 6, .host = "host",
                                          .agent_version = "0.1.0", .clock = {1, 2}},
                                .gpus = g,
                                .n_gpus = 2};
    if (rs_wire_agent_batch_encode(&gb, &req, &len) == 0) {
        put(argv[1], "agent-batch-gpus", req, len);
        req[1] = 4;
        put(argv[1], "agent-batch-gpus-v4", req, len);
        free(req);
    }
    put(argv[1], "empty", "", 0);
    put(argv[1], "garbage", "\xff\xff\xff\xff\xff\x0f\x12\x34\x08\x02", 10);
    return 0;
}
