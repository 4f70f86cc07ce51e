/* Unit tests of the collector client: frames reach a SEQPACKET listener intact and within the
 * size limit; with no agent, records are dropped and counted, and the count reaches the agent
 * once it is back; a forked child's handle is inert. */
#include "common/error.h"
#include "node-agent/collector_client.h"
#include "proto/wire.h"
#include "tests/t.h"
#include "tests/t_socket.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char sock_path[108];

/* Receives every frame queued on `fd`; returns the kernels seen, and the largest
 * dropped_records any frame carried. */
static uint64_t
drain(int fd, uint64_t *dropped, size_t *largest)
{
    static uint8_t buf[RS_WIRE_MAX_FRAME_BYTES + 1];
    uint64_t kernels = 0;
    ssize_t n;

    while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
        rs_wire_rank_frame *f;
        if ((size_t)n > *largest)
            *largest = (size_t)n;
        if (rs_wire_rank_frame_decode(buf, (size_t)n, RS_WIRE_MAX_FRAME_BYTES, &f) != 0)
            return UINT64_MAX;
        const struct rs_rank_batch *b = rs_wire_rank_frame_batch(f);
        kernels += b->n_kernels;
        if (b->dropped_records > *dropped)
            *dropped = b->dropped_records;
        rs_wire_rank_frame_free(f);
    }
    return kernels;
}

static void
add_kernels(rs_collector *c, int n)
{
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "kernel_%d", i % 50);
        struct rs_kernel_record k = {1000 + i * 10, 1005 + i * 10, rs_collector_name(c, name), 7, 0,
                                     (uint32_t)i};
        T_OK(rs_collector_add_kernel(c, &k));
    }
}

static void
frames_and_drops(void)
{
    struct rs_rank_identity id = {"job", 0, 0, 1, "host", "GPU-1", 1};
    struct rs_collector_options opts = {sock_path, 0};
    struct rs_clock_pair clock = {1, 1};
    struct rs_collector_stats st;
    rs_collector *c = NULL;
    uint64_t dropped = 0;
    size_t largest = 0;
    int lfd, afd;

    unlink(sock_path);
    T_OK(rs_collector_open(&opts, &id, &c));
    /* No agent: flush fails, records are counted as dropped. */
    add_kernels(c, 100);
    T_CHECK(rs_collector_flush(c, &clock) != 0);
    rs_collector_get_stats(c, &st);
    T_EQ(st.dropped, 100);
    rs_collector_free(c);

    /* A handle drops 100 records while no agent listens; once one does, 20,000 kernels arrive in
     * several frames, none over the limit, and the frames report the 100 dropped. */
    T_OK(rs_collector_open(&opts, &id, &c));
    add_kernels(c, 100);
    T_CHECK(rs_collector_flush(c, &clock) != 0); /* dropped: not listening yet */
    lfd = t_listen_seqpacket(sock_path);
    T_CHECK(lfd >= 0);
    sleep(1); /* reconnects are rate-limited to one per second */
    usleep(100000);
    add_kernels(c, 20000);
    T_OK(rs_collector_flush(c, &clock));
    afd = accept(lfd, NULL, NULL);
    T_CHECK(afd >= 0);
    T_EQ(drain(afd, &dropped, &largest), 20000);
    T_EQ(dropped, 100);
    T_CHECK(largest <= RS_WIRE_MAX_FRAME_BYTES);
    rs_collector_get_stats(c, &st);
    T_EQ(st.kernels, 20000);
    T_CHECK(st.frames_sent >= 2);
    /* Invalid name ids are refused and counted. */
    struct rs_kernel_record bad = {1, 2, 9999, 0, 0, 0};
    T_EQ(rs_collector_add_kernel(c, &bad), RS_E_FULL);
    rs_collector_free(c);
    close(afd);
    close(lfd);
    unlink(sock_path);
}

static void
status_without_records(void)
{
    struct rs_rank_identity id = {"job", 0, 0, 1, "host", "", 1};
    struct rs_collector_options opts = {sock_path, 0};
    struct rs_clock_pair clock = {0, 0};
    uint8_t buf[RS_WIRE_MAX_FRAME_BYTES];
    rs_wire_rank_frame *f = NULL;
    rs_collector *c = NULL;
    int lfd = t_listen_seqpacket(sock_path), afd;

    T_OK(rs_collector_open(&opts, &id, &c));
    T_OK(rs_collector_set_status(c, RS_COLLECTOR_STEPPED_ASIDE, "CUPTI is in use by Nsight"));
    T_OK(rs_collector_flush(c, &clock)); /* no records, but the status goes out */
    T_OK(rs_collector_flush(c, &clock)); /* and only once */
    afd = accept(lfd, NULL, NULL);
    ssize_t n = recv(afd, buf, sizeof buf, MSG_DONTWAIT);
    T_CHECK(n > 0 && rs_wire_rank_frame_decode(buf, (size_t)n, sizeof buf, &f) == 0);
    if (f) {
        const struct rs_rank_batch *b = rs_wire_rank_frame_batch(f);
        T_EQ(b->collector_flags, RS_COLLECTOR_STEPPED_ASIDE);
        T_CHECK(strcmp(b->collector_status, "CUPTI is in use by Nsight") == 0);
        T_EQ(b->n_kernels, 0);
    }
    T_CHECK(recv(afd, buf, sizeof buf, MSG_DONTWAIT) < 0); /* no second frame */
    rs_wire_rank_frame_free(f);
    rs_collector_free(c);
    close(afd);
    close(lfd);
    unlink(sock_path);
}

static void
bounded_buffer(void)
{
    struct rs_rank_identity id = {"job", 0, 0, 1, "host", "GPU-1", 1};
    struct rs_collector_options opts = {sock_path, 10};
    struct rs_collector_stats st;
    struct rs_step_record s = {.step = 1, .start_ns = 1, .end_ns = 2};
    rs_collector *c = NULL;

    T_OK(rs_collector_open(&opts, &id, &c));
    for (int i = 0; i < 15; i++)
        rs_collector_add_step(c, &s);
    rs_collector_get_stats(c, &st);
    T_EQ(st.dropped, 5);
    rs_collector_free(c);
    struct rs_rank_identity bad_job = {"bad job", 0, 0, 1, "h", "g", 1};
    T_EQ(rs_collector_open(&opts, &bad_job, &c), RS_E_MALFORMED);
}

static void
inert_after_fork(void)
{
    struct rs_rank_identity id = {"job", 0, 0, 1, "host", "GPU-1", 1};
    struct rs_collector_options opts = {sock_path, 0};
    struct rs_step_record s = {.step = 1, .start_ns = 1, .end_ns = 2};
    rs_collector *c = NULL;
    int status = -1;

    T_OK(rs_collector_open(&opts, &id, &c));
    pid_t pid = fork();
    if (pid == 0) {
        struct rs_clock_pair clock = {0, 0};
        int ok = rs_collector_add_step(c, &s) == RS_E_CLOSED &&
                 rs_collector_flush(c, &clock) == RS_E_CLOSED;
        _exit(ok ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    T_OK(rs_collector_add_step(c, &s)); /* the parent is unaffected */
    rs_collector_free(c);
}

int
main(void)
{
    snprintf(sock_path, sizeof sock_path, "/tmp/rs-cc-test-%d.sock", (int)getpid());
    T_RUN(frames_and_drops);
    T_RUN(status_without_records);
    T_RUN(bounded_buffer);
    T_RUN(inert_after_fork);
    unlink(sock_path);
    return T_DONE("node-agent/collector_client");
}
