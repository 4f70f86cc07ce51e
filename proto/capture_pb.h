/* Inside proto/ only: conversions between proto/capture.h types and the protobuf-c structs, for
 * wire.c's RankBatch and ServerReply codecs. The _from_pb functions validate (RS_E_MALFORMED). */
#ifndef RS_PROTO_CAPTURE_PB_H
#define RS_PROTO_CAPTURE_PB_H

#include "proto/capture.h"
#include "rankscope.pb-c.h"

/* Fills pb (initialised here) from a valid order; pb borrows o->job. */
void rs__capture_order_to_pb(const struct rs_capture_order *o, Rankscope__V1__CaptureOrder *pb);
int rs__capture_order_from_pb(const Rankscope__V1__CaptureOrder *pb, struct rs_capture_order *o);

/* Fills pb (initialised here) from a valid report; pb borrows r->message. */
void rs__capture_report_to_pb(const struct rs_capture_report *r, Rankscope__V1__CaptureReport *pb);
int rs__capture_report_from_pb(const Rankscope__V1__CaptureReport *pb, struct rs_capture_report *r);

#endif
