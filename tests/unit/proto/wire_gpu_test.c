/* GPU telemetry on the wire (proto/wire.c GpuSample): every field survives a round trip, a batch
 * with readings is schema version 5 and one without stays below, and readings no NVML could give
 * (no UUID, a UUID with a space, utilisation over 100 %, unknown field bits, clocks past 16 bits)
 * are refused by the encoder and the decoder alike. */
#include "common/error.h"
#include "proto/wire.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdlib.h>
#include <string.h>

static struct rs_gpu_sample
sample(const char *uuid, uint64_t t)
{
    return (struct rs_gpu_sample){.uuid = uuid,
                                  .time_ns = t,
                                  .present = RS_GPU_FIELDS_ALL,
                                  .sm_clock_mhz = 1410,
                                  .sm_clock_max_mhz = 1980,
                                  .mem_clock_mhz = 2619,
                                  .mem_clock_max_mhz = 2619,
                                  .clock_reasons = RS_GPU_REASON_SW_POWER_CAP,
                                  .power_violation_ns = 7800000000ull,
                                  .thermal_violation_ns = 1,
                                  .sync_boost_violation_ns = 2,
                                  .board_violation_ns = 3,
                                  .reliability_violation_ns = 4,
                                  .power_mw = 699000,
                                  .power_limit_mw = 700000,
                                  .temperature_c = 83,
                                  .util_gpu_pct = 98,
                                  .util_mem_pct = 40,
                                  .mem_used_bytes = 60000ull << 20,
                                  .mem_total_bytes = 81559ull << 20,
                                  .ecc_corrected = 5,
                                  .ecc_uncorrected = 6,
                                  .remapped_correctable = 7,
                                  .remapped_uncorrectable = 8,
                                  .remap_pending = true,
                                  .remap_failed = false,
                                  .pcie_gen = 4,
                                  .pcie_gen_max = 5,
                                  .pcie_width = 8,
                                  .pcie_width_max = 16,
                                  .pcie_replay = 9,
                                  .nvlink_errors = 10,
                                  .nvlink_up = 17,
                                  .xid_count = 2,
                                  .last_xid = 79};
}

static void
round_trip(void)
{
    struct rs_gpu_sample g[2] = {sample("GPU-aaaa", 1000), sample("GPU-bbbb", 2000)};
    struct rs_agent_batch b = t_agent_batch(7, 1, NULL, 0);
    rs_wire_agent_batch *d;
    uint8_t *buf;
    size_t len;

    b.gpus = g;
    b.n_gpus = 2;
    T_OK(rs_wire_agent_batch_encode(&b, &buf, &len));
    T_EQ(buf[0], 0x08); /* field 1 (schema_version) first */
    T_EQ(buf[1], 5);
    T_OK(rs_wire_agent_batch_decode(buf, len, &d));
    const struct rs_agent_batch *got = rs_wire_agent_batch_get(d);
    T_EQ(got->n_gpus, 2);
    T_CHECK(strcmp(got->gpus[1].uuid, "GPU-bbbb") == 0);
    const struct rs_gpu_sample *x = &got->gpus[0], *y = &g[0];
#define SAME(f) T_EQ(x->f, y->f);
    SAME(time_ns)
    SAME(present) SAME(sm_clock_mhz) SAME(sm_clock_max_mhz) SAME(mem_clock_mhz)
        SAME(mem_clock_max_mhz) SAME(clock_reasons) SAME(power_violation_ns)
            SAME(thermal_violation_ns) SAME(sync_boost_violation_ns) SAME(board_violation_ns)
                SAME(reliability_violation_ns) SAME(power_mw) SAME(power_limit_mw)
                    SAME(temperature_c) SAME(util_gpu_pct) SAME(util_mem_pct) SAME(mem_used_bytes)
                        SAME(mem_total_bytes) SAME(ecc_corrected) SAME(ecc_uncorrected)
                            SAME(remapped_correctable) SAME(remapped_uncorrectable)
                                SAME(remap_pending) SAME(remap_failed) SAME(pcie_gen)
                                    SAME(pcie_gen_max) SAME(pcie_width) SAME(pcie_width_max)
                                        SAME(pcie_replay) SAME(nvlink_errors) SAME(nvlink_up)
                                            SAME(xid_count) SAME(last_xid)
#undef SAME
                                                rs_wire_agent_batch_free(d);
    /* a version-4 batch cannot carry readings: an old agent's bytes are refused, not misread */
    buf[1] = 4;
    T_EQ(rs_wire_agent_batch_decode(buf, len, &d), RS_E_MALFORMED);
    free(buf);
}

static void
no_readings_no_new_version(void)
{
    struct rs_agent_batch b = t_agent_batch(7, 2, NULL, 0);
    uint8_t *buf;
    size_t len;

    T_OK(rs_wire_agent_batch_encode(&b, &buf, &len));
    T_EQ(buf[1], 1);
    free(buf);
}

static int
encode_one(struct rs_gpu_sample g)
{
    struct rs_agent_batch b = t_agent_batch(7, 3, NULL, 0);
    uint8_t *buf = NULL;
    size_t len;

    b.gpus = &g;
    b.n_gpus = 1;
    int rc = rs_wire_agent_batch_encode(&b, &buf, &len);
    free(buf);
    return rc;
}

static void
refused(void)
{
    struct rs_gpu_sample g = sample("GPU-aaaa", 1);
    char long_uuid[200];

    memset(long_uuid, 'a', sizeof long_uuid - 1);
    long_uuid[sizeof long_uuid - 1] = '\0';
    T_EQ(encode_one(g), 0);
    g.uuid = "";
    T_EQ(encode_one(g), RS_E_MALFORMED);
    g.uuid = "GPU-a b";
    T_EQ(encode_one(g), RS_E_MALFORMED);
    g.uuid = "GPU-\x1b[2J";
    T_EQ(encode_one(g), RS_E_MALFORMED);
    g.uuid = long_uuid;
    T_EQ(encode_one(g), RS_E_MALFORMED);
    g = sample("GPU-aaaa", 1);
    g.util_gpu_pct = 101;
    T_EQ(encode_one(g), RS_E_MALFORMED);
    g = sample("GPU-aaaa", 1);
    g.present = RS_GPU_FIELDS_ALL + 1;
    T_EQ(encode_one(g), RS_E_MALFORMED);
    g = sample("GPU-aaaa", 1);
    g.sm_clock_mhz = 70000;
    T_EQ(encode_one(g), RS_E_MALFORMED);
    g = sample("GPU-aaaa", 1);
    g.time_ns = RS_WIRE_MAX_TIME_NS;
    T_EQ(encode_one(g), RS_E_MALFORMED);
}

int
main(void)
{
    T_RUN(round_trip);
    T_RUN(no_readings_no_new_version);
    T_RUN(refused);
    return T_DONE("unit/proto/wire_gpu");
}
