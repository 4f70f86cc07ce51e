/* NCCL's side of the profiler plugin interface for tests that play NCCL (plugin_test.c,
 * injection_test.c): the event descriptor and state arguments as NCCL 2.28's own header
 * (profiler_v5.h) has them, written from that header and not from node-agent/collector/plugin.c,
 * so that a layout mistake there shows up here. */
#ifndef RS_TESTS_FAKE_NCCL_H
#define RS_TESTS_FAKE_NCCL_H

#include <stddef.h>
#include <stdint.h>

/* ncclProfilerEventDescr_v5_t */
struct nccl_descr {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            uint64_t seqNumber;
            const char *func;
            void const *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t nChannels;
            uint8_t nWarps;
            const char *algo;
            const char *proto;
            void *parentGroup;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
            void *parentGroup;
        } p2p;
        struct {
            uint8_t channelId;
            uint64_t pTimer;
        } kernelCh;
        struct { /* a v6 member, larger than the others: the union must not move */
            uint64_t a[12];
        } ceColl;
    };
};
union nccl_state_args {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        uint64_t pTimer;
    } kernelCh;
};

#define COLL 2
#define P2P 4
#define KERNEL_CH 64

#endif
