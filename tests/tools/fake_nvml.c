/* A stand-in for libnvidia-ml.so.1 that the agent loads in tests (--nvml-library): GPUs, their
 * readings, failures and XID events come from the script file named by $FAKE_NVML_SCRIPT, read
 * again whenever it changes, so a test can throttle a GPU or raise an XID while the agent runs.
 * Built twice: libfake_nvml.so exports today's names; libfake_nvml_old.so (FAKE_NVML_OLD) only
 * the old names of renamed functions (nvmlInit, nvmlDeviceGetCurrentClocksThrottleReasons,
 * nvmlEventSetWait) and lacks the violation counters, remapped rows and nvmlDeviceGetMemoryInfo_v2,
 * as an old driver does.
 *
 * Script lines ('#' starts a comment):
 *   gpu UUID key=value ...   a GPU; keys: sm sm_max mem mem_max (MHz), reasons (NVML bits, hex
 *                            ok), power limit (W), temp (C), util mutil (%), used total (MiB),
 *                            ecc_c ecc_u rr_c rr_u pending failed, gen gen_max width width_max
 *                            replay, links (NVLinks up) nvlink_err, and power_frac thermal_frac
 *                            sync_frac (share of time the violation counters grow), ecc_u_per_s
 *                            (uncorrected ECC errors per second on top of ecc_u)
 *   fail FUNCTION CODE       FUNCTION answers NVML error CODE (3: not supported, 15: GPU lost)
 *   sleep FUNCTION MS        FUNCTION takes MS milliseconds (a hung driver)
 *   init_error CODE          nvmlInit fails with CODE
 *   xid UUID CODE            one XID event (each line is delivered once)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
#define OK 0
#define ERR_INVALID 2
#define ERR_NOT_SUPPORTED 3
#define ERR_NOT_FOUND 6
#define ERR_INSUFFICIENT 7
#define ERR_TIMEOUT 10
#define ERR_UNINIT 1

#define MAX_GPUS 64
#define MAX_RULES 64
#define MAX_XIDS 256

struct gpu {
    char uuid[96];
    unsigned sm, sm_max, mem, mem_max, power, limit, temp, util, mutil;
    unsigned long long reasons, used, total, ecc_c, ecc_u;
    unsigned rr_c, rr_u, pending, failed, gen, gen_max, width, width_max, replay, links;
    unsigned long long nvlink_err;
    double power_frac, thermal_frac, sync_frac;
    double ecc_u_per_s; /* uncorrected ECC errors per second since nvmlInit, on top of ecc_u */
};

struct rule {
    char fn[96];
    int code, sleep_ms;
};

struct xid {
    int gpu;
    unsigned code;
};

static struct {
    struct gpu gpus[MAX_GPUS];
    int n_gpus;
    struct rule rules[MAX_RULES];
    int n_rules;
    struct xid xids[MAX_XIDS];
    int n_xids, xids_delivered;
    int init_error;
    time_t mtime;
    long mtime_ns;
    off_t size;
    int inited;
    struct timespec t0;
} S;

static void
parse_gpu(char *rest)
{
    struct gpu *g;
    char *save, *tok;

    if (S.n_gpus == MAX_GPUS || !(tok = strtok_r(rest, " \t\n", &save)))
        return;
    g = &S.gpus[S.n_gpus++];
    memset(g, 0, sizeof *g);
    snprintf(g->uuid, sizeof g->uuid, "%s", tok);
    /* a healthy H100 SXM unless told */
    g->sm = g->sm_max = 1980;
    g->mem = g->mem_max = 2619;
    g->power = 650;
    g->limit = 700;
    g->temp = 60;
    g->util = 98;
    g->mutil = 40;
    g->used = 60000;
    g->total = 81559;
    g->gen = g->gen_max = 5;
    g->width = g->width_max = 16;
    g->links = 18;
    while ((tok = strtok_r(NULL, " \t\n", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        unsigned long long n = strtoull(v, NULL, 0);
#define U(name) else if (!strcmp(k, #name)) g->name = (unsigned)n;
#define ULL(name) else if (!strcmp(k, #name)) g->name = n;
#define D(name) else if (!strcmp(k, #name)) g->name = strtod(v, NULL);
        if (0) {
        }
        U(sm)
        U(sm_max) U(mem) U(mem_max) U(power) U(limit) U(temp) U(util) U(mutil) ULL(reasons)
            ULL(used) ULL(total) ULL(ecc_c) ULL(ecc_u) U(rr_c) U(rr_u) U(pending) U(failed) U(gen)
                U(gen_max) U(width) U(width_max) U(replay) U(links) ULL(nvlink_err) D(power_frac)
                    D(thermal_frac) D(sync_frac) D(ecc_u_per_s)
#undef U
#undef ULL
#undef D
    }
}

/* Reads the script again when it changed (size or time). */
static void
reload(void)
{
    const char *path = getenv("FAKE_NVML_SCRIPT");
    struct stat st;
    FILE *f;
    char line[1024];

    if (!path || stat(path, &st) != 0)
        return;
    if (st.st_mtim.tv_sec == S.mtime && st.st_mtim.tv_nsec == S.mtime_ns && st.st_size == S.size)
        return;
    if (!(f = fopen(path, "r")))
        return;
    S.mtime = st.st_mtim.tv_sec;
    S.mtime_ns = st.st_mtim.tv_nsec;
    S.size = st.st_size;
    S.n_gpus = S.n_rules = S.n_xids = 0;
    S.init_error = 0;
    while (fgets(line, sizeof line, f)) {
        char word[32], a[96];
        int code;
        if (sscanf(line, "%31s", word) != 1 || word[0] == '#')
            continue;
        char *rest = strstr(line, word) + strlen(word);
        if (!strcmp(word, "gpu"))
            parse_gpu(rest);
        else if (!strcmp(word, "fail") && sscanf(rest, "%95s %d", a, &code) == 2 &&
                 S.n_rules < MAX_RULES)
            snprintf(S.rules[S.n_rules].fn, 96, "%s", a), S.rules[S.n_rules].code = code,
                                                          S.rules[S.n_rules++].sleep_ms = 0;
        else if (!strcmp(word, "sleep") && sscanf(rest, "%95s %d", a, &code) == 2 &&
                 S.n_rules < MAX_RULES)
            snprintf(S.rules[S.n_rules].fn, 96, "%s", a), S.rules[S.n_rules].code = 0,
                                                          S.rules[S.n_rules++].sleep_ms = code;
        else if (!strcmp(word, "init_error") && sscanf(rest, "%d", &code) == 1)
            S.init_error = code;
        else if (!strcmp(word, "xid") && sscanf(rest, "%95s %d", a, &code) == 2 &&
                 S.n_xids < MAX_XIDS) {
            for (int i = 0; i < S.n_gpus; i++)
                if (!strcmp(S.gpus[i].uuid, a))
                    S.xids[S.n_xids++] = (struct xid){i, (unsigned)code};
        }
    }
    fclose(f);
    if (S.xids_delivered > S.n_xids)
        S.xids_delivered = S.n_xids;
}

/* The rule for `fn`: its error (0: none) after its sleep. */
static int
rule(const char *fn)
{
    reload();
    for (int i = 0; i < S.n_rules; i++)
        if (!strcmp(S.rules[i].fn, fn)) {
            if (S.rules[i].sleep_ms)
                usleep((useconds_t)S.rules[i].sleep_ms * 1000);
            if (S.rules[i].code)
                return S.rules[i].code;
        }
    return 0;
}

static struct gpu *
dev(void *d)
{
    struct gpu *g = d;
    return g >= S.gpus && g < S.gpus + S.n_gpus ? g : NULL;
}

#define ENTER(d)                                                                                   \
    int r_ = rule(__func__);                                                                       \
    if (!S.inited)                                                                                 \
        return ERR_UNINIT;                                                                         \
    if (r_)                                                                                        \
        return r_;                                                                                 \
    struct gpu *g = dev(d);                                                                        \
    if (!g)                                                                                        \
        return ERR_INVALID;

static nvmlReturn_t
init(void)
{
    int r = rule("nvmlInit");
    reload();
    if (r || S.init_error)
        return r ? r : S.init_error;
    S.inited = 1;
    clock_gettime(CLOCK_MONOTONIC, &S.t0);
    return OK;
}

#ifdef FAKE_NVML_OLD
nvmlReturn_t nvmlInit(void);
nvmlReturn_t
nvmlInit(void)
{
    return init();
}
#else
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t
nvmlInit_v2(void)
{
    return init();
}
#endif

nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t
nvmlShutdown(void)
{
    S.inited = 0;
    return OK;
}

const char *nvmlErrorString(nvmlReturn_t r);
const char *
nvmlErrorString(nvmlReturn_t r)
{
    static char text[64];
    snprintf(text, sizeof text, "fake NVML error %d", r);
    return text;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n);
nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned *n)
{
    int r = rule(__func__);
    if (!S.inited)
        return ERR_UNINIT;
    if (r)
        return r;
    *n = (unsigned)S.n_gpus;
    return OK;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d);
nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
    int r = rule(__func__);
    if (!S.inited)
        return ERR_UNINIT;
    if (r)
        return r;
    if (i >= (unsigned)S.n_gpus)
        return ERR_INVALID;
    *d = &S.gpus[i];
    return OK;
}

nvmlReturn_t nvmlDeviceGetUUID(void *d, char *buf, unsigned len);
nvmlReturn_t
nvmlDeviceGetUUID(void *d, char *buf, unsigned len)
{
    ENTER(d);
    if (strlen(g->uuid) + 1 > len)
        return ERR_INSUFFICIENT;
    memcpy(buf, g->uuid, strlen(g->uuid) + 1);
    return OK;
}

nvmlReturn_t nvmlDeviceGetClockInfo(void *d, int type, unsigned *v);
nvmlReturn_t
nvmlDeviceGetClockInfo(void *d, int type, unsigned *v)
{
    ENTER(d);
    *v = type == 1 ? g->sm : type == 2 ? g->mem : 0;
    return OK;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(void *d, int type, unsigned *v);
nvmlReturn_t
nvmlDeviceGetMaxClockInfo(void *d, int type, unsigned *v)
{
    ENTER(d);
    *v = type == 1 ? g->sm_max : type == 2 ? g->mem_max : 0;
    return OK;
}

#ifdef FAKE_NVML_OLD
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(void *d, unsigned long long *v);
nvmlReturn_t
nvmlDeviceGetCurrentClocksThrottleReasons(void *d, unsigned long long *v)
#else
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *v);
nvmlReturn_t
nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *v)
#endif
{
    ENTER(d);
    *v = g->reasons;
    return OK;
}

#ifndef FAKE_NVML_OLD
struct violation {
    unsigned long long reference, violation;
};
nvmlReturn_t nvmlDeviceGetViolationStatus(void *d, int policy, struct violation *v);
nvmlReturn_t
nvmlDeviceGetViolationStatus(void *d, int policy, struct violation *v)
{
    ENTER(d);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double ns = (double)(now.tv_sec - S.t0.tv_sec) * 1e9 + (double)(now.tv_nsec - S.t0.tv_nsec);
    double frac = policy == 0   ? g->power_frac
                  : policy == 1 ? g->thermal_frac
                  : policy == 2 ? g->sync_frac
                                : 0;
    if (policy > 5)
        return ERR_NOT_SUPPORTED;
    v->reference = (unsigned long long)(ns / 1000);
    v->violation = (unsigned long long)(ns * frac);
    return OK;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(void *d, unsigned *c, unsigned *u, unsigned *p, unsigned *f);
nvmlReturn_t
nvmlDeviceGetRemappedRows(void *d, unsigned *c, unsigned *u, unsigned *p, unsigned *f)
{
    ENTER(d);
    *c = g->rr_c;
    *u = g->rr_u;
    *p = g->pending;
    *f = g->failed;
    return OK;
}
#endif

nvmlReturn_t nvmlDeviceGetPowerUsage(void *d, unsigned *v);
nvmlReturn_t
nvmlDeviceGetPowerUsage(void *d, unsigned *v)
{
    ENTER(d);
    *v = g->power * 1000;
    return OK;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(void *d, unsigned *v);
nvmlReturn_t
nvmlDeviceGetEnforcedPowerLimit(void *d, unsigned *v)
{
    ENTER(d);
    *v = g->limit * 1000;
    return OK;
}

nvmlReturn_t nvmlDeviceGetTemperature(void *d, int sensor, unsigned *v);
nvmlReturn_t
nvmlDeviceGetTemperature(void *d, int sensor, unsigned *v)
{
    ENTER(d);
    if (sensor != 0)
        return ERR_INVALID;
    *v = g->temp;
    return OK;
}

struct utilization {
    unsigned gpu, memory;
};
nvmlReturn_t nvmlDeviceGetUtilizationRates(void *d, struct utilization *u);
nvmlReturn_t
nvmlDeviceGetUtilizationRates(void *d, struct utilization *u)
{
    ENTER(d);
    u->gpu = g->util;
    u->memory = g->mutil;
    return OK;
}

struct memory {
    unsigned long long total, free, used;
};
nvmlReturn_t nvmlDeviceGetMemoryInfo(void *d, struct memory *m);
nvmlReturn_t
nvmlDeviceGetMemoryInfo(void *d, struct memory *m)
{
    ENTER(d);
    m->total = g->total << 20;
    m->used = g->used << 20;
    m->free = m->total - m->used;
    return OK;
}

#ifndef FAKE_NVML_OLD
struct memory_v2 {
    unsigned version;
    unsigned long long total, reserved, free, used;
};
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(void *d, struct memory_v2 *m);
nvmlReturn_t
nvmlDeviceGetMemoryInfo_v2(void *d, struct memory_v2 *m)
{
    ENTER(d);
    if (m->version != ((unsigned)sizeof *m | 2u << 24))
        return ERR_INVALID; /* as NVML: the caller must say which layout it passes */
    m->total = g->total << 20;
    m->reserved = 480ull << 20;
    m->used = g->used << 20;
    m->free = m->total - m->used - m->reserved;
    return OK;
}
#endif

nvmlReturn_t nvmlDeviceGetTotalEccErrors(void *d, int type, int counter, unsigned long long *v);
nvmlReturn_t
nvmlDeviceGetTotalEccErrors(void *d, int type, int counter, unsigned long long *v)
{
    ENTER(d);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double s = (double)(now.tv_sec - S.t0.tv_sec) + (double)(now.tv_nsec - S.t0.tv_nsec) / 1e9;
    *v = type == 0 ? g->ecc_c : g->ecc_u + (unsigned long long)(s * g->ecc_u_per_s);
    return OK;
}

#define LINK_GETTER(name, field)                                                                   \
    nvmlReturn_t name(void *d, unsigned *v);                                                       \
    nvmlReturn_t name(void *d, unsigned *v)                                                        \
    {                                                                                              \
        ENTER(d);                                                                                  \
        *v = g->field;                                                                             \
        return OK;                                                                                 \
    }
LINK_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, gen)
LINK_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, gen_max)
LINK_GETTER(nvmlDeviceGetCurrPcieLinkWidth, width)
LINK_GETTER(nvmlDeviceGetMaxPcieLinkWidth, width_max)
LINK_GETTER(nvmlDeviceGetPcieReplayCounter, replay)

nvmlReturn_t nvmlDeviceGetNvLinkState(void *d, unsigned link, int *state);
nvmlReturn_t
nvmlDeviceGetNvLinkState(void *d, unsigned link, int *state)
{
    ENTER(d);
    if (link >= 18)
        return ERR_INVALID;
    *state = link < g->links;
    return OK;
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(void *d, unsigned link, int counter,
                                             unsigned long long *v);
nvmlReturn_t
nvmlDeviceGetNvLinkErrorCounter(void *d, unsigned link, int counter, unsigned long long *v)
{
    ENTER(d);
    /* all of the GPU's errors on its first link's replay counter */
    *v = link == 0 && counter == 0 ? g->nvlink_err : 0;
    return OK;
}

/* ---- events ---- */
static int event_set;

nvmlReturn_t nvmlEventSetCreate(void **set);
nvmlReturn_t
nvmlEventSetCreate(void **set)
{
    int r = rule(__func__);
    if (r)
        return r;
    *set = &event_set;
    return OK;
}

nvmlReturn_t nvmlDeviceRegisterEvents(void *d, unsigned long long types, void *set);
nvmlReturn_t
nvmlDeviceRegisterEvents(void *d, unsigned long long types, void *set)
{
    ENTER(d);
    return set == &event_set ? OK : ERR_INVALID;
}

struct event {
    void *device;
    unsigned long long type, data;
    unsigned gi, ci;
};

static nvmlReturn_t
wait_event(void *set, struct event *e, unsigned timeout_ms)
{
    int r = rule("nvmlEventSetWait");
    if (r)
        return r;
    if (set != &event_set)
        return ERR_INVALID;
    reload();
    if (S.xids_delivered < S.n_xids) {
        struct xid *x = &S.xids[S.xids_delivered++];
        e->device = &S.gpus[x->gpu];
        e->type = 0x8;
        e->data = x->code;
        return OK;
    }
    usleep((useconds_t)(timeout_ms < 50 ? timeout_ms : 50) * 1000);
    return ERR_TIMEOUT;
}

#ifdef FAKE_NVML_OLD
nvmlReturn_t nvmlEventSetWait(void *set, struct event *e, unsigned timeout_ms);
nvmlReturn_t
nvmlEventSetWait(void *set, struct event *e, unsigned timeout_ms)
{
    return wait_event(set, e, timeout_ms);
}
#else
nvmlReturn_t nvmlEventSetWait_v2(void *set, struct event *e, unsigned timeout_ms);
nvmlReturn_t
nvmlEventSetWait_v2(void *set, struct event *e, unsigned timeout_ms)
{
    return wait_event(set, e, timeout_ms);
}
#endif

nvmlReturn_t nvmlEventSetFree(void *set);
nvmlReturn_t
nvmlEventSetFree(void *set)
{
    return OK;
}
