/* Rewriting GOT slots of loaded objects (see got_hook.h). */
#include "node-agent/collector/got_hook.h"

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#define SLOT_JUMP R_X86_64_JUMP_SLOT
#define SLOT_DATA R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define SLOT_JUMP R_AARCH64_JUMP_SLOT
#define SLOT_DATA R_AARCH64_GLOB_DAT
#endif

struct hook {
    const struct rs_got_redirect *redirects;
    size_t n, rewritten;
};

/* Whether one of the object's segments of type `type` (PT_LOAD: loaded; PT_GNU_RELRO: read-only
 * once relocated) holds address `at`; *lo and *hi (may be NULL) get that segment's bounds. */
static bool
in_segment(const struct dl_phdr_info *info, uint32_t type, uintptr_t at, uintptr_t *lo,
           uintptr_t *hi)
{
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == type && at >= start && at - start < ph->p_memsz) {
            if (lo && hi) {
                *lo = start;
                *hi = start + ph->p_memsz;
            }
            return true;
        }
    }
    return false;
}

/* Writes the replacement into the slot. Its page (two, if the slot straddles them) is made
 * writable for the write, and read-only again only where the dynamic linker had made it so:
 * the RELRO range rounded to whole pages inside it, as glibc protects it — a partial last page
 * of RELRO stays writable, since it shares the page with data the program writes. */
static void
rewrite(const struct dl_phdr_info *info, uintptr_t slot, void *replacement, struct hook *h)
{
    long page_size = sysconf(_SC_PAGESIZE);
    if (page_size <= 0)
        return;
    uintptr_t mask = ~((uintptr_t)page_size - 1), page = slot & mask, lo, hi;
    size_t len = slot + sizeof(void *) - page > (size_t)page_size ? 2 * (size_t)page_size
                                                                  : (size_t)page_size;
    if (mprotect((void *)page, len, PROT_READ | PROT_WRITE) != 0)
        return;
    __atomic_store_n((void **)slot, replacement, __ATOMIC_RELEASE);
    if (in_segment(info, PT_GNU_RELRO, slot, &lo, &hi) && page >= (lo & mask) &&
        page + len <= (hi & mask))
        mprotect((void *)page, len, PROT_READ);
    h->rewritten++;
}

#ifdef SLOT_JUMP
/* The dynamic linker relocates the address entries of _DYNAMIC in place (glibc does, musl does
 * not): an entry below the load address is still an offset. */
static uintptr_t
dyn_address(const struct dl_phdr_info *info, ElfW(Addr) a)
{
    return a < info->dlpi_addr ? info->dlpi_addr + a : a;
}

static void
scan_relocations(const struct dl_phdr_info *info, const ElfW(Rela) * rel, size_t bytes,
                 const ElfW(Sym) * symtab, const char *strtab, size_t strsz, struct hook *h)
{
    for (size_t i = 0; i < bytes / sizeof *rel; i++) {
        unsigned long type = ELF64_R_TYPE(rel[i].r_info), sym = ELF64_R_SYM(rel[i].r_info);
        if ((type != SLOT_JUMP && type != SLOT_DATA) || sym == 0)
            continue;
        size_t name = symtab[sym].st_name;
        if (name >= strsz)
            continue;
        for (size_t r = 0; r < h->n; r++)
            if (strcmp(strtab + name, h->redirects[r].symbol) == 0)
                rewrite(info, info->dlpi_addr + rel[i].r_offset, h->redirects[r].replacement, h);
    }
}
#endif

static int
on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct hook *h = arg;
    (void)size;
    for (size_t r = 0; r < h->n; r++)
        if (in_segment(info, PT_LOAD, (uintptr_t)h->redirects[r].replacement, NULL, NULL) ||
            in_segment(info, PT_LOAD, (uintptr_t)h->redirects[r].keep, NULL, NULL))
            return 0;
#ifdef SLOT_JUMP
    const ElfW(Dyn) *dyn = NULL;
    for (size_t i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 0;
    /* the _DYNAMIC entries that say where the relocations and their symbols are */
    uintptr_t symtab = 0, strtab = 0, strsz = 0, jmprel = 0, pltrelsz = 0, pltrel = 0, rela = 0,
              relasz = 0;
    const struct {
        ElfW(Sxword) tag;
        uintptr_t *out;
        bool address; /* d_ptr (else d_val) */
    } wanted[] = {{DT_SYMTAB, &symtab, true},      {DT_STRTAB, &strtab, true},
                  {DT_STRSZ, &strsz, false},       {DT_JMPREL, &jmprel, true},
                  {DT_PLTRELSZ, &pltrelsz, false}, {DT_PLTREL, &pltrel, false},
                  {DT_RELA, &rela, true},          {DT_RELASZ, &relasz, false}};
    for (; dyn->d_tag != DT_NULL; dyn++)
        for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
            if (dyn->d_tag == wanted[i].tag)
                *wanted[i].out =
                    wanted[i].address ? dyn_address(info, dyn->d_un.d_ptr) : dyn->d_un.d_val;
    if (!symtab || !strtab)
        return 0;
    if (jmprel && pltrel == DT_RELA)
        scan_relocations(info, (const ElfW(Rela) *)jmprel, pltrelsz, (const ElfW(Sym) *)symtab,
                         (const char *)strtab, strsz, h);
    if (rela)
        scan_relocations(info, (const ElfW(Rela) *)rela, relasz, (const ElfW(Sym) *)symtab,
                         (const char *)strtab, strsz, h);
#endif
    return 0;
}

size_t
rs_got_hook(const struct rs_got_redirect *redirects, size_t n)
{
    struct hook h = {redirects, n, 0};
    dl_iterate_phdr(on_object, &h);
    return h.rewritten;
}
