/* Unit tests of server/answer_cache.c: a kept answer is served only at its generation and within
 * its age; requests for a key in flight join that one scan and all get its answer (errors too,
 * which are never kept); keys differ by every byte (a role or a parameter); the byte budget drops
 * the least recently used; a waiter's answer may start the next lookup. */
#include "server/answer_cache.h"
#include "tests/t.h"

#include <stdlib.h>
#include <string.h>

struct waiter {
    struct rs_answer_waiter w;
    int calls, status;
    char text[64];
    rs_answer_cache *again; /* when set: a lookup of "k2" from inside done */
    int again_rc;
    const void *extra; /* what the leader passed along */
};

static void
waiter_done(struct rs_answer_waiter *w, int status, const char *text, size_t len,
            const void *extra)
{
    struct waiter *x = (struct waiter *)w;
    x->calls++;
    x->status = status;
    x->extra = extra;
    snprintf(x->text, sizeof x->text, "%.*s", (int)len, text ? text : "");
    if (x->again) {
        struct rs_answer_waiter other = {waiter_done, NULL};
        char *t = NULL;
        size_t n = 0;
        x->again_rc = rs_answer_cache_lookup(x->again, "k2", 2, 1, 0, &other, &t, &n);
        free(t);
    }
}

static int
lookup(rs_answer_cache *c, const char *key, uint64_t gen, uint64_t now, struct waiter *w,
       char out[64])
{
    char *t = NULL;
    size_t n = 0;
    int rc = rs_answer_cache_lookup(c, key, strlen(key), gen, now, &w->w, &t, &n);
    if (rc == RS_ANSWER_HIT) {
        snprintf(out, 64, "%.*s", (int)n, t);
        free(t);
    }
    return rc;
}

static void
test_generation_and_age(void)
{
    rs_answer_cache *c = NULL;
    struct waiter w = {{waiter_done, NULL}, 0, 0, "", NULL, 0, NULL};
    char out[64] = "";

    T_OK(rs_answer_cache_new(1 << 20, 1000, &c));
    T_EQ(lookup(c, "jobs", 7, 100, &w, out), RS_ANSWER_MISS);
    rs_answer_cache_complete(c, "jobs", 4, 7, 100, 200, "{\"a\":1}", 7, NULL);
    T_EQ(lookup(c, "jobs", 7, 600, &w, out), RS_ANSWER_HIT);
    T_CHECK(strcmp(out, "{\"a\":1}") == 0);
    T_EQ(lookup(c, "jobs", 7, 1100, &w, out), RS_ANSWER_HIT); /* age 1000: still served */
    T_EQ(lookup(c, "jobs", 7, 1101, &w, out), RS_ANSWER_MISS);  /* older than its age limit */
    rs_answer_cache_complete(c, "jobs", 4, 7, 1101, 200, "{\"a\":2}", 7, NULL);
    T_EQ(lookup(c, "jobs", 8, 1102, &w, out), RS_ANSWER_MISS); /* the data changed */
    rs_answer_cache_complete(c, "jobs", 4, 8, 1102, 200, "{\"a\":3}", 7, NULL);
    T_EQ(lookup(c, "jobs", 8, 1103, &w, out), RS_ANSWER_HIT);
    T_CHECK(strcmp(out, "{\"a\":3}") == 0);
    /* another role, another parameter: another key, although a prefix of it */
    T_EQ(lookup(c, "jobsX", 8, 1103, &w, out), RS_ANSWER_MISS);
    rs_answer_cache_complete(c, "jobsX", 5, 8, 1103, 404, "{\"error\":1}", 11, NULL);
    T_EQ(lookup(c, "jobsX", 8, 1104, &w, out), RS_ANSWER_MISS); /* errors are never kept */
    rs_answer_cache_complete(c, "jobsX", 5, 8, 1104, 200, "{}", 2, NULL);
    struct rs_answer_cache_stats st;
    rs_answer_cache_get_stats(c, &st);
    T_EQ(st.hits, 3);
    T_EQ(st.misses, 5);
    T_EQ(st.stored, 4);
    T_EQ(st.entries, 2);
    T_EQ(st.bytes, 9);
    T_EQ(w.calls, 0);
    rs_answer_cache_free(&c);
    T_CHECK(c == NULL);
}

static void
test_scan_in_flight_is_shared(void)
{
    rs_answer_cache *c = NULL;
    struct waiter a = {{waiter_done, NULL}, 0, 0, "", NULL, 0, NULL}, b = a, d = a, e = a;
    char out[64];

    T_OK(rs_answer_cache_new(1 << 20, 1000000, &c));
    T_EQ(lookup(c, "top", 1, 0, &a, out), RS_ANSWER_MISS);
    T_EQ(lookup(c, "top", 1, 1, &b, out), RS_ANSWER_JOINED);
    T_EQ(lookup(c, "top", 2, 2, &d, out), RS_ANSWER_JOINED); /* newer data: joins all the same */
    rs_answer_cache_complete(c, "top", 3, 1, 0, 504, "{\"e\":504}", 9, NULL);
    T_EQ(b.calls, 1);
    T_EQ(d.calls, 1);
    T_EQ(b.status, 504);
    T_CHECK(strcmp(d.text, "{\"e\":504}") == 0);
    T_EQ(a.calls, 0); /* the leader answers its own client */
    /* after the failure the next request scans again, and its joiners get the 200 */
    T_EQ(lookup(c, "top", 2, 3, &a, out), RS_ANSWER_MISS);
    T_EQ(lookup(c, "top", 2, 4, &e, out), RS_ANSWER_JOINED);
    static const int prepared = 42; /* the leader's extra reaches its waiters as given */
    rs_answer_cache_complete(c, "top", 3, 2, 3, 200, "[1]", 3, &prepared);
    T_EQ(e.calls, 1);
    T_CHECK(e.extra == &prepared && b.extra == NULL);
    T_EQ(e.status, 200);
    T_CHECK(strcmp(e.text, "[1]") == 0);
    T_EQ(lookup(c, "top", 2, 5, &a, out), RS_ANSWER_HIT);
    T_CHECK(strcmp(out, "[1]") == 0);
    struct rs_answer_cache_stats st;
    rs_answer_cache_get_stats(c, &st);
    T_EQ(st.joined, 3);
    rs_answer_cache_free(&c);
}

static void
test_budget_drops_least_recently_used(void)
{
    rs_answer_cache *c = NULL;
    struct waiter w = {{waiter_done, NULL}, 0, 0, "", NULL, 0, NULL};
    char big[41], out[64];

    memset(big, 'x', 40);
    big[40] = '\0';
    T_OK(rs_answer_cache_new(100, 1000, &c)); /* answers up to 25 bytes kept */
    T_EQ(lookup(c, "big", 1, 0, &w, out), RS_ANSWER_MISS);
    rs_answer_cache_complete(c, "big", 3, 1, 0, 200, big, 40, NULL);
    T_EQ(lookup(c, "big", 1, 0, &w, out), RS_ANSWER_MISS); /* too big to keep */
    rs_answer_cache_complete(c, "big", 3, 1, 0, 200, big, 40, NULL);
    const char *keys[] = {"k0", "k1", "k2", "k3", "k4"};
    for (int i = 0; i < 4; i++) { /* 4 x 25 bytes: the budget */
        T_EQ(lookup(c, keys[i], 1, 0, &w, out), RS_ANSWER_MISS);
        rs_answer_cache_complete(c, keys[i], 2, 1, 0, 200, big, 25, NULL);
    }
    T_EQ(lookup(c, "k0", 1, 0, &w, out), RS_ANSWER_HIT); /* k0 is now the most recent */
    T_EQ(lookup(c, "k4", 1, 0, &w, out), RS_ANSWER_MISS);
    rs_answer_cache_complete(c, "k4", 2, 1, 0, 200, big, 25, NULL); /* drops k1, the least recent */
    T_EQ(lookup(c, "k0", 1, 0, &w, out), RS_ANSWER_HIT);
    T_EQ(lookup(c, "k2", 1, 0, &w, out), RS_ANSWER_HIT);
    T_EQ(lookup(c, "k1", 1, 0, &w, out), RS_ANSWER_MISS);
    rs_answer_cache_complete(c, "k1", 2, 1, 0, 500, "{}", 2, NULL);
    struct rs_answer_cache_stats st;
    rs_answer_cache_get_stats(c, &st);
    T_EQ(st.too_big, 2);
    T_EQ(st.evicted, 1);
    T_CHECK(st.bytes <= 100);
    rs_answer_cache_free(&c);
}

static void
test_waiter_may_look_up_again(void)
{
    rs_answer_cache *c = NULL;
    struct waiter a = {{waiter_done, NULL}, 0, 0, "", NULL, 0, NULL}, b = a;
    char out[64];

    b.again = NULL;
    T_OK(rs_answer_cache_new(0, 1000, &c)); /* keeps nothing, still shares scans in flight */
    T_EQ(lookup(c, "k2", 1, 0, &a, out), RS_ANSWER_MISS);
    b.again = c;
    T_EQ(lookup(c, "k2", 1, 0, &b, out), RS_ANSWER_JOINED);
    rs_answer_cache_complete(c, "k2", 2, 1, 0, 200, "{}", 2, NULL);
    T_EQ(b.calls, 1);
    T_EQ(b.again_rc, RS_ANSWER_MISS); /* settled before the waiter ran: a new scan */
    rs_answer_cache_complete(c, "k2", 2, 1, 0, 200, "{}", 2, NULL);
    struct rs_answer_cache_stats st;
    rs_answer_cache_get_stats(c, &st);
    T_EQ(st.stored, 0);
    T_EQ(st.entries, 0);
    rs_answer_cache_free(&c);
}

int
main(void)
{
    T_RUN(test_generation_and_age);
    T_RUN(test_scan_in_flight_is_shared);
    T_RUN(test_budget_drops_least_recently_used);
    T_RUN(test_waiter_may_look_up_again);
    return T_DONE("unit/server/answer_cache");
}
