/* Unit tests of the collector's capture state machine (node-agent/capture_run.c) and the control
 * reader under it (rs_collector_poll_control), against a SEQPACKET socket standing in for the
 * agent: an order for this rank starts once (a repeated id is ignored), its frames carry the
 * capture id and a started report, and when its seconds are over a done report, the mark going one
 * flush later; an order for another rank is ignored; a second order while one runs fails "busy";
 * a refused start fails with the collector's reason; a partial start says what did not run; a
 * capture running at the end is reported done; garbage and truncated control frames are dropped
 * and counted, and the orders after them still arrive. */
#include "common/error.h"
#include "node-agent/capture_run.h"
#include "node-agent/collector_client.h"
#include "proto/capture.h"
#include "proto/wire.h"
#include "tests/t.h"
#include "tests/t_socket.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define S 1000000000ull

static char sock_path[108];

/* What the fake collector's start/stop were asked. */
static struct {
    int starts, stops;
    uint32_t ran;       /* what start says ran */
    const char *refuse; /* start fails with this */
} ops_state;

static int
fake_start(void *arg, uint32_t kinds, uint32_t seconds, uint32_t *ran, char *why, size_t len)
{
    ops_state.starts++;
    if (ops_state.refuse) {
        snprintf(why, len, "%s", ops_state.refuse);
        return -1;
    }
    *ran = kinds & ops_state.ran;
    if (*ran != kinds)
        snprintf(why, len, "not on here");
    return 0;
}

static void
fake_stop(void *arg, uint32_t ran)
{
    ops_state.stops++;
}

/* How many more ticks the fake says the capture's records are still to come (-1: forever). */
static int pending_ticks;

static bool
fake_pending(void *arg, uint32_t ran)
{
    if (pending_ticks == 0)
        return false;
    if (pending_ticks > 0)
        pending_ticks--;
    return true;
}

/* The frames the agent side got since last time: the last frame's mark, and its reports. */
struct seen {
    int frames;
    uint64_t mark;
    struct rs_capture_report reports[16];
    int n_reports;
};

static void
read_frames(int fd, struct seen *s)
{
    static uint8_t buf[RS_WIRE_MAX_FRAME_BYTES + 1];
    ssize_t n;

    memset(s, 0, sizeof *s);
    while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
        rs_wire_rank_frame *f;
        if (rs_wire_rank_frame_decode(buf, (size_t)n, RS_WIRE_MAX_FRAME_BYTES, &f) != 0)
            continue;
        const struct rs_rank_batch *b = rs_wire_rank_frame_batch(f);
        s->frames++;
        s->mark = b->capture_id;
        for (uint32_t i = 0; i < b->n_captures && s->n_reports < 16; i++)
            s->reports[s->n_reports++] = b->captures[i];
        rs_wire_rank_frame_free(f);
    }
}

static void
send_order(int fd, uint64_t id, const char *job, uint32_t rank, uint32_t kinds, uint32_t seconds)
{
    struct rs_capture_order o = {.id = id, .rank = rank, .kinds = kinds, .seconds = seconds};
    uint8_t buf[RS_CAPTURE_MAX_CONTROL_BYTES];
    size_t len;

    snprintf(o.job, sizeof o.job, "%s", job);
    T_EQ(rs_capture_control_encode(&o, 1, buf, sizeof buf, &len), 0);
    T_EQ(send(fd, buf, len, 0), (ssize_t)len);
}

/* One flush: the state machine's step, then the handle's flush (with a step record, as a
 * collector sending steady records). */
static void
flush(struct rs_capture_run *r, rs_collector *c, uint64_t mono)
{
    struct rs_clock_pair clock = {1, 1};
    struct rs_step_record st = {.step = mono / S, .start_ns = mono + 1, .end_ns = mono + 2};

    rs_capture_run_tick(r, c, mono, 1000 + mono);
    rs_collector_add_step(c, &st);
    rs_collector_flush(c, &clock);
}

/* Rank 1 of "job" with `ops` (the fake's state reset): its handle *c connected to a stand-in agent
 * listening on *lfd, whose end is *afd, after one flush. */
static void
connected(struct rs_capture_run *run, const struct rs_capture_ops *ops, rs_collector **c, int *lfd,
          int *afd)
{
    struct rs_rank_identity id = {"job", 1, 1, 4, "host", "GPU-1", 1};
    struct rs_collector_options opts = {sock_path, 0};

    memset(&ops_state, 0, sizeof ops_state);
    ops_state.ran = RS_CAPTURE_KINDS_ALL;
    *lfd = t_listen_seqpacket(sock_path);
    T_CHECK(*lfd >= 0);
    T_OK(rs_collector_open(&opts, &id, c));
    rs_capture_run_init(run, "job", 1, ops);
    flush(run, *c, 0); /* connects */
    T_CHECK((*afd = accept(*lfd, NULL, NULL)) >= 0);
}

static void
lifecycle(void)
{
    struct rs_capture_ops ops = {fake_start, fake_stop, NULL, NULL};
    struct rs_capture_run run;
    struct rs_collector_stats st;
    struct seen s;
    int lfd, afd;
    rs_collector *c = NULL;

    connected(&run, &ops, &c, &lfd, &afd);

    read_frames(afd, &s);
    T_EQ(s.frames, 1);
    T_EQ(s.mark, 0);

    send_order(afd, 7, "job", 2, RS_CAPTURE_KERNELS, 5); /* another rank's */
    send_order(afd, 8, "job", 1, RS_CAPTURE_KERNELS, 5);
    send_order(afd, 8, "job", 1, RS_CAPTURE_KERNELS, 5); /* repeated by the server */
    flush(&run, c, 1 * S);
    read_frames(afd, &s);
    T_EQ(ops_state.starts, 1);
    T_EQ(run.ignored, 1);
    T_EQ(s.mark, 8);
    T_EQ(s.n_reports, 1);
    T_EQ(s.reports[0].id, 8);
    T_EQ(s.reports[0].state, RS_CAPTURE_STARTED);
    T_EQ(s.reports[0].kinds, RS_CAPTURE_KERNELS);
    T_EQ(s.reports[0].time_ns, 1000 + 1 * S);

    send_order(afd, 9, "job", 1, RS_CAPTURE_KERNELS, 5); /* while 8 runs */
    flush(&run, c, 2 * S);
    read_frames(afd, &s);
    T_EQ(s.n_reports, 1);
    T_EQ(s.reports[0].id, 9);
    T_EQ(s.reports[0].state, RS_CAPTURE_FAILED);
    T_CHECK(strstr(s.reports[0].message, "busy with capture 8") != NULL);
    T_EQ(s.mark, 8);

    flush(&run, c, 5 * S); /* 4 s in: still running */
    read_frames(afd, &s);
    T_EQ(s.n_reports, 0);
    T_EQ(ops_state.stops, 0);
    flush(&run, c, 6 * S); /* its 5 s are over */
    read_frames(afd, &s);
    T_EQ(ops_state.stops, 1);
    T_EQ(s.n_reports, 1);
    T_EQ(s.reports[0].state, RS_CAPTURE_DONE);
    T_EQ(s.mark, 8); /* the records CUPTI still held go with the mark */
    flush(&run, c, 7 * S);
    read_frames(afd, &s);
    T_EQ(s.mark, 0);

    /* refused, then partial, then running at the end */
    ops_state.refuse = "CUPTI refused";
    send_order(afd, 10, "job", 1, RS_CAPTURE_KERNELS, 5);
    flush(&run, c, 8 * S);
    read_frames(afd, &s);
    T_EQ(s.n_reports, 1);
    T_EQ(s.reports[0].state, RS_CAPTURE_FAILED);
    T_CHECK(strcmp(s.reports[0].message, "CUPTI refused") == 0);
    T_EQ(s.mark, 0);
    ops_state.refuse = NULL;
    ops_state.ran = RS_CAPTURE_KERNELS;
    send_order(afd, 11, "job", 1, RS_CAPTURE_KINDS_ALL, 30);
    flush(&run, c, 9 * S);
    read_frames(afd, &s);
    T_EQ(s.n_reports, 1);
    T_EQ(s.reports[0].state, RS_CAPTURE_STARTED);
    T_EQ(s.reports[0].kinds, RS_CAPTURE_KERNELS);
    T_CHECK(strcmp(s.reports[0].message, "pc_sampling not available: not on here") == 0);
    rs_capture_run_finish(&run, c, 5000);
    struct rs_clock_pair clock = {1, 1};
    rs_collector_flush(c, &clock);
    read_frames(afd, &s);
    T_EQ(s.n_reports, 1);
    T_EQ(s.reports[0].state, RS_CAPTURE_DONE);
    T_CHECK(strstr(s.reports[0].message, "until the process finished") != NULL);

    /* hostile frames: garbage, an invalid order, a frame over the limit; then a good one */
    static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0x0f};
    uint8_t big[RS_CAPTURE_MAX_CONTROL_BYTES + 100];
    memset(big, 0x0a, sizeof big);
    T_EQ(send(afd, garbage, sizeof garbage, 0), (ssize_t)sizeof garbage);
    T_EQ(send(afd, big, sizeof big, 0), (ssize_t)sizeof big);
    send_order(afd, 12, "job", 1, RS_CAPTURE_KERNELS, 1);
    flush(&run, c, 40 * S);
    read_frames(afd, &s);
    rs_collector_get_stats(c, &st);
    T_EQ(st.control_rejected, 2);
    T_EQ(s.n_reports, 1);
    T_EQ(s.reports[0].id, 12);
    T_EQ(s.reports[0].state, RS_CAPTURE_STARTED);

    /* the agent goes away: polling says so and nothing breaks */
    close(afd);
    struct rs_capture_order o[RS_CAPTURE_MAX_ORDERS];
    uint32_t n = 9;
    T_EQ(rs_collector_poll_control(c, o, RS_CAPTURE_MAX_ORDERS, &n), -ENOTCONN);
    T_EQ(n, 0);
    flush(&run, c, 50 * S);
    rs_collector_free(c);
    close(lfd);
    unlink(sock_path);
}

/* One flush at `mono`: the mark of the last frame the agent side got. */
static uint64_t
mark_after(struct rs_capture_run *r, rs_collector *c, int afd, uint64_t mono)
{
    struct seen s;

    flush(r, c, mono);
    read_frames(afd, &s);
    return s.mark;
}

/* Records still to come after the capture's seconds (a PC-sampling window drained at the first
 * launch after its end): the mark stays while the collector says so and for one flush after — the
 * flush that sends what was drained — not one flush after the end only (stall samples drained
 * later went unmarked: 0 of 1.6 M counted as a capture's on the H100); a collector that never
 * drains holds it at most RS_CAPTURE_RUN_MAX_HELD flushes. */
static void
mark_waits_for_pending_records(void)
{
    struct rs_capture_ops ops = {fake_start, fake_stop, NULL, fake_pending};
    struct rs_capture_run run;
    struct seen s;
    int lfd, afd;
    rs_collector *c = NULL;

    connected(&run, &ops, &c, &lfd, &afd);

    send_order(afd, 8, "job", 1, RS_CAPTURE_KINDS_ALL, 2);
    flush(&run, c, 1 * S);
    read_frames(afd, &s);
    T_EQ(s.mark, 8);
    pending_ticks = 2;
    flush(&run, c, 3 * S); /* its seconds are over: done, the mark stays as before */
    read_frames(afd, &s);
    T_EQ(s.reports[0].state, RS_CAPTURE_DONE);
    T_EQ(s.mark, 8);
    uint64_t t = 3 * S;
    for (int i = 0; i < 3; i++) /* two ticks pending, then the one that sends the drain */
        T_EQ(mark_after(&run, c, afd, t += S / 4), 8);
    T_EQ(mark_after(&run, c, afd, t += S / 4), 0);

    /* never drained: held RS_CAPTURE_RUN_MAX_HELD flushes, then let go */
    send_order(afd, 9, "job", 1, RS_CAPTURE_KINDS_ALL, 1);
    flush(&run, c, t += S / 4);
    flush(&run, c, t += 2 * S);
    pending_ticks = -1;
    for (unsigned i = 0; i < RS_CAPTURE_RUN_MAX_HELD; i++)
        flush(&run, c, t += S / 4);
    T_EQ(mark_after(&run, c, afd, t += S / 4), 9);
    T_EQ(mark_after(&run, c, afd, t += S / 4), 0);
    pending_ticks = 0;
    close(afd);
    rs_collector_free(c);
    close(lfd);
    unlink(sock_path);
}

int
main(void)
{
    snprintf(sock_path, sizeof sock_path, "/tmp/rs-capture-run-%d.sock", (int)getpid());
    T_RUN(lifecycle);
    T_RUN(mark_waits_for_pending_records);
    return T_DONE("node-agent/capture_run");
}
