/* Non-cryptographic hashing and random identifiers. FNV-1a 64 names jobs and strings in storage
 * keys (stable across versions: it is part of the on-disk format); rs_random_u64 makes agent and
 * boot ids. */
#ifndef RS_COMMON_HASH_H
#define RS_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t rs_hash_fnv1a64(const void *data, size_t len);

/* 64 random bits from the kernel (getrandom); never returns 0. */
uint64_t rs_random_u64(void);

#endif
