/* The REST answer cache (answer_cache.h): one list, most recently used first, of every key kept
 * or in flight — at most one entry per key. A few hundred keys at most (the views of the jobs
 * being watched), so a list searched by a 64-bit hash first is enough. */
#include "server/answer_cache.h"

#include "common/hash.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Kept answers, besides the byte budget: tiny answers must not make the list long. */
#define RS_ANSWER_CACHE_MAX_KEPT 1024

struct entry {
    struct entry *next;
    uint64_t hash, gen, started_ns;
    bool pending;                     /* a scan runs for it; text NULL */
    struct rs_answer_waiter *waiters; /* joined while pending, in order */
    struct rs_answer_waiter **waiters_tail;
    char *text; /* kept answer (not pending) */
    size_t len, klen;
    unsigned char key[];
};

struct rs_answer_cache {
    struct entry *entries;
    size_t max_bytes, bytes, kept, n_entries;
    uint64_t max_age_ns;
    struct rs_answer_cache_stats st;
};

int
rs_answer_cache_new(size_t max_bytes, uint64_t max_age_ns, rs_answer_cache **out)
{
    rs_answer_cache *c = calloc(1, sizeof *c);

    if (!c)
        return -ENOMEM;
    c->max_bytes = max_bytes;
    c->max_age_ns = max_age_ns;
    *out = c;
    return 0;
}

static void
entry_free(rs_answer_cache *c, struct entry *e)
{
    if (e->text) {
        c->bytes -= e->len;
        c->kept--;
    }
    free(e->text);
    free(e);
    c->n_entries--;
}

void
rs_answer_cache_free(rs_answer_cache **pc)
{
    rs_answer_cache *c = pc ? *pc : NULL;

    if (!c)
        return;
    while (c->entries) {
        struct entry *e = c->entries;
        c->entries = e->next;
        entry_free(c, e);
    }
    free(c);
    *pc = NULL;
}

/* The entry for key and the link that points to it, or NULL. */
static struct entry *
find(rs_answer_cache *c, const void *key, size_t klen, uint64_t hash, struct entry ***link)
{
    for (struct entry **p = &c->entries; *p; p = &(*p)->next) {
        struct entry *e = *p;
        if (e->hash == hash && e->klen == klen && memcmp(e->key, key, klen) == 0) {
            *link = p;
            return e;
        }
    }
    return NULL;
}

/* Drops the least recently used kept answers until the budgets hold. */
static void
make_room(rs_answer_cache *c)
{
    while (c->bytes > c->max_bytes || c->kept > RS_ANSWER_CACHE_MAX_KEPT) {
        struct entry **victim = NULL;
        for (struct entry **p = &c->entries; *p; p = &(*p)->next)
            if ((*p)->text)
                victim = p; /* the last kept one is the least recently used */
        if (!victim)
            return;
        struct entry *e = *victim;
        *victim = e->next;
        entry_free(c, e);
        c->st.evicted++;
    }
}

int
rs_answer_cache_lookup(rs_answer_cache *c, const void *key, size_t klen, uint64_t gen,
                       uint64_t now_ns, struct rs_answer_waiter *w, char **text, size_t *len)
{
    uint64_t hash = rs_hash_fnv1a64(key, klen);
    struct entry **link = NULL, *e = find(c, key, klen, hash, &link);

    if (e && e->pending) {
        w->next = NULL;
        *e->waiters_tail = w;
        e->waiters_tail = &w->next;
        c->st.joined++;
        return RS_ANSWER_JOINED;
    }
    if (e && e->gen == gen && now_ns - e->started_ns <= c->max_age_ns) {
        char *copy = malloc(e->len + 1);
        if (!copy)
            return -ENOMEM;
        memcpy(copy, e->text, e->len + 1);
        *link = e->next; /* to the front: most recently used */
        e->next = c->entries;
        c->entries = e;
        *text = copy;
        *len = e->len;
        c->st.hits++;
        return RS_ANSWER_HIT;
    }
    if (e) { /* outdated: the entry waits for the new scan */
        free(e->text);
        c->bytes -= e->len;
        c->kept--;
        e->text = NULL;
        e->len = 0;
    } else {
        if (!(e = calloc(1, sizeof *e + klen)))
            return -ENOMEM;
        memcpy(e->key, key, klen);
        e->klen = klen;
        e->hash = hash;
        e->next = c->entries;
        c->entries = e;
        c->n_entries++;
    }
    e->pending = true;
    e->gen = gen;
    e->waiters = NULL;
    e->waiters_tail = &e->waiters;
    c->st.misses++;
    return RS_ANSWER_MISS;
}

void
rs_answer_cache_complete(rs_answer_cache *c, const void *key, size_t klen, uint64_t gen,
                         uint64_t started_ns, int status, const char *text, size_t len,
                         const void *extra)
{
    struct entry **link = NULL, *e = find(c, key, klen, rs_hash_fnv1a64(key, klen), &link);
    struct rs_answer_waiter *w;

    if (!e || !e->pending) /* a programmer's error: nothing to complete */
        return;
    w = e->waiters;
    e->pending = false;
    e->waiters = NULL;
    e->waiters_tail = &e->waiters;
    bool keep = status == 200 && text && len <= c->max_bytes / 4;
    if (status == 200 && text && !keep)
        c->st.too_big++;
    if (keep && (e->text = malloc(len + 1))) {
        memcpy(e->text, text, len);
        e->text[len] = '\0';
        e->len = len;
        e->gen = gen;
        e->started_ns = started_ns;
        c->bytes += len;
        c->kept++;
        c->st.stored++;
        *link = e->next; /* to the front: the most recent, never dropped to make room for itself */
        e->next = c->entries;
        c->entries = e;
        make_room(c);
    } else {
        *link = e->next;
        entry_free(c, e);
    }
    /* the entry is settled before any waiter runs: a waiter's answer may start another lookup */
    while (w) {
        struct rs_answer_waiter *next = w->next;
        w->done(w, status, text, len, extra);
        w = next;
    }
}

void
rs_answer_cache_get_stats(const rs_answer_cache *c, struct rs_answer_cache_stats *out)
{
    *out = c->st;
    out->entries = c->n_entries;
    out->bytes = c->bytes;
}
