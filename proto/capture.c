/* Capture orders, reports and the collector control frame on the wire (see capture.h). */
#include "proto/capture.h"

#include "common/error.h"
#include "common/utf8.h"
#include "proto/capture_pb.h"
#include "proto/wire.h"

#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(((struct rs_capture_order *)0)->job) == RS_WIRE_MAX_JOB_LEN + 1,
               "an order's job holds any valid job name");

bool
rs_capture_order_valid(const struct rs_capture_order *o)
{
    return o->id != 0 && memchr(o->job, '\0', sizeof o->job) && rs_wire_job_valid(o->job) &&
           o->rank <= RS_CAPTURE_MAX_RANK && o->kinds != 0 &&
           (o->kinds & ~(uint32_t)RS_CAPTURE_KINDS_ALL) == 0 && o->seconds >= 1 &&
           o->seconds <= RS_CAPTURE_MAX_SECONDS;
}

bool
rs_capture_report_valid(const struct rs_capture_report *r)
{
    const char *end = memchr(r->message, '\0', sizeof r->message);

    return r->id != 0 && r->state >= RS_CAPTURE_STARTED && r->state <= RS_CAPTURE_FAILED &&
           (r->kinds & ~(uint32_t)RS_CAPTURE_KINDS_ALL) == 0 && end &&
           rs_utf8_valid(r->message, (size_t)(end - r->message));
}

void
rs_capture_report_set_message(struct rs_capture_report *r, const char *text)
{
    size_t n = strlen(text);

    if (!rs_utf8_valid(text, n))
        text = "(text was not UTF-8)", n = strlen(text);
    if (n > RS_CAPTURE_MAX_MESSAGE) {
        n = RS_CAPTURE_MAX_MESSAGE;
        while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80) /* not inside a character */
            n--;
    }
    memcpy(r->message, text, n);
    r->message[n] = '\0';
}

void
rs_capture_kinds_format(uint32_t kinds, char *out, size_t len)
{
    snprintf(out, len, "%s%s%s", kinds & RS_CAPTURE_KERNELS ? "kernels" : "",
             (kinds & RS_CAPTURE_KERNELS) && (kinds & RS_CAPTURE_PC_SAMPLING) ? "," : "",
             kinds & RS_CAPTURE_PC_SAMPLING ? "pc_sampling" : "");
}

void
rs__capture_order_to_pb(const struct rs_capture_order *o, Rankscope__V1__CaptureOrder *pb)
{
    rankscope__v1__capture_order__init(pb);
    pb->id = o->id;
    pb->job = (char *)o->job;
    pb->rank = o->rank;
    pb->kinds = o->kinds;
    pb->seconds = o->seconds;
}

int
rs__capture_order_from_pb(const Rankscope__V1__CaptureOrder *pb, struct rs_capture_order *o)
{
    struct rs_capture_order v = {pb->id, "", pb->rank, pb->kinds, pb->seconds};

    if (!pb->job || strlen(pb->job) >= sizeof v.job)
        return RS_E_MALFORMED;
    strcpy(v.job, pb->job);
    if (!rs_capture_order_valid(&v))
        return RS_E_MALFORMED;
    *o = v;
    return 0;
}

void
rs__capture_report_to_pb(const struct rs_capture_report *r, Rankscope__V1__CaptureReport *pb)
{
    rankscope__v1__capture_report__init(pb);
    pb->id = r->id;
    pb->state = (Rankscope__V1__CaptureState)r->state;
    pb->time_ns = r->time_ns;
    pb->message = (char *)r->message;
    pb->kinds = r->kinds;
}

int
rs__capture_report_from_pb(const Rankscope__V1__CaptureReport *pb, struct rs_capture_report *r)
{
    struct rs_capture_report v = {pb->id, (uint32_t)pb->state, pb->kinds, pb->time_ns, ""};

    if (!pb->message || strlen(pb->message) > RS_CAPTURE_MAX_MESSAGE)
        return RS_E_MALFORMED;
    strcpy(v.message, pb->message);
    if (!rs_capture_report_valid(&v))
        return RS_E_MALFORMED;
    *r = v;
    return 0;
}

int
rs_capture_control_encode(const struct rs_capture_order *orders, uint32_t n, uint8_t *buf,
                          size_t cap, size_t *out_len)
{
    Rankscope__V1__CollectorControl pb;
    Rankscope__V1__CaptureOrder items[RS_CAPTURE_MAX_ORDERS], *ptrs[RS_CAPTURE_MAX_ORDERS];
    size_t len;

    if (n == 0 || n > RS_CAPTURE_MAX_ORDERS)
        return RS_E_MALFORMED;
    rankscope__v1__collector_control__init(&pb);
    for (uint32_t i = 0; i < n; i++) {
        if (!rs_capture_order_valid(&orders[i]))
            return RS_E_MALFORMED;
        rs__capture_order_to_pb(&orders[i], &items[i]);
        ptrs[i] = &items[i];
    }
    pb.n_captures = n;
    pb.captures = ptrs;
    len = rankscope__v1__collector_control__get_packed_size(&pb);
    if (len > cap || len > RS_CAPTURE_MAX_CONTROL_BYTES)
        return RS_E_TOO_BIG;
    *out_len = rankscope__v1__collector_control__pack(&pb, buf);
    return 0;
}

int
rs_capture_control_decode(const uint8_t *buf, size_t len, struct rs_capture_order *out, uint32_t *n)
{
    struct rs_capture_order v[RS_CAPTURE_MAX_ORDERS];
    Rankscope__V1__CollectorControl *pb;
    int rc = 0;

    if (len > RS_CAPTURE_MAX_CONTROL_BYTES)
        return RS_E_TOO_BIG;
    if (!(pb = rankscope__v1__collector_control__unpack(NULL, len, buf)))
        return RS_E_MALFORMED;
    if (pb->n_captures == 0 || pb->n_captures > RS_CAPTURE_MAX_ORDERS)
        rc = RS_E_MALFORMED;
    for (size_t i = 0; rc == 0 && i < pb->n_captures; i++)
        rc = rs__capture_order_from_pb(pb->captures[i], &v[i]);
    if (rc == 0) {
        memcpy(out, v, pb->n_captures * sizeof *v);
        *n = (uint32_t)pb->n_captures;
    }
    rankscope__v1__collector_control__free_unpacked(pb, NULL);
    return rc;
}
