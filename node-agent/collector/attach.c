/* Detaching CUPTI between windows and attaching it again (see attach.h). */
#include "node-agent/collector/attach.h"

#include "common/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;
    _Atomic int state; /* enum rs_attach_state; read without the lock by the callback's fast path */
    CUpti_SubscriberHandle sub;
    bool gave_up; /* cuptiFinalize refused once: CUPTI stays attached for good */
    uint64_t asked_mono;
    _Atomic int pid; /* of the process that asked: a fork()ed child never detaches its parent's */
    struct rs_attach_stats stats;
    struct rs_attach_event events[RS_ATTACH_EVENTS];
    size_t n_events;
} a = {.lock = PTHREAD_MUTEX_INITIALIZER, .state = RS_ATTACHED};

void
rs_attach_lock(void)
{
    pthread_mutex_lock(&a.lock);
}

void
rs_attach_unlock(void)
{
    pthread_mutex_unlock(&a.lock);
}

void
rs_attach_note(char what)
{
    if (a.n_events < RS_ATTACH_EVENTS)
        a.events[a.n_events++] = (struct rs_attach_event){what, rs_clock_realtime_ns()};
}

size_t
rs_attach_events(struct rs_attach_event *out, size_t max)
{
    pthread_mutex_lock(&a.lock);
    size_t n = a.n_events < max ? a.n_events : max;
    for (size_t i = 0; i < n; i++)
        out[i] = a.events[i];
    pthread_mutex_unlock(&a.lock);
    return n;
}

enum rs_attach_state
rs_attach_state(void)
{
    return (enum rs_attach_state)atomic_load(&a.state);
}

/* Every runtime- and driver-API call of every thread while a detach is pending (and only then:
 * the subscription exists only then). At a call's exit, unless the flush thread is inside CUPTI,
 * detach; a later call's exit tries again. cuptiFinalize ends the subscription with the rest. */
static void CUPTIAPI
at_api_call(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    const CUpti_CallbackData *call = data;

    (void)userdata;
    (void)cbid;
    if (atomic_load_explicit(&a.state, memory_order_acquire) != RS_DETACHING ||
        (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) || !call ||
        call->callbackSite != CUPTI_API_EXIT || getpid() != atomic_load(&a.pid))
        return;
    if (pthread_mutex_trylock(&a.lock) != 0)
        return;
    if (atomic_load(&a.state) == RS_DETACHING) {
        uint64_t t0 = rs_clock_mono_ns();
        if (cuptiFinalize() == CUPTI_SUCCESS) {
            a.sub = NULL;
            a.stats.detaches++;
            a.stats.finalize_ns += rs_clock_mono_ns() - t0;
            a.stats.detach_wait_ns += rs_clock_mono_ns() - a.asked_mono;
            atomic_store(&a.state, RS_DETACHED);
            rs_attach_note('D');
        } else {
            /* still attached, still subscribed: the flush thread ends the subscription at its
             * next tick (rs_attach_detach) and asks no more */
            a.stats.refused++;
            a.gave_up = true;
            atomic_store(&a.state, RS_ATTACHED);
        }
    }
    pthread_mutex_unlock(&a.lock);
}

int
rs_attach_detach(void)
{
    CUptiResult rc;

    if (atomic_load(&a.state) != RS_ATTACHED)
        return 0;
    if (a.gave_up) {
        if (a.sub)
            cuptiUnsubscribe(a.sub);
        a.sub = NULL;
        return CUPTI_ERROR_NOT_SUPPORTED;
    }
    if ((rc = cuptiSubscribe(&a.sub, at_api_call, NULL)) != CUPTI_SUCCESS) {
        a.sub = NULL;
        a.stats.refused++;
        return (int)rc;
    }
    if ((rc = cuptiEnableDomain(1, a.sub, CUPTI_CB_DOMAIN_DRIVER_API)) != CUPTI_SUCCESS ||
        (rc = cuptiEnableDomain(1, a.sub, CUPTI_CB_DOMAIN_RUNTIME_API)) != CUPTI_SUCCESS) {
        cuptiUnsubscribe(a.sub);
        a.sub = NULL;
        a.stats.refused++;
        return (int)rc;
    }
    a.asked_mono = rs_clock_mono_ns();
    atomic_store(&a.pid, (int)getpid());
    atomic_store_explicit(&a.state, RS_DETACHING, memory_order_release);
    rs_attach_note('R');
    return 0;
}

int
rs_attach_attach(CUpti_BuffersCallbackRequestFunc requested,
                 CUpti_BuffersCallbackCompleteFunc completed)
{
    uint64_t t0 = rs_clock_mono_ns();
    uint8_t zeroed = 1;
    size_t len = sizeof zeroed;
    CUptiResult rc;

    if (a.sub) {
        /* pending, or a cuptiFinalize refused: still attached, end the subscription */
        cuptiUnsubscribe(a.sub);
        a.sub = NULL;
        if (atomic_load(&a.state) == RS_DETACHING) {
            a.stats.cancelled++;
            rs_attach_note('X');
        }
        atomic_store(&a.state, RS_ATTACHED);
        return 0;
    }
    if (atomic_load(&a.state) != RS_DETACHED)
        return 0;
    /* CUPTI starts again at this first call. A client that came after us and was not redirected
     * to the hand-over (a library loaded later) may hold it now: then it is its, not ours. */
    char holder[128];
    if (rs_attach_taken(holder, sizeof holder)) {
        a.stats.refused++;
        /* still detached as far as we are concerned: nothing of ours in it */
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    /* attached now, whatever follows: a refusal below is detached again at the next tick */
    atomic_store(&a.state, RS_ATTACHED);
    /* the buffers' promise (activity.c: calloc'd), then the callbacks */
    if ((rc = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len,
                                        &zeroed)) != CUPTI_SUCCESS ||
        (rc = cuptiActivityRegisterCallbacks(requested, completed)) != CUPTI_SUCCESS) {
        a.stats.refused++;
        return (int)rc;
    }
    rs_attach_note('A');
    a.stats.attaches++;
    a.stats.attach_ns += rs_clock_mono_ns() - t0;
    return 0;
}

static void CUPTIAPI
ignore_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                const void *data)
{
}

bool
rs_attach_taken(char *holder, size_t len)
{
    CUpti_SubscriberHandle sub;
    CUpti_SubscriberParams params = {CUpti_SubscriberParams_STRUCT_SIZE, "rankscope", holder, len};

    holder[0] = '\0';
    CUptiResult rc = cuptiSubscribe_v2(&sub, ignore_callback, NULL, &params);
    if (rc == CUPTI_SUCCESS)
        cuptiUnsubscribe(sub);
    return rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

void
rs_attach_get_stats(struct rs_attach_stats *out)
{
    pthread_mutex_lock(&a.lock);
    *out = a.stats;
    pthread_mutex_unlock(&a.lock);
}
