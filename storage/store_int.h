/* Internals shared by the files of storage/ (not part of the public API).
 *
 * Errors: every function of storage/ returns 0, a negative errno or an RS_E_* code (common/error.h)
 * — "a storage error" below is any of those. What an mdb_* call returns (MDB_* codes, positive
 * errno) goes through rs__store_err in the function that made the call and never leaves it as it
 * is. Scans pass a callback's non-zero value on unchanged. */
#ifndef RS_STORAGE_STORE_INT_H
#define RS_STORAGE_STORE_INT_H

#include "storage/store.h"

#include <lmdb.h>

/* known_strings.c — names the string table holds (committed) with their ids, so that ingest skips
 * their lookups and puts. A name is remembered by its id and a fingerprint (a hash of the name
 * keyed by a secret chosen at open): two names that share a hash — and so an id chain — are never
 * taken for one another (a fingerprint an attacker cannot aim at). Used by the one writer only. */
struct rs__known_slot {
    uint64_t id, fp; /* fp 0 = empty */
};
struct rs__known {
    struct rs__known_slot *slots; /* open addressing by fp */
    size_t cap, n;
    uint64_t secret;
};
/* The fingerprint of name s[0..len) (never 0). */
uint64_t rs__known_fp(const struct rs__known *k, const char *s, size_t len);
/* The id of the name with fingerprint fp when known (true), else false. */
bool rs__known_get(const struct rs__known *k, uint64_t fp, uint64_t *id);
void rs__known_add(struct rs__known *k, uint64_t fp, uint64_t id); /* best effort: a cache */
void rs__known_fini(struct rs__known *k);

/* name_numbers.c — the numbers kernel windows name kernels by (keys.h kwin_names), as the writer
 * keeps them: every committed one, by number and by hash (open addressing over numbers,
 * UINT32_MAX = empty). Filled from the store by the first transaction that needs a number, and
 * read again by one that finds the store holding a different count (another process wrote). */
struct rs__numbers {
    uint64_t *hash_of; /* by number */
    uint32_t *slots;
    size_t n, cap_hash_of, cap_slots;
    bool loaded;
};
void rs__numbers_fini(struct rs__numbers *m);

struct rs_store {
    MDB_env *env;
    struct rs__known known_strings;
    struct rs__numbers numbers;
    uint64_t map_bytes; /* the map asked for; LMDB's is RS_STORE_HEADROOM larger */
    MDB_dbi meta, dedup, jobs, ranks, series, steps, colls, strings, stepsum, kwin, names, awin;
    MDB_dbi job_keys, job_ids; /* job name <-> the job's key prefix (job_keys.c) */
    MDB_dbi gpu_ranks;         /* GPU UUID -> the rank that reported it last (gpu_ranks.c) */
    MDB_dbi verdicts;          /* straggler verdict history (verdicts.c) */
    MDB_dbi captures;          /* captures on demand (captures.c) */
    MDB_dbi hangs;             /* hang history (hangs.c) */
    MDB_dbi frame_seqs;        /* frames of each collector that arrived (keys.h) */
    MDB_dbi jtop;              /* jobs' running totals (job_top.c) */
    /* what rs_store_open found and made, for rs_store_close_discard (writer_lock.c) */
    int lock_fd;    /* DIR/writer.lock, flock'd (exclusive), or -1 */
    char *dir;      /* as given to rs_store_open */
    char *made_dir; /* the topmost directory rs_store_open created, NULL when DIR existed */
    bool made_data, made_lock_mdb, made_writer_lock; /* files that were absent before */
};

/* writer_lock.c — records which of the store's files exist before the open (made_*), and takes
 * the writer lock: 0, RS_E_LOCKED or -errno. */
void rs__store_note_files(rs_store *s);
int rs__store_lock(rs_store *s);
/* Removes what the open made (see rs_store_close_discard) and releases the lock; s stays. */
void rs__store_unmake(rs_store *s);

struct rs_store_write {
    rs_store *store;
    MDB_txn *txn;
    uint32_t uniq;                /* distinguishes chunks that start at the same nanosecond */
    struct rs__known_slot *fresh; /* names this transaction put: known once it commits */
    size_t n_fresh, cap_fresh;
    /* hashes this transaction gave numbers, in number order after the committed ones: moved into
     * the store's map when it commits, forgotten when it aborts */
    uint64_t *new_numbers;
    size_t n_new_numbers, cap_new_numbers;
    bool numbers_synced; /* the map was checked against the store in this transaction */
    struct rs__jtop_pending *jtop; /* job totals this transaction changes (job_top.c); NULL: none */
};

/* The number of the kernel name with hash h (given one, and put into kwin_names, when it has
 * none). Returns 0, RS_E_CORRUPT (kwin_names is not dense from 0), RS_E_TOO_BIG, -ENOMEM or a
 * storage error. */
int rs__numbers_number(rs_store_write *w, uint64_t hash, uint32_t *number);
/* The hash of a name number, in a write transaction (arg: the rs_store_write) through the map, or
 * in any transaction through the store and a per-scan cache (arg: a struct rs__number_cache,
 * zeroed but for txn and store). Returns 0, RS_E_CORRUPT (no such number) or a storage error. */
int rs__numbers_hash_in_write(void *arg, uint32_t number, uint64_t *hash);
#define RS__NUMBER_CACHE 256
struct rs__number_cache {
    MDB_txn *txn;
    const rs_store *store;
    bool known[RS__NUMBER_CACHE];
    uint32_t number[RS__NUMBER_CACHE];
    uint64_t hash[RS__NUMBER_CACHE];
};
int rs__numbers_hash_in_read(void *arg, uint32_t number, uint64_t *hash);
/* After a commit: the transaction's numbers join the map. */
void rs__numbers_committed(rs_store_write *w);

/* Notes that the transaction gave the name with fingerprint fp the id `id` (known_strings.c).
 * 0 or -ENOMEM. */
int rs__write_note_string(rs_store_write *w, uint64_t fp, uint64_t id);

/* gpu.c — the GPU readings of a batch filed under their ranks; a stored reading read back (uuid
 * NULL). */
int rs__store_write_gpus(rs_store_write *w, const struct rs_agent_batch *b);
struct rs_gpu_value;
void rs__gpu_value_read(const struct rs_gpu_value *v, struct rs_gpu_sample *g);
/* gpu_window.c — a rolled-up window as one reading (uuid NULL) taken at its last reading's time:
 * the means of its clocks, power, utilisation and temperature, the reason bits set in most of its
 * readings, its largest memory use, lowest link state, and its counters' last values. */
void rs__gpu_window_as_sample(const struct rs_gpu_window *w, struct rs_gpu_sample *g);

/* gpu_ranks.c — the table GPU UUID -> the rank that reported it last (keys.h gpu_ranks), kept in
 * the transaction of the rank batches that report UUIDs, so that it survives restarts.
 * rs__gpu_rank_note: rank (job_id, rank) reports `uuid` ("" or NULL: nothing) and reported
 * `old_uuid` before (NULL or "": none); the old UUID's entry goes when it names this rank. One
 * lookup when nothing changed. 0 or a storage error.
 * rs__gpu_rank_get: the rank of `uuid` when it names a stored rank that still reports it: 0,
 * RS_E_NOT_FOUND or a storage error.
 * rs__gpu_ranks_forget_job: removes the entries of the job's ranks (before the ranks go), within
 * *budget deletions (decremented). 0 or a storage error. */
int rs__gpu_rank_note(rs_store_write *w, const char *old_uuid, const char *uuid, uint64_t job_id,
                      uint32_t rank);
int rs__gpu_rank_get(MDB_txn *txn, const rs_store *s, const char *uuid, uint64_t *job_id,
                     uint32_t *rank);
int rs__gpu_ranks_forget_job(MDB_txn *txn, const rs_store *s, const uint8_t *job_id, size_t *budget,
                             uint64_t *deleted);

struct rs_store_read {
    rs_store *store;
    MDB_txn *txn;
    uint64_t deadline_ns; /* monotonic; 0 = none (rs_store_read_set_deadline) */
};

/* -ETIMEDOUT once r's deadline has passed, else 0: every scan loop asks it per entry or block. */
int rs__store_read_expired(const rs_store_read *r);

/* LMDB needs free pages even to delete: the map is this much larger than asked for, and writers
 * that fill it (ingest) stop at the asked size (rs_store_space_get reports it), so deletions that
 * make room always find some. */
#define RS_STORE_HEADROOM 1.10

/* migrate.c: converts a format-1 store (RS_STORE_FORMAT_1) into the current format. */
int rs__store_migrate_1(rs_store *s, const struct rs_store_options *o);

/* Maps what an mdb_* function returned to the store's convention: 0; RS_E_NOT_FOUND
 * (MDB_NOTFOUND); -EEXIST (MDB_KEYEXIST); RS_E_FULL (map, transaction or reader table full);
 * RS_E_CORRUPT (not an LMDB file of this build, or damaged); -errno (LMDB passes system errors
 * through as positive errno values); RS_E_STORE (any other MDB_* code). For mdb_* results only:
 * an RS_E_* code or -errno given to it is not passed through. */
int rs__store_err(int mdb_rc);

/* Reads the fixed-size value of key into out: 0, RS_E_NOT_FOUND (out zeroed), RS_E_CORRUPT
 * (a value of another size) or a storage error. */
int rs__store_get_fixed(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t klen, void *out,
                        size_t size);

/* Walks the keys from `from` on (flen bytes) while they start with prefix[plen], calling visit
 * for each (k, v); visit returns non-zero to stop (that value is returned). */
int rs__store_prefix_scan(rs_store_read *r, MDB_dbi dbi, const void *prefix, size_t plen,
                          const void *from, size_t flen,
                          int (*visit)(void *ctx, const MDB_val *k, const MDB_val *v), void *ctx);

/* A growable buffer for one resolved name (free s when done). */
struct rs__name_buf {
    char *s;
    size_t cap;
};

/* Resolves a string hash into nb ("?" when the string is missing). Returns 0, -ENOMEM or a
 * storage error. */
int rs__store_resolve_name(rs_store_read *r, struct rs__name_buf *nb, uint64_t hash);

/* Names resolved during one scan, direct-mapped by hash: kernel names repeat every step and every
 * window, and an LMDB lookup per record would cost more than the record. */
#define RS__NAME_CACHE 64
struct rs__name_cache {
    uint64_t hash[RS__NAME_CACHE];
    struct rs__name_buf name[RS__NAME_CACHE];
};
/* The name of `hash` through the cache (zeroed before the first call); *out points into the cache
 * until the next call. Returns 0, -ENOMEM or a storage error. */
int rs__name_cache_get(rs_store_read *r, struct rs__name_cache *c, uint64_t hash, const char **out);
void rs__name_cache_fini(struct rs__name_cache *c);

/* ingest.c: puts `len` bytes of packed records as one chunk of the series (job, rank, kind) of
 * `series` starting at `start` (a fresh uniq when another chunk starts at the same ns). Returns
 * 0 or a storage error (RS_E_FULL when the map is full). */
struct rs_key_series;
int rs__store_put_chunk(rs_store_write *w, const struct rs_key_series *series, uint64_t start,
                        const void *values, size_t len);

/* raw_extent.c — with rank_key = (job_id, rank) as in the ranks DB: the start of the rank's
 * oldest raw kernel or memcpy chunk (UINT64_MAX when none); the first step numbered `from` or
 * higher (0, RS_E_NOT_FOUND or a storage error); the last step that starts at or before t, or the
 * first (*found false when the rank has no steps). */
struct rs_step_value;
int rs__store_oldest_raw(MDB_txn *txn, const rs_store *s, const uint8_t *rank_key, uint64_t *out);
int rs__store_step_at_or_after(MDB_cursor *c, const uint8_t *rank_key, uint64_t from, uint64_t *num,
                               struct rs_step_value *sv);
int rs__store_step_holding(MDB_txn *txn, const rs_store *s, const uint8_t *rank_key, uint64_t t,
                           uint64_t *step, bool *found);

/* The rollup horizons of the rank whose ranks-DB entry is (k, v) (rollup_horizon.c): raw records
 * that start before *raw are rolled up (0: none), agent windows that start before *windows are
 * coarsened (0: none). Returns 0 or an error. */
struct rs_store_rollup;
int rs__rollup_horizon(rs_store_write *w, struct rs_store_rollup *ru, const MDB_val *k,
                       const MDB_val *v, uint64_t *raw, uint64_t *windows);

/* kwin.c — one contribution to a window of `kwin`, before the merge: window start and length,
 * `key` as in struct rs_kwin_entry (a name's hash, or a copy kind), and its totals. */
struct rs__kwin_sum {
    uint64_t window, window_ns, key, total_ns, max_ns, bytes;
    uint64_t count;
};

struct rs__kwin_sums {
    struct rs__kwin_sum *v;
    size_t n, cap;
};

/* Appends one contribution. Returns 0 or -ENOMEM. */
int rs__kwin_sums_add(struct rs__kwin_sums *s, const struct rs__kwin_sum *x);

/* One entry of a kwin value: key (a name's hash or a copy kind) and its totals. */
struct rs__kwin_entry {
    uint64_t key, count, total_ns, max_ns, bytes;
};

/* How name numbers become name hashes (rs__numbers_hash_in_write with the rs_store_write, or
 * rs__numbers_hash_in_read with a struct rs__number_cache). */
struct rs__kwin_keys {
    int (*hash_of)(void *arg, uint32_t number, uint64_t *hash);
    void *arg;
};

/* Whether windows of kwin kind `kind` (keys.h) name kernels; else their keys are copy kinds. */
bool rs__kwin_names_kernels(int kind);

/* Decodes a kwin value of any version (keys.h) of kwin kind `kind`, calling fn for each entry with
 * its key as a name hash (kernel kinds: version 3's numbers resolved through `keys`) or a copy kind
 * (non-zero stops and is returned); *window_ns gets the window's length. RS_E_CORRUPT for a value
 * that does not decode exactly or names an unknown number. */
int rs__kwin_value_decode(const struct rs__kwin_keys *keys, int kind, const void *data, size_t len,
                          uint64_t *window_ns, int (*fn)(void *arg, const struct rs__kwin_entry *e),
                          void *arg);

/* A decode callback (fn above, arg a struct rs__kwin_gather) that adds each entry to `all` as a
 * contribution to the window [window, window + window_ns). Returns 0 or -ENOMEM. */
struct rs__kwin_gather {
    struct rs__kwin_sums *all;
    uint64_t window, window_ns;
};
int rs__kwin_gather_entry(void *arg, const struct rs__kwin_entry *e);

/* Folds the contributions (sorts `sums`) and merges each window's into what the store holds for
 * (rank_key = job_id, rank; kind: enum rs_kwin_kind) — rollup kinds in kwin, agent kinds in awin
 * (what a format-3 store keeps of a window in kwin stays there) — in the open transaction;
 * *windows counts the windows written. A window takes the longest length it was given. Returns 0,
 * RS_E_CORRUPT, RS_E_TOO_BIG, -ENOMEM or a storage error. */
int rs__kwin_merge(rs_store_write *w, const uint8_t *rank_key, int kind, struct rs__kwin_sums *sums,
                   uint64_t *windows);

/* awin.c — one rank's agent windows (keys.h rs_key_awin), block by block. */
struct rs_key_awin;
void rs__awin_key(struct rs_key_awin *k, const uint8_t *rank_key, int kind, uint64_t start,
                  uint16_t part);
/* The block of a window that starts at `start` (keys.h RS_AWIN_BLOCK_NS). */
uint32_t rs__awin_block(uint64_t start);

/* A walk over the windows of (rank_key = job_id, rank; kind) that start in [from, until), in
 * time order (parts in order): set the fields, `on` false, then call rs__awin_next until it
 * returns non-zero. A caller that deletes the window under the cursor sets `on` false again (the
 * next call then seeks). A block where the rank has nothing costs one or two seeks; blocks that
 * hold nothing of the job cost none. */
struct rs__awin_walk {
    MDB_cursor *c;
    const uint8_t *rank_key;
    int kind;
    uint64_t from, until;
    uint32_t block; /* where the walk is (set by the first call) */
    bool on;        /* the cursor is on the last window returned */
};
/* The walk's next window: 0 with k and v set (the cursor on it), RS_E_NOT_FOUND at the end,
 * RS_E_CORRUPT for a key of another size, or a storage error. */
int rs__awin_next(struct rs__awin_walk *w, MDB_val *k, MDB_val *v);

/* scan.c — reads a steps-DB value (struct rs_step_value or rs_step_measured_value) into rec's
 * times and metrics (rec->step is left alone). False for a value of neither size. */
struct rs_step_record;
bool rs__step_value_read(const MDB_val *v, struct rs_step_record *rec);

/* captures.c: a captures entry (keys.h) as the server's capture; false when it is not one. */
bool rs__store_capture_value_read(const MDB_val *k, const MDB_val *v, struct rs_store_capture *out);

/* job_top.c — a job's running totals (keys.h job_top), in the writer's transaction.
 * rs__jtop_rank_batch: adds a rank batch of job_id whose strings have the ids hashes[]; a job that
 * existed before this transaction without totals (job_existed) gets none; replaced_collective: the
 * batch replaced a stored NCCL kernel record (the totals stop being exact).
 * rs__jtop_windows: a rollup wrote the windows of `sums` for rank_key (job_id, rank), kernel
 * windows when `kernels`: their spans widen the job's.
 * Both keep what they change in w until rs__jtop_flush writes it (one merge per total and
 * transaction), which rs_store_write_commit calls before the commit; rs__jtop_forget drops it
 * (an abort). All return 0 or a storage error. */
struct rs__jtop_pending;
int rs__jtop_flush(rs_store_write *w);
void rs__jtop_forget(rs_store_write *w);
struct rs_rank_batch;
int rs__jtop_rank_batch(rs_store_write *w, uint64_t job_id, const struct rs_rank_batch *b,
                        const uint64_t *hashes, bool job_existed, bool replaced_collective);
int rs__jtop_windows(rs_store_write *w, const uint8_t *rank_key, bool kernels,
                     const struct rs__kwin_sums *sums);

/* FNV-1a 64 of a job name: the job's id inside keys. */
/* Job keys (job_keys.c). Every key of a job starts with its 8-byte id: the FNV-1a hash of its
 * name when that is free, else the next free candidate — two names can never share one (hashes
 * alone once let one job overwrite another's ranks and a delete wipe both). job_keys maps the name
 * to the id, job_ids the id back to the name. Jobs of stores written before (format 4 and older)
 * have the hash as id; a writer opening such a store records them (rs__store_index_jobs).
 * rs__store_job_key: the id of an existing job (RS_E_NOT_FOUND for none — never a hash of an
 * unknown name, which could be another job's); rs__store_job_intern: the same, giving a new job
 * its id; rs__store_job_forget: removes the maps (the job's deletion, last); rs__store_job_hash:
 * the first candidate. All return 0 or a storage error. */
int rs__store_job_key(MDB_txn *txn, const rs_store *s, const char *job, uint64_t *id);
int rs__store_job_intern(MDB_txn *txn, const rs_store *s, const char *job, uint64_t *id);
int rs__store_job_forget(MDB_txn *txn, const rs_store *s, const char *job);
int rs__store_index_jobs(MDB_txn *txn, const rs_store *s);
uint64_t rs__store_job_hash(const char *job, size_t len);

#endif
