/* Unit tests of NCCL kernel name recognition: demangled, mangled, pre-2.19 and generic names. */
#include "proto/nccl_kernel.h"
#include "tests/t.h"

#include <string.h>

static void
names(void)
{
    struct rs_nccl_kernel k;

    T_CHECK(rs_nccl_kernel_parse(
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", &k));
    T_EQ(k.op, RS_COLL_ALLREDUCE);
    T_CHECK(!strcmp(k.redop, "Sum") && !strcmp(k.dtype, "f32") && !strcmp(k.algo, "RING") &&
            !strcmp(k.proto, "LL"));
    /* as CUPTI reports it (measured on an H200) */
    T_CHECK(rs_nccl_kernel_parse(
        "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE", &k));
    T_EQ(k.op, RS_COLL_ALLREDUCE);
    T_CHECK(!strcmp(k.proto, "LL") && !strcmp(k.algo, "RING"));
    T_CHECK(rs_nccl_kernel_parse("ncclDevKernel_ReduceScatter_Sum_bf16_NVLS_TREE_SIMPLE(x)", &k));
    T_EQ(k.op, RS_COLL_REDUCESCATTER);
    T_CHECK(!strcmp(k.algo, "NVLS_TREE") && !strcmp(k.proto, "SIMPLE") && !strcmp(k.dtype, "bf16"));
    T_CHECK(rs_nccl_kernel_parse("ncclDevKernel_AllGather_COLLNET_DIRECT_LL128(args)", &k));
    T_EQ(k.op, RS_COLL_ALLGATHER);
    T_CHECK(!strcmp(k.algo, "COLLNET_DIRECT") && !strcmp(k.proto, "LL128"));
    T_CHECK(rs_nccl_kernel_parse("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", &k));
    T_EQ(k.op, RS_COLL_SENDRECV);
    T_CHECK(rs_nccl_kernel_parse("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", &k));
    T_EQ(k.op, RS_COLL_UNKNOWN);
    T_CHECK(rs_nccl_kernel_parse("ncclKernel_AllReduce_RING_LL_Sum_int8_t", &k));
    T_EQ(k.op, RS_COLL_ALLREDUCE);
    T_CHECK(!strcmp(k.dtype, "int8_t") && !strcmp(k.redop, "Sum"));
    T_CHECK(rs_nccl_kernel_parse("ncclDevKernel_Broadcast_RING_SIMPLE", &k));
    T_EQ(k.op, RS_COLL_BROADCAST);
    /* not NCCL */
    T_CHECK(!rs_nccl_kernel_parse("void at::native::vectorized_elementwise_kernel<4>()", &k));
    T_CHECK(!rs_nccl_kernel_parse("", &k));
    T_CHECK(!rs_nccl_kernel_parse(NULL, &k));
    /* malformed mangled lengths are refused, not read past */
    T_CHECK(!rs_nccl_kernel_parse("_Z99ncclDevKernel_AllReduce", &k));
}

/* One table for kernel names and the plugin's func strings: NCCL's plugin spells all-to-all
 * "AlltoAll", kernel names and older code "AllToAll"; both are all-to-all, in both places. */
static void
op_names(void)
{
    struct rs_nccl_kernel k;

    T_EQ(rs_coll_op_from_name("AlltoAll"), RS_COLL_ALLTOALL);
    T_EQ(rs_coll_op_from_name("AllToAll"), RS_COLL_ALLTOALL);
    T_EQ(rs_coll_op_from_name("AllReduce"), RS_COLL_ALLREDUCE);
    T_EQ(rs_coll_op_from_name("Reduce"), RS_COLL_REDUCE);
    T_EQ(rs_coll_op_from_name("ReduceScatter"), RS_COLL_REDUCESCATTER);
    T_EQ(rs_coll_op_from_name("Send"), RS_COLL_SENDRECV);
    T_EQ(rs_coll_op_from_name("Recv"), RS_COLL_SENDRECV);
    T_EQ(rs_coll_op_from_name("SendRecv"), RS_COLL_SENDRECV);
    T_EQ(rs_coll_op_from_name("Generic"), RS_COLL_UNKNOWN);
    T_EQ(rs_coll_op_from_name("allreduce"), RS_COLL_UNKNOWN); /* exact, as NCCL spells them */
    T_EQ(rs_coll_op_from_name("AllReduceX"), RS_COLL_UNKNOWN);
    T_EQ(rs_coll_op_from_name(""), RS_COLL_UNKNOWN);
    T_EQ(rs_coll_op_from_name(NULL), RS_COLL_UNKNOWN);
    T_CHECK(rs_nccl_kernel_parse("ncclDevKernel_AlltoAll_RING_SIMPLE(x)", &k));
    T_EQ(k.op, RS_COLL_ALLTOALL);
    T_CHECK(rs_nccl_kernel_parse("ncclDevKernel_AllToAll_RING_SIMPLE(x)", &k));
    T_EQ(k.op, RS_COLL_ALLTOALL);
}

int
main(void)
{
    T_RUN(names);
    T_RUN(op_names);
    return T_DONE("proto/nccl_kernel");
}
