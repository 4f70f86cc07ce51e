/* Running a function on the libuv loop from any thread (the writer, NNG's threads): calls are
 * queued under a mutex and drained by one uv_async handle, so coalesced wake-ups lose nothing. */
#ifndef RS_SERVER_POST_H
#define RS_SERVER_POST_H

#include <uv.h>

typedef struct rs_post rs_post;

int rs_post_new(uv_loop_t *loop, rs_post **out);

/* Runs fn(arg) on the loop thread soon. Thread-safe. Returns 0 or -ENOMEM. */
int rs_post_call(rs_post *p, void (*fn)(void *arg), void *arg);

/* A call whose memory the caller provides (embedded in the object it is about), so that posting it
 * cannot fail: for answers that must arrive (a client waits for them). The node must stay valid
 * until fn has run; fields are private. */
struct rs_post_node {
    struct rs_post_node *next;
    void (*fn)(void *);
    void *arg;
    int owned; /* private: allocated by rs_post_call */
};

/* rs_post_call with the caller's node. Thread-safe; never fails. */
void rs_post_node_call(rs_post *p, struct rs_post_node *n, void (*fn)(void *arg), void *arg);

/* On the loop thread: runs what is still queued, then closes the handle (freed in its close
 * callback). Calls posted after this are run by rs_post_drain. */
void rs_post_close(rs_post *p);

/* After the loop has stopped: runs calls that arrived late (e.g. from the writer's shutdown), then
 * frees what is left. NULL is fine. */
void rs_post_drain(rs_post *p);

#endif
