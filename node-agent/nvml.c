/* NVML through dlopen (see nvml.h). The declarations below are the few NVML ABI facts the agent
 * relies on (function signatures, enum values, struct layouts of NVML's public API); no NVIDIA
 * header is needed to build. */
#include "node-agent/nvml.h"

#include "common/clock.h"
#include "common/error.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;      /* nvmlReturn_t */
typedef void *nvml_device; /* nvmlDevice_t */
typedef void *nvml_events; /* nvmlEventSet_t */

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_TIMEOUT 10
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0
#define NVML_MEMORY_ERROR_CORRECTED 0
#define NVML_MEMORY_ERROR_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_EVENT_XID 0x8ull
#define NVML_NVLINK_MAX_LINKS 18u
#define NVML_NVLINK_COUNTERS 4u /* DL replay, DL recovery, DL CRC flit, DL CRC data */
#define NVML_UUID_BUFFER 96u

struct nvml_utilization {
    unsigned gpu, memory;
};
struct nvml_memory {
    unsigned long long total, free, used;
};
/* nvmlMemory_v2_t: `used` without the memory the driver reserves (which v1 counts as used, and
 * nvidia-smi shows apart, as "Reserved") */
struct nvml_memory_v2 {
    unsigned version; /* sizeof | 2 << 24 */
    unsigned long long total, reserved, free, used;
};
struct nvml_violation {
    unsigned long long reference_time, violation_time; /* violation_time in ns */
};
/* nvmlEventData_t (v2 adds the two instance ids; the v1 call writes only the first fields) */
struct nvml_event_data {
    nvml_device device;
    unsigned long long type, data;
    unsigned gpu_instance, compute_instance;
};

/* NVML's perf policies whose violation times become the *_violation_ns counters. */
enum {
    POLICY_POWER = 0,
    POLICY_THERMAL = 1,
    POLICY_SYNC_BOOST = 2,
    POLICY_BOARD = 3,
    POLICY_RELIABILITY = 5
};

/* The functions, each looked up under its first name that the library exports (newer names
 * first). A NULL pointer is a missing function: its field group is left out. */
#define NVML_FUNCTIONS(X)                                                                          \
    X(init, nvml_ret, (void), "nvmlInit_v2", "nvmlInit")                                           \
    X(shutdown, nvml_ret, (void), "nvmlShutdown", NULL)                                            \
    X(error_string, const char *, (nvml_ret), "nvmlErrorString", NULL)                             \
    X(count, nvml_ret, (unsigned *), "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")                \
    X(handle, nvml_ret, (unsigned, nvml_device *), "nvmlDeviceGetHandleByIndex_v2",                \
      "nvmlDeviceGetHandleByIndex")                                                                \
    X(uuid, nvml_ret, (nvml_device, char *, unsigned), "nvmlDeviceGetUUID", NULL)                  \
    X(clock, nvml_ret, (nvml_device, int, unsigned *), "nvmlDeviceGetClockInfo", NULL)             \
    X(max_clock, nvml_ret, (nvml_device, int, unsigned *), "nvmlDeviceGetMaxClockInfo", NULL)      \
    X(reasons, nvml_ret, (nvml_device, unsigned long long *),                                      \
      "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")       \
    X(violation, nvml_ret, (nvml_device, int, struct nvml_violation *),                            \
      "nvmlDeviceGetViolationStatus", NULL)                                                        \
    X(power, nvml_ret, (nvml_device, unsigned *), "nvmlDeviceGetPowerUsage", NULL)                 \
    X(power_limit, nvml_ret, (nvml_device, unsigned *), "nvmlDeviceGetEnforcedPowerLimit", NULL)   \
    X(temperature, nvml_ret, (nvml_device, int, unsigned *), "nvmlDeviceGetTemperature", NULL)     \
    X(utilization, nvml_ret, (nvml_device, struct nvml_utilization *),                             \
      "nvmlDeviceGetUtilizationRates", NULL)                                                       \
    X(memory, nvml_ret, (nvml_device, struct nvml_memory *), "nvmlDeviceGetMemoryInfo", NULL)      \
    X(memory_v2, nvml_ret, (nvml_device, struct nvml_memory_v2 *), "nvmlDeviceGetMemoryInfo_v2",   \
      NULL)                                                                                        \
    X(ecc, nvml_ret, (nvml_device, int, int, unsigned long long *), "nvmlDeviceGetTotalEccErrors", \
      NULL)                                                                                        \
    X(remapped, nvml_ret, (nvml_device, unsigned *, unsigned *, unsigned *, unsigned *),           \
      "nvmlDeviceGetRemappedRows", NULL)                                                           \
    X(pcie_gen, nvml_ret, (nvml_device, unsigned *), "nvmlDeviceGetCurrPcieLinkGeneration", NULL)  \
    X(pcie_gen_max, nvml_ret, (nvml_device, unsigned *), "nvmlDeviceGetMaxPcieLinkGeneration",     \
      NULL)                                                                                        \
    X(pcie_width, nvml_ret, (nvml_device, unsigned *), "nvmlDeviceGetCurrPcieLinkWidth", NULL)     \
    X(pcie_width_max, nvml_ret, (nvml_device, unsigned *), "nvmlDeviceGetMaxPcieLinkWidth", NULL)  \
    X(pcie_replay, nvml_ret, (nvml_device, unsigned *), "nvmlDeviceGetPcieReplayCounter", NULL)    \
    X(nvlink_state, nvml_ret, (nvml_device, unsigned, int *), "nvmlDeviceGetNvLinkState", NULL)    \
    X(nvlink_errors, nvml_ret, (nvml_device, unsigned, int, unsigned long long *),                 \
      "nvmlDeviceGetNvLinkErrorCounter", NULL)                                                     \
    X(event_set_create, nvml_ret, (nvml_events *), "nvmlEventSetCreate", NULL)                     \
    X(register_events, nvml_ret, (nvml_device, unsigned long long, nvml_events),                   \
      "nvmlDeviceRegisterEvents", NULL)                                                            \
    X(event_wait, nvml_ret, (nvml_events, struct nvml_event_data *, unsigned),                     \
      "nvmlEventSetWait_v2", "nvmlEventSetWait")                                                   \
    X(event_set_free, nvml_ret, (nvml_events), "nvmlEventSetFree", NULL)

/* Indexes of the functions, for their time (rs_nvml_function_times). */
enum fn_index {
#define INDEX(field, ret, args, name, old) FN_##field,
    NVML_FUNCTIONS(INDEX)
#undef INDEX
        FN_COUNT
};
static const char *const fn_names[FN_COUNT] = {
#define NAME(field, ret, args, name, old) name,
    NVML_FUNCTIONS(NAME)
#undef NAME
};

/* Some queries cost far more than the others — on an H100 with driver 580 (docs/BENCHMARKS.md
 * "GPU telemetry"): the maximum clocks 1.5 ms a call, a violation counter 0.76 ms, the PCIe replay
 * counter 0.34 ms, against 2 - 20 us for clocks, power or temperature. What does not change (the
 * maxima) or changes slowly (counters, whose growth over a window does not need every reading) is
 * read every so many readings; a reading without it leaves its group out (present bits), and
 * readers take figures from the readings that have them. */
#define EVERY_VIOLATIONS 5 /* power and thermal violation counters */
#define EVERY_SLOW                                                                                 \
    10 /* sync-boost, board and reliability violations, PCIe replays,                              \
          remapped rows */
#define EVERY_MAX_CLOCKS 300

struct gpu {
    nvml_device handle;
    char uuid[NVML_UUID_BUFFER];
    uint32_t links; /* bit i: NVLink i answered its state at open */
    uint32_t xids, last_xid;
    uint64_t readings;
    bool have_max;
    unsigned sm_max, mem_max; /* read every EVERY_MAX_CLOCKS readings */
};

struct rs_nvml {
    void *lib;
    struct {
#define DECLARE(field, ret, args, name, old) ret(*field) args;
        NVML_FUNCTIONS(DECLARE)
#undef DECLARE
    } fn;
    struct gpu gpus[RS_NVML_MAX_GPUS];
    unsigned n_gpus;
    nvml_events events; /* NULL: no XID events */
    struct rs_nvml_stats stats;
    uint64_t t0; /* start of the call being timed */
    uint64_t fn_ns[FN_COUNT], fn_calls[FN_COUNT];
};

static void *
lookup(void *lib, const char *name, const char *old)
{
    void *p = dlsym(lib, name);

    return p || !old ? p : dlsym(lib, old);
}

/* True when NVML answered; counts what it did not. */
static bool
ok(rs_nvml *n, nvml_ret r)
{
    if (r == NVML_SUCCESS)
        return true;
    if (r == NVML_ERROR_NOT_SUPPORTED)
        n->stats.unsupported++;
    else
        n->stats.field_errors++;
    return false;
}

static const char *
nvml_error(const rs_nvml *n, nvml_ret r)
{
    const char *s = n->fn.error_string ? n->fn.error_string(r) : NULL;
    return s ? s : "NVML error";
}

/* The links that answer their state now (the set is fixed by the hardware). */
static uint32_t
probe_links(rs_nvml *n, nvml_device d)
{
    uint32_t links = 0;
    int state;

    for (unsigned l = 0; n->fn.nvlink_state && l < NVML_NVLINK_MAX_LINKS; l++)
        if (n->fn.nvlink_state(d, l, &state) == NVML_SUCCESS)
            links |= 1u << l;
    return links;
}

static void
register_xids(rs_nvml *n)
{
    bool any = false;

    if (!n->fn.event_set_create || !n->fn.register_events || !n->fn.event_wait ||
        n->fn.event_set_create(&n->events) != NVML_SUCCESS) {
        n->events = NULL;
        return;
    }
    for (unsigned i = 0; i < n->n_gpus; i++)
        if (ok(n, n->fn.register_events(n->gpus[i].handle, NVML_EVENT_XID, n->events)))
            any = true;
    if (!any) {
        if (n->fn.event_set_free)
            n->fn.event_set_free(n->events);
        n->events = NULL;
    }
}

int
rs_nvml_open(const char *library, rs_nvml **out, char *why, size_t why_len)
{
    rs_nvml *n = calloc(1, sizeof *n);
    unsigned count = 0;
    nvml_ret r;
    int rc;

    if (!n)
        return -ENOMEM;
    if (!(n->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL))) {
        const char *e = dlerror();
        snprintf(why, why_len, "%s", e ? e : library);
        rc = RS_E_NOT_FOUND;
        goto fail;
    }
#define LOOKUP(field, ret, args, name, old)                                                        \
    n->fn.field = (ret(*) args)lookup(n->lib, name, old);                                          \
    n->stats.missing_functions += n->fn.field == NULL;
    NVML_FUNCTIONS(LOOKUP)
#undef LOOKUP
    if (!n->fn.init || !n->fn.count || !n->fn.handle || !n->fn.uuid) {
        snprintf(why, why_len,
                 "%s lacks nvmlInit, nvmlDeviceGetCount, "
                 "nvmlDeviceGetHandleByIndex or nvmlDeviceGetUUID",
                 library);
        rc = RS_E_NOT_FOUND;
        goto fail;
    }
    if ((r = n->fn.init()) != NVML_SUCCESS) {
        snprintf(why, why_len, "nvmlInit: %s", nvml_error(n, r));
        rc = -ENODEV;
        goto fail;
    }
    if ((r = n->fn.count(&count)) != NVML_SUCCESS) {
        snprintf(why, why_len, "nvmlDeviceGetCount: %s", nvml_error(n, r));
        if (n->fn.shutdown)
            n->fn.shutdown();
        rc = -ENODEV;
        goto fail;
    }
    for (unsigned i = 0; i < count && n->n_gpus < RS_NVML_MAX_GPUS; i++) {
        struct gpu *g = &n->gpus[n->n_gpus];
        if (!ok(n, n->fn.handle(i, &g->handle)) ||
            !ok(n, n->fn.uuid(g->handle, g->uuid, sizeof g->uuid)))
            continue;
        g->uuid[sizeof g->uuid - 1] = '\0';
        if (!rs_wire_gpu_uuid_valid(g->uuid))
            continue; /* nothing the server could key it by */
        g->links = probe_links(n, g->handle);
        n->n_gpus++;
    }
    register_xids(n);
    *out = n;
    return 0;
fail:
    if (n->lib)
        dlclose(n->lib);
    free(n);
    return rc;
}

unsigned
rs_nvml_gpu_count(const rs_nvml *n)
{
    return n->n_gpus;
}

const char *
rs_nvml_gpu_uuid(const rs_nvml *n, unsigned i)
{
    return n->gpus[i].uuid;
}

static nvml_ret
timed(rs_nvml *n, enum fn_index i, nvml_ret r)
{
    n->fn_ns[i] += rs_clock_mono_ns() - n->t0;
    n->fn_calls[i]++;
    return r;
}

/* Calls fn.f(args), timed, when the library has f; false when it has not (the function was
 * counted missing at open) or NVML answered an error (counted). */
#define CALL(n, f, ...)                                                                            \
    ((n)->fn.f &&                                                                                  \
     ok((n), ((n)->t0 = rs_clock_mono_ns(), timed((n), FN_##f, (n)->fn.f(__VA_ARGS__)))))

static void
read_clocks(rs_nvml *n, struct gpu *g, struct rs_gpu_sample *s)
{
    nvml_device d = g->handle;
    unsigned v, sm_max, mem_max;
    unsigned long long reasons;

    /* clocks past 16 bits are no hardware's: left out (the wire refuses them, wire.c) */
    if (g->readings % EVERY_MAX_CLOCKS == 0 && CALL(n, max_clock, d, NVML_CLOCK_SM, &sm_max) &&
        CALL(n, max_clock, d, NVML_CLOCK_MEM, &mem_max) && sm_max <= UINT16_MAX &&
        mem_max <= UINT16_MAX) {
        g->sm_max = sm_max;
        g->mem_max = mem_max;
        g->have_max = true;
    }
    if (g->have_max) { /* the maxima are the board's: the latest read stands for each reading */
        s->sm_clock_max_mhz = g->sm_max;
        s->mem_clock_max_mhz = g->mem_max;
        s->present |= RS_GPU_SM_CLOCK_MAX | RS_GPU_MEM_CLOCK_MAX;
    }
    if (CALL(n, clock, d, NVML_CLOCK_SM, &v) && v <= UINT16_MAX)
        s->sm_clock_mhz = v, s->present |= RS_GPU_SM_CLOCK;
    if (CALL(n, clock, d, NVML_CLOCK_MEM, &v) && v <= UINT16_MAX)
        s->mem_clock_mhz = v, s->present |= RS_GPU_MEM_CLOCK;
    if (CALL(n, reasons, d, &reasons))
        s->clock_reasons = reasons, s->present |= RS_GPU_CLOCK_REASONS;
}

static void
read_violations(rs_nvml *n, const struct gpu *g, struct rs_gpu_sample *s)
{
    nvml_device d = g->handle;
    static const int policies[] = {POLICY_POWER, POLICY_THERMAL, POLICY_SYNC_BOOST, POLICY_BOARD,
                                   POLICY_RELIABILITY};
    uint64_t *dst[] = {&s->power_violation_ns, &s->thermal_violation_ns,
                       &s->sync_boost_violation_ns, &s->board_violation_ns,
                       &s->reliability_violation_ns};
    bool any = false;

    if (g->readings % EVERY_VIOLATIONS != 0)
        return;
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
        struct nvml_violation v;
        if (p >= 2 && g->readings % EVERY_SLOW != 0)
            break; /* power and thermal first, the rest less often */
        if (CALL(n, violation, d, policies[p], &v)) {
            *dst[p] = v.violation_time % RS_WIRE_MAX_TIME_NS;
            any = true;
        }
    }
    if (any)
        s->present |= RS_GPU_VIOLATIONS;
}

static void
read_power_and_use(rs_nvml *n, nvml_device d, struct rs_gpu_sample *s)
{
    unsigned v;
    struct nvml_utilization u;
    struct nvml_memory m;

    if (CALL(n, power, d, &v))
        s->power_mw = v, s->present |= RS_GPU_POWER;
    if (CALL(n, power_limit, d, &v))
        s->power_limit_mw = v, s->present |= RS_GPU_POWER_LIMIT;
    if (CALL(n, temperature, d, NVML_TEMPERATURE_GPU, &v) && v <= 255)
        s->temperature_c = v, s->present |= RS_GPU_TEMPERATURE;
    if (CALL(n, utilization, d, &u) && u.gpu <= 100 && u.memory <= 100) {
        s->util_gpu_pct = u.gpu;
        s->util_mem_pct = u.memory;
        s->present |= RS_GPU_UTILIZATION;
    }
    struct nvml_memory_v2 m2 = {(unsigned)sizeof m2 | 2u << 24, 0, 0, 0, 0};
    if (n->fn.memory_v2 ? CALL(n, memory_v2, d, &m2) : false) {
        s->mem_used_bytes = m2.used;
        s->mem_total_bytes = m2.total;
        s->present |= RS_GPU_MEMORY;
    } else if (CALL(n, memory, d, &m)) {
        s->mem_used_bytes = m.used;
        s->mem_total_bytes = m.total;
        s->present |= RS_GPU_MEMORY;
    }
}

static void
read_errors(rs_nvml *n, const struct gpu *g, struct rs_gpu_sample *s)
{
    nvml_device d = g->handle;
    unsigned long long corrected, uncorrected;
    unsigned rc_rows, ru_rows, pending, failed;

    if (CALL(n, ecc, d, NVML_MEMORY_ERROR_CORRECTED, NVML_VOLATILE_ECC, &corrected) &&
        CALL(n, ecc, d, NVML_MEMORY_ERROR_UNCORRECTED, NVML_VOLATILE_ECC, &uncorrected)) {
        s->ecc_corrected = corrected;
        s->ecc_uncorrected = uncorrected;
        s->present |= RS_GPU_ECC;
    }
    if (g->readings % EVERY_SLOW == 0 &&
        CALL(n, remapped, d, &rc_rows, &ru_rows, &pending, &failed)) {
        s->remapped_correctable = rc_rows;
        s->remapped_uncorrectable = ru_rows;
        s->remap_pending = pending != 0;
        s->remap_failed = failed != 0;
        s->present |= RS_GPU_REMAPPED;
    }
}

static void
read_links(rs_nvml *n, const struct gpu *g, struct rs_gpu_sample *s)
{
    unsigned gen, gen_max, width, width_max, replay;
    uint64_t errors = 0;
    uint32_t up = 0;
    bool counted = false;

    if (CALL(n, pcie_gen, g->handle, &gen) && CALL(n, pcie_gen_max, g->handle, &gen_max) &&
        CALL(n, pcie_width, g->handle, &width) && CALL(n, pcie_width_max, g->handle, &width_max) &&
        gen <= 255 && gen_max <= 255 && width <= 255 && width_max <= 255) {
        s->pcie_gen = gen;
        s->pcie_gen_max = gen_max;
        s->pcie_width = width;
        s->pcie_width_max = width_max;
        s->present |= RS_GPU_PCIE_LINK;
    }
    if (g->readings % EVERY_SLOW == 0 && CALL(n, pcie_replay, g->handle, &replay))
        s->pcie_replay = replay, s->present |= RS_GPU_PCIE_REPLAY;
    for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
        int state;
        if (!(g->links & 1u << l) || !CALL(n, nvlink_state, g->handle, l, &state) || !state)
            continue;
        up++;
        for (int c = 0; c < (int)NVML_NVLINK_COUNTERS; c++) {
            unsigned long long v;
            if (CALL(n, nvlink_errors, g->handle, l, c, &v)) {
                errors += v;
                counted = true;
            }
        }
    }
    if (g->links && n->fn.nvlink_state) { /* at most 18 links: up fits the wire's 255 */
        s->nvlink_up = up;
        s->nvlink_errors = errors;
        if (counted || up == 0)
            s->present |= RS_GPU_NVLINK;
    }
}

void
rs_nvml_read(rs_nvml *n, unsigned i, uint64_t now_ns, struct rs_gpu_sample *s)
{
    struct gpu *g = &n->gpus[i];

    memset(s, 0, sizeof *s);
    s->uuid = g->uuid;
    s->time_ns = now_ns;
    n->stats.reads++;
    read_clocks(n, g, s);
    read_violations(n, g, s);
    read_power_and_use(n, g->handle, s);
    read_errors(n, g, s);
    read_links(n, g, s);
    g->readings++;
    if (n->events) {
        s->xid_count = g->xids;
        s->last_xid = g->last_xid;
        s->present |= RS_GPU_XID;
        g->xids = 0;
    }
}

int
rs_nvml_wait_events(rs_nvml *n, unsigned timeout_ms)
{
    struct nvml_event_data e;

    if (!n->events)
        return 0;
    memset(&e, 0, sizeof e);
    nvml_ret r = n->fn.event_wait(n->events, &e, timeout_ms);
    if (r == NVML_ERROR_TIMEOUT)
        return 1;
    if (r != NVML_SUCCESS) {
        n->stats.field_errors++;
        return 0; /* let the caller sleep: an event set that fails at once would spin */
    }
    if (!(e.type & NVML_EVENT_XID))
        return 1;
    n->stats.xids++;
    for (unsigned i = 0; i < n->n_gpus; i++)
        if (n->gpus[i].handle == e.device) {
            n->gpus[i].xids++;
            n->gpus[i].last_xid = (uint32_t)e.data;
        }
    return 1;
}

void
rs_nvml_function_times(const rs_nvml *n,
                       void (*fn)(void *arg, const char *name, uint64_t calls, uint64_t ns),
                       void *arg)
{
    for (int i = 0; i < FN_COUNT; i++)
        if (n->fn_calls[i])
            fn(arg, fn_names[i], n->fn_calls[i], n->fn_ns[i]);
}

void
rs_nvml_get_stats(const rs_nvml *n, struct rs_nvml_stats *out)
{
    *out = n->stats;
}

void
rs_nvml_close(rs_nvml *n)
{
    if (!n)
        return;
    if (n->events && n->fn.event_set_free)
        n->fn.event_set_free(n->events);
    if (n->fn.shutdown)
        n->fn.shutdown();
    dlclose(n->lib);
    free(n);
}
