/* Kernel busy share and tensor-core share of a rank over a window (see gpu_busy.h). */
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

int
rs_gpu_busy_of(rs_store_read *r, const char *job, uint32_t rank, uint64_t t0, uint64_t t1,
               struct rs_gpu_busy *out)
{
    struct rs_profile_scope scope = {job, rank, false, t0, t1};
    struct rs_profile p;
    uint64_t all = 0, tensor = 0;
    int rc = rs_profile_build(r, &scope, &p);

    *out = (struct rs_gpu_busy){0};
    if (rc == RS_E_NOT_FOUND)
        return 0;
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < p.n_items; i++) {
        if (p.items[i].kind != RS_PROFILE_KERNEL)
            continue;
        all += p.items[i].ns;
        if (rs_gpu_kernel_uses_tensor_cores(p.items[i].name))
            tensor += p.items[i].ns;
    }
    if (p.busy_known && p.t1 > p.t0 && (all > 0 || p.busy_ns > 0)) {
        out->known = true;
        out->busy_share = (double)p.busy_ns / (double)(p.t1 - p.t0);
        if (out->busy_share > 1)
            out->busy_share = 1;
        out->tensor_share = all ? (double)tensor / (double)all : 0;
    }
    rs_profile_fini(&p);
    return 0;
}
