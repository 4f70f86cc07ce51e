/* NCCL kernel name recognition (see nccl_kernel.h). */
#include "proto/nccl_kernel.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NCCL's names of its operations: kernel names and the profiler plugin's func strings. NCCL
 * spells all-to-all "AlltoAll" in its plugin strings; "AllToAll" is accepted as well. A send and
 * a receive are halves of one send/recv exchange. */
static const struct {
    const char *name;
    enum rs_coll_op op;
} ops[] = {
    {"AllReduce", RS_COLL_ALLREDUCE},
    {"AllGather", RS_COLL_ALLGATHER},
    {"ReduceScatter", RS_COLL_REDUCESCATTER},
    {"Broadcast", RS_COLL_BROADCAST},
    {"Reduce", RS_COLL_REDUCE},
    {"SendRecv", RS_COLL_SENDRECV},
    {"Send", RS_COLL_SENDRECV},
    {"Recv", RS_COLL_SENDRECV},
    {"AllToAll", RS_COLL_ALLTOALL},
    {"AlltoAll", RS_COLL_ALLTOALL},
};

enum rs_coll_op
rs_coll_op_from_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(name, ops[i].name) == 0)
            return ops[i].op;
    return RS_COLL_UNKNOWN;
}

static const char *const redops[] = {"Sum", "Prod",      "Min",        "Max",
                                     "Avg", "PreMulSum", "SumPostDiv", NULL};
static const char *const protos[] = {"LL128", "LL", "SIMPLE", NULL};
static const char *const algos[] = {
    "RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "NVLS", "PAT", NULL};
static const char *const dtypes[] = {
    "f32",     "f16",     "bf16",     "f64",     "i8",       "u8",       "i32",    "u32",
    "i64",     "u64",     "f8e4m3",   "f8e5m2",  "float",    "half",     "double", "int8_t",
    "uint8_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "bfloat16", NULL};

/* The list's own copy of `word`, or NULL. */
static const char *
in_list(const char *const *list, const char *word)
{
    for (; *list; list++)
        if (strcmp(*list, word) == 0)
            return *list;
    return NULL;
}

/* Copies the identifier that starts at the NCCL prefix into buf: up to '(' or '<' (demangled) or
 * exactly the mangled length. */
static bool
kernel_identifier(const char *name, char *buf, size_t cap)
{
    const char *p = strstr(name, "ncclDevKernel_");
    size_t len;

    if (!p)
        p = strstr(name, "ncclKernel_");
    if (!p)
        return false;
    /* Mangled: "_Z39ncclDevKernel_..." — the digits before the prefix give the length. */
    const char *d = p;
    while (d > name && isdigit((unsigned char)d[-1]))
        d--;
    if (d < p && d >= name + 2 && d[-1] == 'Z' && d[-2] == '_')
        len = strtoul(d, NULL, 10);
    else
        len = strcspn(p, "(<");
    if (len == 0 || len >= cap || len > strlen(p))
        return false;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return true;
}

bool
rs_nccl_kernel_parse(const char *name, struct rs_nccl_kernel *out)
{
    char ident[256], *tok[24];
    size_t n = 0;

    if (!name || !kernel_identifier(name, ident, sizeof ident))
        return false;
    *out = (struct rs_nccl_kernel){RS_COLL_UNKNOWN, "", "", "", ""};
    for (char *p = ident; p && n < sizeof tok / sizeof tok[0];) {
        tok[n++] = p;
        if ((p = strchr(p, '_')))
            *p++ = '\0';
    }
    /* tok[0] is "ncclDevKernel"/"ncclKernel"; tok[1] the collective ("Generic" and unknown ones
     * stay RS_COLL_UNKNOWN: still NCCL). The rest, in any order: reduction, type, algorithm,
     * protocol; two-word algorithms (COLLNET_DIRECT, NVLS_TREE) and types (int8_t) span two
     * tokens, so pairs are tried first. */
    if (n > 1)
        out->op = rs_coll_op_from_name(tok[1]);
    for (size_t i = 2; i < n; i++) {
        const char *hit;
        char joined[64];
        if (i + 1 < n) {
            snprintf(joined, sizeof joined, "%s_%s", tok[i], tok[i + 1]);
            if ((hit = in_list(algos, joined))) {
                out->algo = hit;
                i++;
                continue;
            }
            if ((hit = in_list(dtypes, joined))) {
                out->dtype = hit;
                i++;
                continue;
            }
        }
        if ((hit = in_list(redops, tok[i])))
            out->redop = hit;
        else if ((hit = in_list(protos, tok[i])))
            out->proto = hit;
        else if ((hit = in_list(algos, tok[i])))
            out->algo = hit;
        else if ((hit = in_list(dtypes, tok[i])))
            out->dtype = hit;
    }
    return true;
}
