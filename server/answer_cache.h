/* The server's cache of REST answers (routes.c): the JSON text of GET answers, kept by (route,
 * normalised parameters, job, caller's role) while the data they read has not changed, and one
 * scan shared by every request for the same answer that arrives while it runs. At 10,000 ranks
 * one answer scans for seconds; four clients polling the same job's views ran the same scans side
 * by side in the 2-thread query pool and queued everything else behind them (issue 23, soak).
 * The caller supplies a generation (any number that changes whenever the answers may change): a
 * kept answer is served only at the generation it was computed at and within its age limit. The
 * answers are text with their own content-hash ETag (http.c), so a cached one is exactly what a
 * fresh scan at that generation would have said. Loop thread only; not thread-safe. */
#ifndef RS_SERVER_ANSWER_CACHE_H
#define RS_SERVER_ANSWER_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rs_answer_cache rs_answer_cache;

/* A request waiting for a scan in flight (embed it; untouched by the caller between a lookup that
 * returned RS_ANSWER_JOINED and its done call). `done` gets the leader's HTTP status and body
 * (JSON; NULL when the leader had no memory for it) and the leader's `extra` (what else it
 * prepared: routes.c passes the text's hash and gzip form), valid during the call only. */
struct rs_answer_waiter {
    void (*done)(struct rs_answer_waiter *w, int status, const char *text, size_t len,
                 const void *extra);
    struct rs_answer_waiter *next; /* private */
};

enum rs_answer_lookup {
    RS_ANSWER_HIT = 1, /* *text holds the kept answer (the caller frees it) */
    RS_ANSWER_JOINED,  /* a scan for the same key runs: w->done will be called with its answer */
    RS_ANSWER_MISS     /* the caller runs the query and must call rs_answer_cache_complete */
};

struct rs_answer_cache_stats {
    uint64_t hits, joined, misses; /* lookups by outcome */
    uint64_t stored;               /* answers kept */
    uint64_t too_big;              /* answers over the per-answer bound: not kept */
    uint64_t evicted;              /* kept answers dropped for room (least recently used) */
    size_t entries, bytes;         /* now: keys known (kept or in flight), bytes of kept text */
};

/* A cache keeping at most max_bytes of answers (each at most max_bytes / 4), each served for at
 * most max_age_ns after its scan began. max_bytes 0 keeps nothing (scans in flight are still
 * shared). Returns 0 or -ENOMEM. */
int rs_answer_cache_new(size_t max_bytes, uint64_t max_age_ns, rs_answer_cache **out);

/* Frees the cache and sets *c to NULL. Every lookup that returned RS_ANSWER_MISS must have been
 * completed first (waiters left are dropped uncalled). NULL or *c NULL: no-op. */
void rs_answer_cache_free(rs_answer_cache **c);

/* Looks up the answer for key (klen bytes, compared whole) at generation gen, now_ns a monotonic
 * clock. Returns RS_ANSWER_HIT (a copy of the text in *text, *len; the caller frees it), or
 * RS_ANSWER_JOINED (a scan for this key is in flight, whatever its generation: w joins it — its
 * answer reflects the store when that scan began, before this request), or RS_ANSWER_MISS (the
 * caller becomes the scan for this key and must call rs_answer_cache_complete exactly once), or
 * -ENOMEM (nothing recorded: run the query uncached and do not complete). */
int rs_answer_cache_lookup(rs_answer_cache *c, const void *key, size_t klen, uint64_t gen,
                           uint64_t now_ns, struct rs_answer_waiter *w, char **text, size_t *len);

/* Ends the scan for key that rs_answer_cache_lookup answered RS_ANSWER_MISS, started at
 * generation gen at started_ns: keeps a 200 answer (copied; older ones make room), forgets any
 * other, then calls every waiter's done with (status, text, len, extra) in the order they
 * joined. text and extra stay the caller's. A waiter's done may call into the cache. */
void rs_answer_cache_complete(rs_answer_cache *c, const void *key, size_t klen, uint64_t gen,
                              uint64_t started_ns, int status, const char *text, size_t len,
                              const void *extra);

void rs_answer_cache_get_stats(const rs_answer_cache *c, struct rs_answer_cache_stats *out);

#endif
