/* Worker threads with bounded admission and completions on the libuv loop (see work_pool.h):
 * a mutex-protected FIFO the threads take from, a list of finished items handed back to the loop
 * through one uv_async_t (whose sends coalesce, so each wake-up drains the whole list). */
#include "server/work_pool.h"

#include "common/error.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_THREADS 64

struct rs_work_pool {
    struct rs_work_pool_options o;
    uv_async_t async;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t threads[MAX_THREADS];
    unsigned n_threads;
    struct rs_work *head, *tail;   /* waiting, FIFO */
    struct rs_work *finished;      /* ran, their done callbacks due (LIFO, reversed when run) */
    struct rs_work *all;           /* every admitted item (loop thread only) */
    _Atomic unsigned admitted;     /* items in `all` */
    bool stopping;
    bool closed;
    char name[12];
};

struct thread_arg {
    rs_work_pool *p;
    unsigned index;
};

static void *
worker(void *arg)
{
    struct thread_arg *ta = arg;
    rs_work_pool *p = ta->p;
    char name[16];

    snprintf(name, sizeof name, "%s-%u", p->name, ta->index);
    pthread_setname_np(pthread_self(), name);
    free(ta);
    /* Linux: niceness is per thread; lowering it is always allowed, failing is harmless. */
    if (p->o.nice > 0)
        (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid),
                          getpriority(PRIO_PROCESS, 0) + p->o.nice);
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stopping) /* rs_work_pool_close took what still waited */
            break;
        struct rs_work *w = p->head;
        if (!(p->head = w->next))
            p->tail = NULL;
        pthread_mutex_unlock(&p->lock);
        w->work(w);
        pthread_mutex_lock(&p->lock);
        w->next = p->finished;
        p->finished = w;
        uv_async_send(&p->async);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void
unlink_all(rs_work_pool *p, struct rs_work *w)
{
    if (w->prev_all)
        w->prev_all->next_all = w->next_all;
    else
        p->all = w->next_all;
    if (w->next_all)
        w->next_all->prev_all = w->prev_all;
    w->prev_all = w->next_all = NULL;
    p->admitted--;
}

/* Loop: the done callbacks of everything finished, in the order it finished. */
static void
deliver_finished(rs_work_pool *p)
{
    struct rs_work *list, *rev = NULL;

    pthread_mutex_lock(&p->lock);
    list = p->finished;
    p->finished = NULL;
    pthread_mutex_unlock(&p->lock);
    while (list) {
        struct rs_work *next = list->next;
        list->next = rev;
        rev = list;
        list = next;
    }
    while (rev) {
        struct rs_work *next = rev->next;
        unlink_all(p, rev);
        rev->done(rev, 0);
        rev = next;
    }
}

static void
free_pool(uv_handle_t *h)
{
    rs_work_pool *p = h->data;

    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static void
on_async(uv_async_t *h)
{
    deliver_finished(h->data);
}

int
rs_work_pool_start(uv_loop_t *loop, const struct rs_work_pool_options *o, rs_work_pool **out)
{
    rs_work_pool *p;
    int rc;

    if (o->threads == 0 || o->threads > MAX_THREADS || o->max_items == 0)
        return -EINVAL;
    if (!(p = calloc(1, sizeof *p)))
        return -ENOMEM;
    p->o = *o;
    snprintf(p->name, sizeof p->name, "%s", o->name ? o->name : "rs-work");
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    if ((rc = uv_async_init(loop, &p->async, on_async)) != 0) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return rc;
    }
    p->async.data = p;
    for (; p->n_threads < o->threads; p->n_threads++) {
        struct thread_arg *ta = malloc(sizeof *ta);
        if (!ta) {
            rc = -ENOMEM;
            break;
        }
        *ta = (struct thread_arg){p, p->n_threads};
        if ((rc = pthread_create(&p->threads[p->n_threads], NULL, worker, ta)) != 0) {
            free(ta);
            rc = -rc;
            break;
        }
    }
    if (p->n_threads < o->threads) {
        rs_work_pool_close(p); /* joins what started; freed when the loop runs */
        return rc;
    }
    *out = p;
    return 0;
}

int
rs_work_pool_submit(rs_work_pool *p, struct rs_work *w)
{
    unsigned same = 0;

    if (p->closed)
        return RS_E_CLOSED;
    if (p->admitted >= p->o.max_items)
        return RS_E_FULL;
    if (w->key && p->o.max_per_key) {
        for (struct rs_work *a = p->all; a; a = a->next_all)
            same += a->key == w->key;
        if (same >= p->o.max_per_key)
            return -EBUSY;
    }
    w->prev_all = NULL;
    w->next_all = p->all;
    if (p->all)
        p->all->prev_all = w;
    p->all = w;
    p->admitted++;
    w->next = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->tail)
        p->tail->next = w;
    else
        p->head = w;
    p->tail = w;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

unsigned
rs_work_pool_busy(const rs_work_pool *p)
{
    return p ? p->admitted : 0;
}

void
rs_work_pool_close(rs_work_pool *p)
{
    struct rs_work *waiting;

    if (!p || p->closed)
        return;
    p->closed = true;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    waiting = p->head; /* never started: taken from the queue so no thread starts them */
    p->head = p->tail = NULL;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    deliver_finished(p);
    while (waiting) {
        struct rs_work *next = waiting->next;
        unlink_all(p, waiting);
        waiting->done(waiting, RS_E_CLOSED);
        waiting = next;
    }
    uv_close((uv_handle_t *)&p->async, free_pool);
}

