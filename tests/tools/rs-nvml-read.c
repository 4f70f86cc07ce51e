/* Test tool: reads every GPU through the agent's NVML code (node-agent/nvml.h) — what the agent
 * sends — and prints the readings as JSON, with what a reading costs: `reads` readings of each GPU
 * back to back, their CPU time (this process) and wall time per GPU-reading. For the GPU machine's
 * comparison with `nvidia-smi -q` taken right after (tests/gpu/nvml.sh).
 * usage: rs-nvml-read [LIBRARY] [READS] */
#include "common/clock.h"
#include "node-agent/nvml.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t
cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
print_sample(const struct rs_gpu_sample *s)
{
    printf(
        "{\"uuid\":\"%s\",\"present\":%u,\"sm_mhz\":%u,\"sm_max_mhz\":%u,\"mem_mhz\":%u,"
        "\"mem_max_mhz\":%u,\"clock_reasons\":%" PRIu64 ",\"power_violation_ns\":%" PRIu64
        ",\"thermal_violation_ns\":%" PRIu64 ",\"power_mw\":%u,\"power_limit_mw\":%u,"
        "\"temperature_c\":%u,\"util_gpu_pct\":%u,\"util_mem_pct\":%u,\"mem_used_bytes\":%" PRIu64
        ",\"mem_total_bytes\":%" PRIu64 ",\"ecc_corrected\":%" PRIu64
        ",\"ecc_uncorrected\":%" PRIu64 ",\"remapped_correctable\":%u,"
        "\"remapped_uncorrectable\":%u,\"remap_pending\":%d,\"remap_failed\":%d,"
        "\"pcie_gen\":%u,\"pcie_gen_max\":%u,\"pcie_width\":%u,\"pcie_width_max\":%u,"
        "\"pcie_replay\":%u,\"nvlink_up\":%u,\"nvlink_errors\":%" PRIu64 ",\"xids\":%u}",
        s->uuid, s->present, s->sm_clock_mhz, s->sm_clock_max_mhz, s->mem_clock_mhz,
        s->mem_clock_max_mhz, s->clock_reasons, s->power_violation_ns, s->thermal_violation_ns,
        s->power_mw, s->power_limit_mw, s->temperature_c, s->util_gpu_pct, s->util_mem_pct,
        s->mem_used_bytes, s->mem_total_bytes, s->ecc_corrected, s->ecc_uncorrected,
        s->remapped_correctable, s->remapped_uncorrectable, s->remap_pending, s->remap_failed,
        s->pcie_gen, s->pcie_gen_max, s->pcie_width, s->pcie_width_max, s->pcie_replay,
        s->nvlink_up, s->nvlink_errors, s->xid_count);
}

static void
print_time(void *arg, const char *name, uint64_t calls, uint64_t ns)
{
    int *first = arg;
    printf("%s{\"function\":\"%s\",\"calls\":%" PRIu64 ",\"us_per_call\":%.1f}", *first ? "" : ",",
           name, calls, (double)ns / 1e3 / (double)calls);
    *first = 0;
}

int
main(int argc, char **argv)
{
    const char *lib = argc > 1 ? argv[1] : RS_NVML_DEFAULT_LIBRARY;
    int reads = argc > 2 ? atoi(argv[2]) : 100;
    char why[512];
    rs_nvml *n;
    struct rs_gpu_sample s;
    struct rs_nvml_stats st;

    int rc = rs_nvml_open(lib, &n, why, sizeof why);
    if (rc != 0) {
        fprintf(stderr, "rs-nvml-read: %s\n", why);
        return 1;
    }
    unsigned gpus = rs_nvml_gpu_count(n);
    uint64_t c0 = cpu_ns(), w0 = rs_clock_mono_ns();
    for (int k = 0; k < reads; k++)
        for (unsigned i = 0; i < gpus; i++)
            rs_nvml_read(n, i, rs_clock_realtime_ns(), &s);
    uint64_t c1 = cpu_ns(), w1 = rs_clock_mono_ns();
    rs_nvml_get_stats(n, &st);
    printf("{\"gpus\":%u,\"reads_per_gpu\":%d,\"cpu_us_per_gpu_reading\":%.1f,"
           "\"wall_us_per_gpu_reading\":%.1f,\"missing_functions\":%u,\"errors\":%" PRIu64
           ",\"unsupported\":%" PRIu64 ",\"readings\":[",
           gpus, reads, reads && gpus ? (double)(c1 - c0) / 1e3 / reads / gpus : 0,
           reads && gpus ? (double)(w1 - w0) / 1e3 / reads / gpus : 0, st.missing_functions,
           st.field_errors, st.unsupported);
    for (unsigned i = 0; i < gpus; i++) { /* the reading to compare, last */
        rs_nvml_read(n, i, rs_clock_realtime_ns(), &s);
        if (i)
            printf(",");
        print_sample(&s);
    }
    printf("],\"functions\":[");
    int first = 1;
    rs_nvml_function_times(n, print_time, &first);
    printf("]}\n");
    rs_nvml_close(n);
    return 0;
}
