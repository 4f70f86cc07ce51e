/* Unit tests of captures on the wire (proto/capture.c, the capture parts of proto/wire.c): the
 * control frame round-trips and refuses what breaks a limit (no orders, too many, id 0, a bad job,
 * unknown kinds, 0 or 61 seconds, a huge rank, truncated and oversized frames); capture reports and
 * the capture mark round-trip inside a rank frame, and an invalid report makes the frame invalid;
 * capture orders round-trip inside a server reply, which stays under its size limit with the most
 * orders of the longest jobs and the longest error text. */
#include "common/error.h"
#include "proto/capture.h"
#include "proto/wire.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <string.h>

static struct rs_capture_order
order(uint64_t id, const char *job, uint32_t rank, uint32_t kinds, uint32_t seconds)
{
    struct rs_capture_order o = {.id = id, .rank = rank, .kinds = kinds, .seconds = seconds};
    snprintf(o.job, sizeof o.job, "%s", job);
    return o;
}

static void
control_round_trip(void)
{
    struct rs_capture_order in[2] = {order(7, "job-a", 3, RS_CAPTURE_KERNELS, 5),
                                     order(8, "job-a", 4, RS_CAPTURE_KINDS_ALL, 60)};
    struct rs_capture_order out[RS_CAPTURE_MAX_ORDERS];
    uint8_t buf[RS_CAPTURE_MAX_CONTROL_BYTES];
    size_t len = 0;
    uint32_t n = 0;

    T_OK(rs_capture_control_encode(in, 2, buf, sizeof buf, &len));
    T_OK(rs_capture_control_decode(buf, len, out, &n));
    T_EQ(n, 2);
    T_EQ(out[0].id, 7);
    T_EQ(out[0].rank, 3);
    T_EQ(out[0].kinds, RS_CAPTURE_KERNELS);
    T_EQ(out[0].seconds, 5);
    T_EQ(out[1].id, 8);
    T_EQ(out[1].rank, 4);
    T_EQ(out[1].kinds, RS_CAPTURE_KINDS_ALL);
    T_EQ(out[1].seconds, 60);
    T_CHECK(strcmp(out[1].job, "job-a") == 0);
    /* truncations never decode to something else silently: each is refused or a valid subset */
    for (size_t cut = 0; cut < len; cut++) {
        int rc = rs_capture_control_decode(buf, cut, out, &n);
        T_CHECK(rc != 0 || (n <= 2 && rs_capture_order_valid(&out[0])));
    }
}

static void
control_refusals(void)
{
    struct rs_capture_order bad[] = {
        order(0, "j", 0, RS_CAPTURE_KERNELS, 5),   /* id 0 */
        order(1, "a b", 0, RS_CAPTURE_KERNELS, 5), /* job */
        order(1, "", 0, RS_CAPTURE_KERNELS, 5),    /* job */
        order(1, "j", 0, 0, 5),                    /* no kind */
        order(1, "j", 0, 4, 5),                    /* unknown kind */
        order(1, "j", 0, RS_CAPTURE_KERNELS, 0),   /* seconds */
        order(1, "j", 0, RS_CAPTURE_KERNELS, 61),  /* seconds */
        order(1, "j", RS_CAPTURE_MAX_RANK + 1, RS_CAPTURE_KERNELS, 5),
    };
    uint8_t buf[RS_CAPTURE_MAX_CONTROL_BYTES * 2];
    struct rs_capture_order out[RS_CAPTURE_MAX_ORDERS], many[RS_CAPTURE_MAX_ORDERS + 1];
    size_t len;
    uint32_t n = 99;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_CHECK(!rs_capture_order_valid(&bad[i]));
        T_EQ(rs_capture_control_encode(&bad[i], 1, buf, sizeof buf, &len), RS_E_MALFORMED);
    }
    for (uint32_t i = 0; i <= RS_CAPTURE_MAX_ORDERS; i++)
        many[i] = order(i + 1, "j", i, RS_CAPTURE_KERNELS, 1);
    T_EQ(rs_capture_control_encode(many, 0, buf, sizeof buf, &len), RS_E_MALFORMED);
    T_EQ(rs_capture_control_encode(many, RS_CAPTURE_MAX_ORDERS + 1, buf, sizeof buf, &len),
         RS_E_MALFORMED);
    T_OK(rs_capture_control_encode(many, RS_CAPTURE_MAX_ORDERS, buf, sizeof buf, &len));
    T_EQ(rs_capture_control_encode(many, 1, buf, 4, &len), RS_E_TOO_BIG);
    /* a frame of nine orders, hand-made by repeating one encoded order */
    size_t one;
    uint8_t single[256];
    T_OK(rs_capture_control_encode(many, 1, single, sizeof single, &one));
    for (int i = 0; i < 9; i++)
        memcpy(buf + i * one, single, one);
    T_EQ(rs_capture_control_decode(buf, 9 * one, out, &n), RS_E_MALFORMED);
    T_EQ(n, 99);                                                      /* nothing written */
    T_EQ(rs_capture_control_decode(buf, 0, out, &n), RS_E_MALFORMED); /* no orders */
    T_EQ(rs_capture_control_decode(buf, RS_CAPTURE_MAX_CONTROL_BYTES + 1, out, &n), RS_E_TOO_BIG);
    static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    T_EQ(rs_capture_control_decode(garbage, sizeof garbage, out, &n), RS_E_MALFORMED);
}

static void
reports_in_rank_frame(void)
{
    static const char *const names[] = {"k"};
    static const struct rs_kernel_record k = {1000, 2000, 0, 7, 0, 0};
    struct rs_capture_report rep[2] = {
        {.id = 5, .state = RS_CAPTURE_STARTED, .time_ns = 1000, .kinds = RS_CAPTURE_KERNELS},
        {.id = 5, .state = RS_CAPTURE_DONE, .time_ns = 2000}};
    rs_capture_report_set_message(&rep[1], "ran 5 s");
    struct rs_rank_batch b = {.identity = T_IDENTITY("job", 0, 1, "GPU-1"),
                              .strings = names,
                              .n_strings = 1,
                              .kernels = &k,
                              .n_kernels = 1,
                              .capture_id = 5,
                              .captures = rep,
                              .n_captures = 2};
    uint8_t buf[4096];
    size_t len;
    rs_wire_rank_frame *f;

    T_OK(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len));
    T_OK(rs_wire_rank_frame_decode(buf, len, sizeof buf, &f));
    const struct rs_rank_batch *d = rs_wire_rank_frame_batch(f);
    T_EQ(d->capture_id, 5);
    T_EQ(d->n_captures, 2);
    T_EQ(d->captures[0].state, RS_CAPTURE_STARTED);
    T_EQ(d->captures[0].kinds, RS_CAPTURE_KERNELS);
    T_EQ(d->captures[1].time_ns, 2000);
    T_CHECK(strcmp(d->captures[1].message, "ran 5 s") == 0);
    T_CHECK(!d->has_capture_count); /* a collector's frame: the agent counts */
    rs_wire_rank_frame_free(f);
    /* the agent's count of the marked frames travels with the mark, never without one */
    b.has_capture_count = true;
    b.capture_kernels = 123456;
    b.capture_stall_samples = 0;
    T_OK(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len));
    T_OK(rs_wire_rank_frame_decode(buf, len, sizeof buf, &f));
    d = rs_wire_rank_frame_batch(f);
    T_CHECK(d->has_capture_count);
    T_EQ(d->capture_kernels, 123456);
    T_EQ(d->capture_stall_samples, 0);
    rs_wire_rank_frame_free(f);
    b.capture_id = 0;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    b.capture_id = 5;
    b.has_capture_count = false;
    rep[1].state = 9; /* not a state */
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    rep[1].state = RS_CAPTURE_DONE;
    rep[1].id = 0;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
}

static void
message_is_cut_on_a_character(void)
{
    struct rs_capture_report r = {0};
    char text[400];

    memset(text, 'a', sizeof text);
    memcpy(text + RS_CAPTURE_MAX_MESSAGE - 1, "\xc3\xa9", 2); /* é across the limit */
    text[sizeof text - 1] = '\0';
    rs_capture_report_set_message(&r, text);
    T_EQ(strlen(r.message), RS_CAPTURE_MAX_MESSAGE - 1);
    rs_capture_report_set_message(&r, "\xff\xfe");
    T_CHECK(strcmp(r.message, "(text was not UTF-8)") == 0);
}

static void
orders_in_reply(void)
{
    struct rs_server_reply r = {.batch_seq = 3, .status = RS_REPLY_ACK};
    char err[600], back[600];
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint8_t buf[RS_WIRE_MAX_REPLY_BYTES];
    size_t len;
    struct rs_server_reply d;

    memset(err, 'e', sizeof err - 1);
    err[sizeof err - 1] = '\0';
    memset(job, 'j', sizeof job - 1);
    job[sizeof job - 1] = '\0';
    r.error = err;
    for (uint32_t i = 0; i < RS_CAPTURE_MAX_ORDERS; i++)
        r.control.captures[i] = order(UINT64_MAX - i, job, RS_CAPTURE_MAX_RANK,
                                      RS_CAPTURE_KINDS_ALL, RS_CAPTURE_MAX_SECONDS);
    r.control.n_captures = RS_CAPTURE_MAX_ORDERS;
    /* the most orders of the longest job names fit with the longest error text: an older
     * agent's receive limit (RS_WIRE_MAX_REPLY_BYTES) is never passed */
    T_OK(rs_wire_reply_encode(&r, buf, sizeof buf, &len));
    T_CHECK(len <= RS_WIRE_MAX_REPLY_BYTES);
    T_OK(rs_wire_reply_decode(buf, len, &d, back, sizeof back));
    T_EQ(d.control.n_captures, RS_CAPTURE_MAX_ORDERS);
    T_EQ(d.control.captures[7].id, UINT64_MAX - 7);
    T_CHECK(strcmp(d.control.captures[7].job, job) == 0);
    r.control.captures[2].seconds = 0;
    T_EQ(rs_wire_reply_encode(&r, buf, sizeof buf, &len), RS_E_MALFORMED);
    /* a reply without orders (an older server) decodes with none */
    struct rs_server_reply plain = {.batch_seq = 1, .status = RS_REPLY_ACK, .error = ""};
    T_OK(rs_wire_reply_encode(&plain, buf, sizeof buf, &len));
    T_OK(rs_wire_reply_decode(buf, len, &d, back, sizeof back));
    T_EQ(d.control.n_captures, 0);
}

int
main(void)
{
    T_RUN(control_round_trip);
    T_RUN(control_refusals);
    T_RUN(reports_in_rank_frame);
    T_RUN(message_is_cut_on_a_character);
    T_RUN(orders_in_reply);
    return T_DONE("capture");
}
