/* Recognises NCCL device kernels by name and extracts what the name says: the collective, the
 * reduction, the data type, the algorithm and the protocol. Accepts demangled names
 * ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), the mangled form
 * CUPTI reports ("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE")
 * and the pre-2.19 spelling ("ncclKernel_AllReduce_RING_LL_Sum_float"). Pure; thread-safe. */
#ifndef RS_PROTO_NCCL_KERNEL_H
#define RS_PROTO_NCCL_KERNEL_H

#include "proto/wire.h"

#include <stdbool.h>

struct rs_nccl_kernel {
    enum rs_coll_op op; /* RS_COLL_UNKNOWN for generic kernels (several ops in one) */
    /* static strings, "" when the name does not say */
    const char *redop; /* "Sum", ... */
    const char *dtype; /* "f32", "bf16", "int8_t", ... */
    const char *algo;  /* "RING", "TREE", "NVLS", "COLLNET_DIRECT", ... */
    const char *proto; /* "LL", "LL128", "SIMPLE" */
};

/* The operation NCCL names `name` ("AllReduce", "AlltoAll" or "AllToAll", "Send", "Recv",
 * "SendRecv", ...: the collective of a kernel name, the func string of the profiler plugin); exact
 * match; RS_COLL_UNKNOWN for NULL and any other name ("Generic"). Pure; thread-safe. */
enum rs_coll_op rs_coll_op_from_name(const char *name);

/* True when `name` is an NCCL kernel; then *out says what it is. */
bool rs_nccl_kernel_parse(const char *name, struct rs_nccl_kernel *out);

#endif
