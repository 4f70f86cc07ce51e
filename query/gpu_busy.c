/* Kernel busy share, tensor-core share and memory-bound share of a rank over a window (see
 * gpu_busy.h). */
#include "query/gpu_busy.h"

#include "common/error.h"
#include "query/profile.h"

#include <string.h>

bool
rs_gpu_kernel_uses_tensor_cores(const char *name)
{
    static const char *const marks[] = {"hmma",  "imma", "gmma",    "tensorop",
                                        "16816", "1688", "884gemm", "8816"};

    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (strstr(name, marks[i]))
            return true;
    return strstr(name, "xmma") && !strstr(name, "ffma");
}

bool
rs_gpu_stall_reason_is_memory(const char *reason)
{
    static const char *const parts[] = {"long_scoreboard", "lg_throttle", "mio_throttle",
                                        "tex_throttle",    "drain",       "imc_miss",
                                        "memory"};

    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr(reason, parts[i]))
            return true;
    return false;
}

/* The memory-bound share from the profile's stall samples. */
static void
memory_share(const struct rs_profile *p, struct rs_gpu_busy *out)
{
    for (size_t i = 0; i < p->n_stalls; i++) {
        out->stall_samples += p->stalls[i].samples;
        if (rs_gpu_stall_reason_is_memory(p->stalls[i].reason))
            out->memory_samples += p->stalls[i].samples;
    }
    if (out->stall_samples == 0)
        return; /* (why_no_memory was set) */
    out->memory_known = true;
    out->why_no_memory = NULL;
    out->memory_share = (double)out->memory_samples / (double)out->stall_samples;
}

int
rs_gpu_busy_of(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
               struct rs_gpu_busy *out)
{
    struct rs_profile_scope scope = {job, rank, false, t0, t1};
    struct rs_profile p;
    uint64_t all = 0, tensor = 0, nccl = 0;
    int rc = rs_profile_build(r, &scope, &p);

    *out = (struct rs_gpu_busy){0};
    out->why_unknown = "no kernel records or kernel windows of the rank in the window";
    out->why_no_memory = "no PC-sampling data in the window (PC sampling is off unless turned "
                         "on for the job)";
    if (rc == RS_E_NOT_FOUND)
        return 0;
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < p.n_items; i++) {
        if (p.items[i].kind != RS_PROFILE_KERNEL) {
            nccl += p.items[i].ns;
            continue;
        }
        all += p.items[i].ns;
        if (rs_gpu_kernel_uses_tensor_cores(p.items[i].name))
            tensor += p.items[i].ns;
    }
    /* windows have totals, not intervals: summing is what they allow (an upper bound of the
     * union, which overlapping streams make smaller), over the span of the records with
     * intervals (NCCL kernels: always raw) — a window's extent goes past the work it holds — or
     * the windows' own when there are none */
    bool summed = !p.busy_known;
    uint64_t from = summed && p.timed_t1 > p.timed_t0 ? p.timed_t0 : p.t0;
    uint64_t to = summed && p.timed_t1 > p.timed_t0 ? p.timed_t1 : p.t1;
    if (to > from && (all > 0 || p.busy_ns > 0)) {
        out->known = true;
        out->why_unknown = NULL;
        out->basis = summed ? RS_GPU_BUSY_SUMMED : RS_GPU_BUSY_UNION;
        out->busy_share = (double)(summed ? all + nccl : p.busy_ns) / (double)(to - from);
        if (out->busy_share > 1)
            out->busy_share = 1;
        out->tensor_share = all ? (double)tensor / (double)all : 0;
    }
    memory_share(&p, out);
    rs_profile_fini(&p);
    return 0;
}
