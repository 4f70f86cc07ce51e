/* A shared object for activity_test: a second CUPTI client, as torch.profiler's Kineto is. It
 * subscribes and registers its activity buffers through its own GOT slots, which the collector's
 * hand-over hooks rewrite (got_hook.h); CUPTI itself is the test's stand-in (fake_cupti.h). */
#include <cupti.h>
#include <stdint.h>

int standin_subscribe(void);
int standin_register(void);

static void CUPTIAPI
on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    (void)domain;
    (void)cbid;
    (void)data;
}

static void CUPTIAPI
requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
}

static void CUPTIAPI
completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)buffer;
    (void)size;
    (void)valid;
}

int
standin_subscribe(void)
{
    CUpti_SubscriberHandle sub;
    return (int)cuptiSubscribe(&sub, on_callback, NULL);
}

int
standin_register(void)
{
    return (int)cuptiActivityRegisterCallbacks(requested, completed);
}
