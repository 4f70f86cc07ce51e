/* CUPTI attached only while the collector traces (issue 25, docs/collector.md "Tiers"). A CUPTI
 * activity client that merely stays attached — buffers registered, the DEVICE kind on, no kernel
 * records — measured +5 ... +12% on a launch-bound LM between kernel windows (docs/BENCHMARKS.md
 * "CUPTI detached between windows"), far above the 0.5% budget; so between windows the collector
 * detaches CUPTI altogether with cuptiFinalize and attaches it again (CUPTI initialises lazily at
 * the next call: a probe subscription, then the buffer callbacks) when a window or a capture
 * opens.
 *
 * cuptiFinalize races with other threads' CUPTI calls (Kineto saw crashes in FlushAll), and NVIDIA
 * recommends calling it at the exit of a CUDA API call, from a callback. So a detach is asked for
 * by the flush thread (a subscription to the runtime- and driver-API domains) and done by whichever
 * application thread next leaves a runtime or driver call. Both domains: CUPTI reports driver
 * calls the application makes itself, not those the runtime makes for it, so a PyTorch job that
 * launches through the runtime gave the driver domain alone a call only now and then (detaches
 * waited up to 6.5 s on an H200, attached all the while: docs/BENCHMARKS.md). The flush thread
 * holds the attach lock around every CUPTI call it makes; the callback only tries the lock, so
 * neither waits for the other inside the driver.
 *
 * Process-global, as CUPTI is. */
#ifndef RS_COLLECTOR_ATTACH_H
#define RS_COLLECTOR_ATTACH_H

#include <cupti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rs_attach_state {
    RS_ATTACHED,  /* CUPTI may be called */
    RS_DETACHING, /* asked for: still attached, detached at the next runtime or driver call's exit
                   */
    RS_DETACHED,  /* no CUPTI in the process: calling any CUPTI function would attach it again */
};

struct rs_attach_stats {
    uint64_t detaches;       /* done by cuptiFinalize */
    uint64_t attaches;       /* after a detach */
    uint64_t detach_wait_ns; /* asked for -> done, summed */
    uint64_t attach_ns;      /* registering again, summed (the flush thread's time) */
    uint64_t finalize_ns;    /* cuptiFinalize itself, summed: an application thread's time */
    uint64_t cancelled;      /* detaches asked for and called off (a window opened first) */
    uint64_t refused;        /* CUPTI refused the subscription or cuptiFinalize */
};

/* Held around the caller's CUPTI calls (the flush thread's tick, the end of collection); while it
 * is held no detach happens. Not recursive. */
void rs_attach_lock(void);
void rs_attach_unlock(void);

/* The state now (exact under the lock). */
enum rs_attach_state rs_attach_state(void);

/* With the lock held and CUPTI attached: asks for a detach. Every buffer must be back from CUPTI
 * and every kind off (the caller's forced flush): cuptiFinalize discards what CUPTI holds.
 * Returns 0 (RS_DETACHING; nothing when already so), or the CUptiResult of a refusal (another
 * subscriber holds CUPTI's callbacks: the state stays RS_ATTACHED). Once cuptiFinalize has refused,
 * CUPTI stays attached for good: this ends the subscription and returns
 * CUPTI_ERROR_NOT_SUPPORTED. */
int rs_attach_detach(void);

/* With the lock held: makes CUPTI usable again — ends a subscription of ours (a pending detach
 * called off, or one left by a refused cuptiFinalize), or after a detach attaches CUPTI again:
 * a probe subscription first (CUPTI attaches lazily there) — when another client holds CUPTI's
 * callbacks now (one that came after us and was not handed over to, a library loaded later),
 * CUPTI is that client's: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, still RS_DETACHED for
 * us, nothing of ours registered — then the buffers' zeroing attribute and `requested`/`completed`
 * as the activity buffer callbacks. RS_ATTACHED once CUPTI was called, even when a later call
 * refused (the caller detaches again). Returns 0 or the CUptiResult that refused. */
int rs_attach_attach(CUpti_BuffersCallbackRequestFunc requested,
                     CUpti_BuffersCallbackCompleteFunc completed);

void rs_attach_get_stats(struct rs_attach_stats *out);

/* Whether another CUPTI client (Nsight, torch.profiler's Kineto, compute-sanitizer, a library
 * loaded later) holds CUPTI's one subscription: a subscription tried and ended at once — CUPTI
 * initialises (or attaches again) there. True when one does, with its name (or "" when CUPTI gave
 * none) in holder[len]. Used at start (injection.c) and before attaching again. */
bool rs_attach_taken(char *holder, size_t len);

/* The timeline RANKSCOPE_DEBUG prints at exit, to tell apart what a job's steps ran under: the
 * first RS_ATTACH_EVENTS events — 'O' a window (or capture) turned the kinds on, 'C' off, 'R' a
 * detach asked for, 'D' done, 'X' called off, 'A' attached again — at CLOCK_REALTIME. Noted with
 * the lock held (the flush thread's tick, the callback). */
#define RS_ATTACH_EVENTS 256
struct rs_attach_event {
    char what;
    uint64_t realtime_ns;
};
void rs_attach_note(char what);
/* Copies up to `max` events, oldest first; returns how many. */
size_t rs_attach_events(struct rs_attach_event *out, size_t max);

#endif
