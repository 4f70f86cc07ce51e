/* Running a function on the libuv loop from any thread (the writer, NNG's threads): calls are
 * queued under a mutex and drained by one uv_async handle, so coalesced wake-ups lose nothing. */
#ifndef RS_SERVER_POST_H
#define RS_SERVER_POST_H

#include <uv.h>

typedef struct rs_post rs_post;

int rs_post_new(uv_loop_t *loop, rs_post **out);

/* Runs fn(arg) on the loop thread soon. Thread-safe. Returns 0 or -ENOMEM. */
int rs_post_call(rs_post *p, void (*fn)(void *arg), void *arg);

/* On the loop thread: runs what is still queued, then closes the handle (freed in its close
 * callback). Calls posted after this are run by rs_post_drain. */
void rs_post_close(rs_post *p);

/* After the loop has stopped: runs calls that arrived late (e.g. from the writer's shutdown), then
 * frees what is left. NULL is fine. */
void rs_post_drain(rs_post *p);

#endif
