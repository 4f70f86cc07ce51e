/* Internals shared by the files of storage/ (not part of the public API). */
#ifndef RS_STORAGE_STORE_INT_H
#define RS_STORAGE_STORE_INT_H

#include "storage/store.h"

#include <lmdb.h>

struct rs_store {
    MDB_env *env;
    MDB_dbi meta, dedup, jobs, ranks, series, steps, colls, strings;
};

struct rs_store_write {
    rs_store *store;
    MDB_txn *txn;
    uint32_t uniq; /* distinguishes chunks that start at the same nanosecond */
};

struct rs_store_read {
    rs_store *store;
    MDB_txn *txn;
};

/* Maps an LMDB return code to a rankscope code. */
int rs__store_err(int mdb_rc);

/* FNV-1a 64 of a job name: the job's id inside keys. */
uint64_t rs__store_job_id(const char *job);

#endif
