/* Unit tests of node-agent/collector/attach.c against the stand-in CUPTI (fake_cupti.h), each
 * case in a process of its own (t_isolated.h: attach.c keeps one state per process, as CUPTI
 * does): a detach is done only at a driver call's exit, only when the attach lock is free (the
 * callback never waits for it), never from a fork()ed child; attaching again probes for another
 * client first and stays out when one holds CUPTI; a pending detach is called off; a refused
 * cuptiFinalize is not asked again. */
#include "node-agent/collector/attach.h"
#include "tests/t.h"
#include "tests/t_isolated.h"
#include "tests/unit/collector/fake_cupti.h"

#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void CUPTIAPI
requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
}

static void CUPTIAPI
completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
}

static void *
driver_exit_thread(void *arg)
{
    (void)arg;
    fake_cupti_driver_call(CUPTI_API_EXIT);
    return NULL;
}

/* Asked for: subscribed to the driver-API domain; not done at a call's entry, nor at an exit on
 * another thread while the lock is held (that thread returns: the callback only tries the
 * lock); done at the next exit once the lock is free, the subscription gone with it. */
static void
detached_at_an_exit_when_free(void)
{
    pthread_t t;
    struct rs_attach_stats st;

    rs_attach_lock();
    T_EQ(rs_attach_detach(), 0);
    rs_attach_unlock();
    T_EQ(rs_attach_state(), RS_DETACHING);
    T_CHECK(strcmp(fake_cupti_log(), "soo") == 0); /* the driver and runtime domains */
    fake_cupti_driver_call(CUPTI_API_ENTER);
    T_EQ(rs_attach_state(), RS_DETACHING);
    rs_attach_lock();
    T_EQ(pthread_create(&t, NULL, driver_exit_thread, NULL), 0);
    T_EQ(pthread_join(t, NULL), 0); /* returned although the lock is held */
    T_EQ(rs_attach_state(), RS_DETACHING);
    rs_attach_unlock();
    fake_cupti_driver_call_exit();
    T_EQ(rs_attach_state(), RS_DETACHED);
    T_CHECK(fake_cupti_detached);
    T_CHECK(fake_cupti_subscriber() == NULL);
    rs_attach_get_stats(&st);
    T_EQ(st.detaches, 1);
    fake_cupti_driver_call_exit(); /* no subscriber: nothing */
    T_CHECK(strcmp(fake_cupti_log(), "sooZ") == 0);
}

/* A job that calls only the runtime (PyTorch launches through it; CUPTI does not report the
 * driver calls the runtime makes) is detached at a runtime call's exit. */
static void
detached_at_a_runtime_exit(void)
{
    rs_attach_lock();
    T_EQ(rs_attach_detach(), 0);
    rs_attach_unlock();
    T_EQ(rs_attach_state(), RS_DETACHING);
    fake_cupti_runtime_call_exit();
    T_EQ(rs_attach_state(), RS_DETACHED);
    T_CHECK(fake_cupti_detached);
}

/* A fork()ed child's driver calls never detach its parent's CUPTI (nor its own copy). */
static void
not_from_a_forked_child(void)
{
    int status = 0;

    rs_attach_lock();
    T_EQ(rs_attach_detach(), 0);
    rs_attach_unlock();
    pid_t pid = fork();
    if (pid == 0) {
        fake_cupti_driver_call_exit();
        _exit(rs_attach_state() == RS_DETACHING && !fake_cupti_detached ? 0 : 1);
    }
    T_CHECK(pid > 0);
    T_EQ(waitpid(pid, &status, 0), pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    fake_cupti_driver_call_exit(); /* the parent's own exit detaches */
    T_EQ(rs_attach_state(), RS_DETACHED);
}

/* Attaching again: a probe subscription (CUPTI attaches lazily there), then the zeroing attribute
 * and the buffer callbacks; counted, timed. */
static void
attached_again(void)
{
    struct rs_attach_stats st;

    rs_attach_lock();
    T_EQ(rs_attach_detach(), 0);
    rs_attach_unlock();
    fake_cupti_driver_call_exit();
    fake_cupti_reset();
    rs_attach_lock();
    T_EQ(rs_attach_attach(requested, completed), 0);
    rs_attach_unlock();
    T_EQ(rs_attach_state(), RS_ATTACHED);
    T_CHECK(strcmp(fake_cupti_log(), "suR") == 0);
    T_EQ(fake_cupti_attribute_u8(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER), 1);
    T_EQ(fake_cupti_lazy_attaches, 0);
    rs_attach_get_stats(&st);
    T_EQ(st.attaches, 1);
    struct rs_attach_event ev[8];
    size_t n = rs_attach_events(ev, 8);
    T_EQ(n, 3);
    T_CHECK(n == 3 && ev[0].what == 'R' && ev[1].what == 'D' && ev[2].what == 'A');
}

/* Another client holds CUPTI's callbacks when we come back: nothing of ours is registered, and
 * we stay detached as far as our state goes. */
static void
another_client_holds_it(void)
{
    rs_attach_lock();
    T_EQ(rs_attach_detach(), 0);
    rs_attach_unlock();
    fake_cupti_driver_call_exit();
    fake_cupti_subscribe_v2_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    fake_cupti_reset();
    rs_attach_lock();
    T_EQ(rs_attach_attach(requested, completed), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    rs_attach_unlock();
    T_EQ(rs_attach_state(), RS_DETACHED);
    T_CHECK(strchr(fake_cupti_log(), 'R') == NULL);
}

/* A detach asked for and not done yet is called off by attaching: the subscription ends, CUPTI
 * was never finalized, and no driver call detaches it afterwards. */
static void
called_off(void)
{
    struct rs_attach_stats st;

    rs_attach_lock();
    T_EQ(rs_attach_detach(), 0);
    T_EQ(rs_attach_attach(requested, completed), 0);
    rs_attach_unlock();
    T_EQ(rs_attach_state(), RS_ATTACHED);
    fake_cupti_driver_call_exit();
    T_EQ(rs_attach_state(), RS_ATTACHED);
    T_CHECK(strcmp(fake_cupti_log(), "soou") == 0);
    rs_attach_get_stats(&st);
    T_EQ(st.cancelled, 1);
    T_EQ(st.detaches, 0);
}

/* cuptiFinalize refused: still attached; asking again ends the subscription and is refused for
 * good (no new subscription). */
static void
finalize_refused(void)
{
    fake_cupti_finalize_result = CUPTI_ERROR_UNKNOWN;
    rs_attach_lock();
    T_EQ(rs_attach_detach(), 0);
    rs_attach_unlock();
    fake_cupti_driver_call_exit();
    T_EQ(rs_attach_state(), RS_ATTACHED);
    rs_attach_lock();
    T_CHECK(rs_attach_detach() != 0);
    T_CHECK(rs_attach_detach() != 0);
    rs_attach_unlock();
    T_CHECK(strcmp(fake_cupti_log(), "sooZu") == 0);
    T_CHECK(fake_cupti_subscriber() == NULL);
}

int
main(void)
{
    t_isolated_context = fake_cupti_log;
    T_RUN_ISOLATED(detached_at_an_exit_when_free);
    T_RUN_ISOLATED(detached_at_a_runtime_exit);
    T_RUN_ISOLATED(not_from_a_forked_child);
    T_RUN_ISOLATED(attached_again);
    T_RUN_ISOLATED(another_client_holds_it);
    T_RUN_ISOLATED(called_off);
    T_RUN_ISOLATED(finalize_refused);
    t_isolated_done();
    return T_DONE("collector/attach");
}
