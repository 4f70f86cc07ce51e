/* A stand-in for libcupti and the few driver calls the collector makes, for its unit tests
 * (the collector tests linked with fake_cupti.o and -rdynamic, without libcupti). Each
 * call it serves is appended to a log as a short token ("E" enable PC sampling, "S" start, ...,
 * see fake_cupti.c), so a test states the exact sequence it expects. Activity buffers: the test
 * makes CUPTI "record" kernels (fake_cupti_kernels), which fills buffers the collector handed
 * over; a flush hands them back through the collector's completed callback. */
#ifndef RS_TESTS_FAKE_CUPTI_H
#define RS_TESTS_FAKE_CUPTI_H

#include <cupti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What happened since the last fake_cupti_reset, one token per call, in order. */
const char *fake_cupti_log(void);
void fake_cupti_reset(void);

/* Whether an activity kind is enabled now, and whether it ever was. */
bool fake_cupti_kind_on(CUpti_ActivityKind kind);
bool fake_cupti_kind_ever(CUpti_ActivityKind kind);
/* Driver-API records enabled for a call (cuptiActivityEnableDriverApi). */
bool fake_cupti_driver_api_on(CUpti_CallbackId cbid);
/* Whether driver-API records were ever enabled for any call. */
bool fake_cupti_driver_api_ever(void);
/* The last value set for an activity attribute of one byte (-1: never set). */
int fake_cupti_attribute_u8(CUpti_ActivityAttribute attr);

/* CUPTI records n kernels into one buffer it requests from the collector (the size and the
 * zeroing the collector promised are checked: false if not). */
bool fake_cupti_kernels(size_t n);
/* The next flush that has buffers keeps the last n of them (as if another client had taken them:
 * they never come back). */
void fake_cupti_keep_buffers(size_t n);

/* The subscriber callback the collector registered, and results to return. */
CUpti_CallbackFunc fake_cupti_subscriber(void);
extern CUptiResult fake_cupti_start_result; /* cuptiPCSamplingStart */
/* cuptiSubscribe_v2: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED plays another tool holding
 * CUPTI, named fake_cupti_holder */
extern CUptiResult fake_cupti_subscribe_v2_result;
extern const char *fake_cupti_holder;
extern uint32_t fake_cupti_version;   /* cuptiGetVersion (CUPTI_API_VERSION) */
extern int fake_cupti_pcs_after_stop; /* PCs the GetData after a stop returns (2) */
/* PC-sampling configuration seen: kernel-serialized mode, start/stop control. */
extern bool fake_cupti_serialized, fake_cupti_start_stop, fake_cupti_launches_subscribed;
/* Latency timestamps on: the kernels fake_cupti_kernels records carry queue times, every other
 * one queued only after the gap before it began (a launch wait of 4 ns each). */
extern bool fake_cupti_latency;
/* cuptiFinalize: CUPTI detached now (until any next call), how often, and calls that attached it
 * again without registering callbacks first; what cuptiFinalize returns (CUPTI_SUCCESS). */
extern bool fake_cupti_detached;
extern unsigned fake_cupti_lazy_attaches, fake_cupti_finalizes;
extern CUptiResult fake_cupti_finalize_result;
/* An application thread enters or leaves a driver call: the subscriber's callback at `site`;
 * _exit: at CUPTI_API_EXIT. */
void fake_cupti_driver_call(CUpti_ApiCallbackSite site);
void fake_cupti_driver_call_exit(void);
/* A runtime call returns: the subscriber's callback, where the runtime domain is enabled. */
void fake_cupti_runtime_call_exit(void);

#endif
