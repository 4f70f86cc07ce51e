/* Kernel-name classes for the advisor (advice_int.h): which kernels are PyTorch's unfused
 * elementwise kernels and which GEMMs run in fp32 on CUDA cores, from the names CUPTI and Kineto
 * report (seen on the GPU machine: "void at::native::vectorized_elementwise_kernel<8,
 * at::native::GeluCUDAKernelImpl...", "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_..._ffma_...",
 * "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>...", and for tensor-core
 * GEMMs "nvjet_sm90_tst_..._h_bz_...", "..._tf32..."). */
#include "query/advice_int.h"

#include <stdio.h>
#include <string.h>

static bool
has(const char *s, const char *part)
{
    return strstr(s, part) != NULL;
}

enum rs__advice_kclass
rs__advice_kernel_class(const char *name)
{
    if (has(name, "elementwise_kernel") && has(name, "at::native") && !has(name, "triton"))
        return RS__ADVICE_K_ELEMENTWISE;
    bool gemm = has(name, "gemm") || has(name, "Gemm") || has(name, "GEMM");
    bool tensor_cores = has(name, "tf32") || has(name, "bf16") || has(name, "f16") ||
                        has(name, "hmma") || has(name, "wgmma") || has(name, "i8") ||
                        has(name, "e4m3") || has(name, "e5m2");
    if (gemm && !tensor_cores &&
        (has(name, "sgemm") || has(name, "_ffma") || has(name, "simt") ||
         has(name, "f32f32_f32f32_f32")))
        return RS__ADVICE_K_GEMM_FP32;
    return RS__ADVICE_K_OTHER;
}

/* Copies [s, s + n) to out, cut to len - 1 bytes at a UTF-8 boundary. */
static void
copy_cut(const char *s, size_t n, char *out, size_t len)
{
    if (n >= len) {
        n = len - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(out, s, n);
    out[n] = '\0';
}

void
rs__advice_short_name(const char *name, char *out, size_t len)
{
    /* PyTorch's elementwise and reduce kernels name their functor after "at::native::" inside the
     * template arguments: the last such name before the first '(' or ',' after it */
    const char *p = strstr(name, "elementwise_kernel<");
    if (!p)
        p = strstr(name, "reduce_kernel<");
    if (p) {
        const char *q = p, *best = NULL;
        while ((q = strstr(q, "at::native::")) != NULL) {
            q += strlen("at::native::");
            if (strncmp(q, "(anonymous namespace)::", 23) == 0)
                q += 23;
            if (strncmp(q, "gpu_kernel_impl", 15) != 0 && strncmp(q, "func_wrapper", 12) != 0 &&
                strncmp(q, "ReduceOp", 8) != 0) {
                best = q;
                break;
            }
        }
        if (best) {
            size_t n = strcspn(best, "<(,> ");
            if (n > 0) {
                copy_cut(best, n, out, len);
                return;
            }
        }
    }
    const char *s = strncmp(name, "void ", 5) == 0 ? name + 5 : name;
    copy_cut(s, strcspn(s, "<("), out, len);
}
