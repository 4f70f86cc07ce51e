/* Unit tests of GOT slot rewriting: a library's calls reach the replacement, the object holding
 * the replacement and the defining library keep theirs, RELRO slots are rewritten and read-only
 * again, an unknown symbol rewrites nothing. */
#include "node-agent/collector/got_hook.h"
#include "tests/t.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int got_caller_lazy(void); /* tests/unit/collector/got_caller.c, two builds */
int got_caller_now(void);

#define FAKE_PPID 424242

static pid_t
fake_getppid(void)
{
    return FAKE_PPID;
}

static const struct rs_got_redirect redirect = {"getppid", (void *)fake_getppid, (void *)getppid},
                                    unknown = {"no_such_function_anywhere", (void *)fake_getppid,
                                               (void *)getppid};

/* Whether the mapping holding address a is writable (/proc/self/maps). */
static int
writable(const void *a)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int w = -1;
    uintptr_t at = (uintptr_t)a;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && at >= lo && at < hi)
            w = perms[1] == 'w';
    }
    if (f)
        fclose(f);
    return w;
}

static void
rewrites_callers_only(void)
{
    pid_t real = getppid();

    T_EQ(got_caller_lazy(), real);
    T_EQ(got_caller_now(), real);
    T_OK(rs_got_hook(&unknown, 1));
    /* one slot in each caller library (the test binary holds the replacement: left alone), in one
     * walk with a redirect that matches nothing */
    const struct rs_got_redirect both[] = {unknown, redirect};
    T_EQ(rs_got_hook(both, 2), 2);
    T_EQ(got_caller_lazy(), FAKE_PPID);
    T_EQ(got_caller_now(), FAKE_PPID);
    T_EQ(getppid(), real);
}

static int
find_relro(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (!strstr(info->dlpi_name, "libgot_caller_now"))
        return 0;
    for (size_t i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
            *(uintptr_t *)arg = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    return 1;
}

/* The -z now library's GOT is in RELRO: after the rewrite its pages are read-only again. */
static void
relro_read_only_again(void)
{
    uintptr_t relro = 0;
    dl_iterate_phdr(find_relro, &relro);
    T_CHECK(relro != 0);
    T_EQ(writable((const void *)relro), 0);
    T_EQ(rs_got_hook(&redirect, 1), 2); /* already ours */
    T_EQ(writable((const void *)relro), 0);
    T_EQ(got_caller_now(), FAKE_PPID);
}

int
main(void)
{
    T_RUN(rewrites_callers_only);
    T_RUN(relro_read_only_again);
    return T_DONE("collector/got_hook");
}
