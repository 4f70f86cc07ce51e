/* The traced step template (see profile.h). */
#include "sim/profile.h"

#define GEMM_TN                                                                                    \
    "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_"   \
    "alignc4_execute_kernel__5x_cublas"
#define GEMM_NN                                                                                    \
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_"   \
    "alignc4_execute_kernel__5x_cublas"
#define SGEMM_NT                                                                                   \
    "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nt_align1>(cutlass_80_simt_sgemm_"    \
    "256x128_8x4_nt_align1::Params)"
#define GELU                                                                                       \
    "void at::native::vectorized_elementwise_kernel<4, "                                           \
    "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}"  \
    "::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "                  \
    "std::array<char*, "                                                                           \
    "2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"  \
    "{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "      \
    "std::array<char*, 2ul>)"
#define GELU_BWD                                                                                   \
    "void at::native::vectorized_elementwise_kernel<4, "                                           \
    "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"      \
    "{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}" \
    ", std::array<char*, 3ul> >(int, at::native::GeluBackwardCUDAKernelImpl(at::"                  \
    "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::" \
    "operator()() const::{lambda(float, float)#1}, std::array<char*, 3ul>)"
#define ADD                                                                                        \
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "       \
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"
#define POW                                                                                        \
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"        \
    "pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, "                        \
    "float)::{lambda(float)#1}"                                                                    \
    ", std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_" \
    "impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, std::array<char*, "    \
    "2ul>)"
#define MEAN                                                                                       \
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "                          \
    "at::native::MeanOps<float, "                                                                  \
    "float, float, float>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, "              \
    "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4, 4>)"
#define FILL                                                                                       \
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "           \
    "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
#define MUL_SCALAR                                                                                 \
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"  \
    "BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::"   \
    "TensorIteratorBase&, at::native::BUnaryFunctor<float, float, float, at::native::binary_"      \
    "internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_"    \
    "nocast<at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::"          \
    "MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BUnaryFunctor<float, float, "      \
    "float, "                                                                                      \
    "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})"
#define AUNARY_MUL                                                                                 \
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "   \
    "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "      \
    "at::native::AUnaryFunctor<float, float, float, "                                              \
    "at::native::binary_internal::MulFunctor<float> "                                              \
    ">, std::array<char*, 2ul>)"
#define BINARY_MUL                                                                                 \
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "   \
    "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, "      \
    "at::native::BinaryFunctor<float, float, float, "                                              \
    "at::native::binary_internal::MulFunctor<float> "                                              \
    ">, std::array<char*, 3ul>)"
#define REDUCE_SUM                                                                                 \
    "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, "                          \
    "at::native::func_wrapper_t"                                                                   \
    "<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::"      \
    "{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, "         \
    "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()("  \
    "at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>)"
#define SGD                                                                                        \
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "    \
    "namespace)::TensorListMetadata<2>, at::native::(anonymous "                                   \
    "namespace)::BinaryOpListAlphaFunctor"                                                         \
    "<float, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::"               \
    "TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, "   \
    "2, "                                                                                          \
    "2, 0>, std::plus<float>, float)"
#define ALLREDUCE "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"

#define K(name, us)                                                                                \
    {                                                                                              \
        SIM_KERNEL, name, us, 0                                                                    \
    }
#define COPY(us, bytes)                                                                            \
    {                                                                                              \
        SIM_MEMCPY, "", us, bytes                                                                  \
    }
#define SET(us)                                                                                    \
    {                                                                                              \
        SIM_MEMSET, "", us, 4                                                                      \
    }
#define BUCKET(us)                                                                                 \
    {                                                                                              \
        SIM_ALLREDUCE, ALLREDUCE, us, 268468224                                                    \
    } /* 67117056 floats per bucket */

/* Layer-by-layer gradient computation; each bucket is ready after its weight gradient. */
#define BWD_LAYER(dgrad_us, wgrad_us, red_us, big_us)                                              \
    K(GEMM_NN, dgrad_us), K(SGEMM_NT, wgrad_us), SET(1.1), K(REDUCE_SUM, red_us),                  \
        K(AUNARY_MUL, 1.0), K(AUNARY_MUL, big_us), BUCKET(900.0), K(GELU_BWD, 27.0)

const struct sim_op rs_sim_step_ops[] = {
    /* forward: 4 x (GEMM + GELU) */
    K(GEMM_TN, 2682.5),
    K(GELU, 15.2),
    K(GEMM_TN, 2681.6),
    K(GELU, 15.2),
    K(GEMM_TN, 2684.3),
    K(GELU, 15.3),
    K(GEMM_TN, 2680.8),
    K(GELU, 15.9),
    /* loss */
    K(ADD, 24.2),
    K(POW, 16.9),
    SET(0.8),
    K(MEAN, 12.3),
    K(FILL, 0.8),
    K(MUL_SCALAR, 21.2),
    COPY(17.8, 4194304),
    K(AUNARY_MUL, 15.6),
    K(BINARY_MUL, 25.8),
    K(GELU_BWD, 25.4),
    /* backward */
    BWD_LAYER(2653.9, 2644.7, 17.3, 124.2),
    BWD_LAYER(3420.6, 2646.6, 16.4, 125.2),
    BWD_LAYER(3396.8, 2646.7, 18.5, 125.3),
    K(SGEMM_NT, 2811.8),
    SET(1.2),
    K(REDUCE_SUM, 18.1),
    K(AUNARY_MUL, 1.1),
    K(AUNARY_MUL, 124.7),
    COPY(1.5, 32768),
    BUCKET(1078.3),
    /* gradient copy-back, then SGD */
    COPY(161.8, 268435456),
    COPY(2.5, 32768),
    COPY(153.5, 268435456),
    COPY(1.6, 32768),
    COPY(160.8, 268435456),
    {SIM_WAIT_COMM, "", 0, 0},
    COPY(1.5, 32768),
    COPY(126.3, 268435456),
    K(SGD, 65.1),
    K(SGD, 62.1),
    K(SGD, 65.5),
    K(SGD, 63.8),
    K(SGD, 64.6),
    K(SGD, 63.5),
    K(SGD, 64.4),
    K(SGD, 63.5),
    K(SGD, 64.9),
    K(SGD, 64.2),
    K(SGD, 63.5),
    K(SGD, 64.1),
    K(SGD, 50.3),
};

const size_t rs_sim_step_n_ops = sizeof rs_sim_step_ops / sizeof rs_sim_step_ops[0];

double
rs_sim_profile_step_us(void)
{
    double us = RS_SIM_HOST_GAP_US;

    for (size_t i = 0; i < rs_sim_step_n_ops; i++) {
        const struct sim_op *op = &rs_sim_step_ops[i];
        if (op->kind == SIM_KERNEL || op->kind == SIM_MEMCPY || op->kind == SIM_MEMSET)
            us += op->us + RS_SIM_LAUNCH_GAP_US;
    }
    /* The last bucket's AllReduce sits on the critical path before the optimizer. */
    return us + 1078.3;
}
