/* Cross-thread calls onto the loop (see post.h). */
#include "server/post.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct rs_post {
    uv_async_t async;
    pthread_mutex_t lock;
    struct rs_post_node *head, **tail;
    bool closed;
};

static void
run_all(rs_post *p)
{
    struct rs_post_node *list;

    pthread_mutex_lock(&p->lock);
    list = p->head;
    p->head = NULL;
    p->tail = &p->head;
    pthread_mutex_unlock(&p->lock);
    while (list) {
        struct rs_post_node *next = list->next;
        int owned = list->owned;
        list->fn(list->arg); /* may free a caller's node: read it before */
        if (owned)
            free(list);
        list = next;
    }
}

static void
on_async(uv_async_t *h)
{
    run_all(h->data);
}

int
rs_post_new(uv_loop_t *loop, rs_post **out)
{
    rs_post *p = calloc(1, sizeof *p);

    if (!p)
        return -ENOMEM;
    pthread_mutex_init(&p->lock, NULL);
    p->tail = &p->head;
    uv_async_init(loop, &p->async, on_async);
    p->async.data = p;
    *out = p;
    return 0;
}

static void
enqueue(rs_post *p, struct rs_post_node *n)
{
    pthread_mutex_lock(&p->lock);
    *p->tail = n;
    p->tail = &n->next;
    if (!p->closed) /* under the lock: rs_post_close cannot close the handle in between */
        uv_async_send(&p->async);
    pthread_mutex_unlock(&p->lock);
}

int
rs_post_call(rs_post *p, void (*fn)(void *), void *arg)
{
    struct rs_post_node *n = malloc(sizeof *n);

    if (!n)
        return -ENOMEM;
    *n = (struct rs_post_node){NULL, fn, arg, 1};
    enqueue(p, n);
    return 0;
}

void
rs_post_node_call(rs_post *p, struct rs_post_node *n, void (*fn)(void *), void *arg)
{
    *n = (struct rs_post_node){NULL, fn, arg, 0};
    enqueue(p, n);
}

void
rs_post_close(rs_post *p)
{
    run_all(p);
    pthread_mutex_lock(&p->lock);
    p->closed = true;
    pthread_mutex_unlock(&p->lock);
    uv_close((uv_handle_t *)&p->async, NULL);
}

void
rs_post_drain(rs_post *p)
{
    if (!p)
        return;
    run_all(p);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
