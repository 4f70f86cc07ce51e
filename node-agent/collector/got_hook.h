/* Redirecting other libraries' calls of some functions to ours (the collector's hand-over hook).
 *
 * A shared library calls a function of another one through a slot of its global offset table
 * (GOT), which the dynamic linker fills with the function's address: at load time, or at the
 * first call under lazy binding. rs_got_hook rewrites those slots, in every object loaded when it
 * runs, so that their calls of each redirect's `symbol` reach its `replacement` instead; the
 * replacement calls the real function itself (its own reference to it is not rewritten). One walk
 * over the loaded objects' relocations serves all n redirects.
 *
 * The collector uses it for the calls that take CUPTI over (cuptiSubscribe, cuptiSubscribe_v2,
 * cuptiActivityRegisterCallbacks): CUPTI gives activity
 * buffers to whichever client registered its callbacks last, so a client that registers after us
 * (torch.profiler's Kineto) would otherwise receive the buffers we had handed to CUPTI and drop
 * them with its own first records in them. Hearing the call first lets activity.c hand
 * CUPTI over cleanly (docs/collector.md "torch.profiler in the same process").
 *
 * Left alone: the objects that contain a redirect's `replacement` (ours) or `keep` (the library
 * that defines the function: its internal references are its own business). Objects loaded later
 * (dlopen) are not changed. A slot in a read-only segment (RELRO) is made writable for the write
 * and read-only again where the dynamic linker had protected it (whole pages of RELRO); a slot
 * whose page cannot be made writable is skipped. Each slot is written with one atomic store, so a
 * concurrent caller calls either the old or the new function.
 *
 * ELF64 with RELA relocations on x86-64 and AArch64 (others: nothing is rewritten), glibc's
 * dl_iterate_phdr. Thread-safe against the dynamic linker (it holds the loader's lock while it
 * walks), not against itself: call it once, at start-up. Returns the number of slots rewritten. */
#ifndef RS_COLLECTOR_GOT_HOOK_H
#define RS_COLLECTOR_GOT_HOOK_H

#include <stddef.h>

struct rs_got_redirect {
    const char *symbol; /* the function whose callers are redirected */
    void *replacement;
    const void *keep; /* the function itself: its library is left alone */
};
size_t rs_got_hook(const struct rs_got_redirect *redirects, size_t n);

#endif
