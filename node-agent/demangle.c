/* Cached demangling of C++ names (see demangle.h). */
#include "node-agent/demangle.h"

#include "common/hash.h"
#include "common/strtab.h"
#include "proto/wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The C++ ABI's demangler (libstdc++, libc++abi): a malloc'd string, status 0 on success. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

#define MAX_NAMES 65536u /* distinct names cached; beyond, names pass unchanged */

struct rs_demangler {
    struct rs_strtab mangled; /* id -> the name as it came */
    char **readable;          /* id -> demangled copy, or NULL: use the name itself */
};

int
rs_demangler_new(rs_demangler **out)
{
    rs_demangler *d = calloc(1, sizeof *d);

    if (!d || !(d->readable = calloc(MAX_NAMES, sizeof *d->readable))) {
        free(d);
        return -ENOMEM;
    }
    rs_strtab_init(&d->mangled);
    *out = d;
    return 0;
}

void
rs_demangler_free(rs_demangler *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; i < d->mangled.count && i < MAX_NAMES; i++)
        free(d->readable[i]);
    free(d->readable);
    rs_strtab_fini(&d->mangled);
    free(d);
}

/* A demangled name longer than the wire allows (a PyTorch kernel templated on lambdas seen on H200:
 * 5,050 bytes): its start, then the mangled name's hash, so that two such names stay two names. */
static char *
shortened(char *s, const char *mangled)
{
    char tail[40];
    int n = snprintf(tail, sizeof tail, " ... [%016llx]",
                     (unsigned long long)rs_hash_fnv1a64(mangled, strlen(mangled)));
    size_t keep = RS_WIRE_MAX_STRING_LEN - (size_t)n;

    memcpy(s + keep, tail, (size_t)n + 1); /* ASCII: any byte is a character boundary */
    return s;
}

const char *
rs_demangler_name(rs_demangler *d, const char *name)
{
    if (strncmp(name, "_Z", 2) != 0 || d->mangled.count >= MAX_NAMES)
        return name;
    uint32_t before = d->mangled.count, id = rs_strtab_intern(&d->mangled, name);
    if (id == RS_STRTAB_NONE)
        return name;
    if (id == before) { /* new: demangle once */
        int status = -1;
        char *s = __cxa_demangle(name, NULL, NULL, &status);
        if (status == 0 && s && strlen(s) > RS_WIRE_MAX_STRING_LEN)
            s = shortened(s, name);
        if (status == 0 && s)
            d->readable[id] = s;
        else
            free(s);
    }
    return d->readable[id] ? d->readable[id] : name;
}
