/* Captures on demand on the wire (rankscope.proto CaptureOrder, CollectorControl, CaptureReport;
 * docs/collector.md "Captures"): the orders the server puts in its replies to an agent, the control
 * frame the agent sends a collector over the Unix socket (the only agent -> collector message),
 * and the reports collectors send back inside their RankBatches. Decoders never trust their input:
 * they check every field against the limits below and return RS_E_MALFORMED / RS_E_TOO_BIG.
 * Thread-safe (no shared state). */
#ifndef RS_PROTO_CAPTURE_H
#define RS_PROTO_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bits of struct rs_capture_order.kinds (CaptureKind). */
enum rs_capture_kind {
    RS_CAPTURE_KERNELS = 1,     /* CUPTI kernel (copy, sync, launch) records on */
    RS_CAPTURE_PC_SAMPLING = 2, /* a PC-sampling window (stall reasons) */
    RS_CAPTURE_KINDS_ALL = 3
};

/* CaptureState: what a collector reports about one order. */
enum rs_capture_report_state { RS_CAPTURE_STARTED = 1, RS_CAPTURE_DONE = 2, RS_CAPTURE_FAILED = 3 };

#define RS_CAPTURE_MAX_SECONDS 60u
#define RS_CAPTURE_MAX_RANK 1048575u       /* ranks beyond a million are garbage */
#define RS_CAPTURE_MAX_ORDERS 8u           /* per reply and per control frame */
#define RS_CAPTURE_MAX_REPORTS 16u         /* per rank batch */
#define RS_CAPTURE_MAX_MESSAGE 200u        /* bytes of a report's text */
#define RS_CAPTURE_MAX_CONTROL_BYTES 2048u /* one control frame; 8 orders of 128-byte jobs fit */

struct rs_capture_order {
    uint64_t id;       /* != 0 */
    char job[128 + 1]; /* a valid job name (rs_wire_job_valid; RS_WIRE_MAX_JOB_LEN) */
    uint32_t rank;     /* <= RS_CAPTURE_MAX_RANK */
    uint32_t kinds;    /* non-empty subset of RS_CAPTURE_KINDS_ALL */
    uint32_t seconds;  /* 1 .. RS_CAPTURE_MAX_SECONDS */
};

struct rs_capture_report {
    uint64_t id;                              /* != 0 */
    uint32_t state;                           /* enum rs_capture_report_state */
    uint32_t kinds;                           /* what ran (a subset of RS_CAPTURE_KINDS_ALL) */
    uint64_t time_ns;                         /* CLOCK_REALTIME of the change */
    char message[RS_CAPTURE_MAX_MESSAGE + 1]; /* UTF-8 text for people, "" when none */
};

/* True when every field of `o` is within the limits above. */
bool rs_capture_order_valid(const struct rs_capture_order *o);

/* True when every field of `r` is within the limits above (message valid UTF-8). */
bool rs_capture_report_valid(const struct rs_capture_report *r);

/* Writes `text` into r->message, cut at RS_CAPTURE_MAX_MESSAGE bytes on a character boundary;
 * text that is not UTF-8 is replaced by a fixed text. */
void rs_capture_report_set_message(struct rs_capture_report *r, const char *text);

/* "kernels", "pc_sampling", "kernels,pc_sampling" or "" for `kinds` bits, into out[len]. */
void rs_capture_kinds_format(uint32_t kinds, char *out, size_t len);

/* --- The control frame (agent -> collector) --------------------------------------------------- */

/* Encodes n (1 .. RS_CAPTURE_MAX_ORDERS) valid orders into buf[cap]; *out_len gets the length.
 * Returns 0, RS_E_MALFORMED (an invalid order, n out of range) or RS_E_TOO_BIG (cap). */
int rs_capture_control_encode(const struct rs_capture_order *orders, uint32_t n, uint8_t *buf,
                              size_t cap, size_t *out_len);

/* Decodes one control frame of len bytes (at most RS_CAPTURE_MAX_CONTROL_BYTES) into
 * out[RS_CAPTURE_MAX_ORDERS]; *n gets how many. Every order must be valid and there must be
 * 1 .. RS_CAPTURE_MAX_ORDERS of them: otherwise RS_E_MALFORMED / RS_E_TOO_BIG and nothing is
 * written. */
int rs_capture_control_decode(const uint8_t *buf, size_t len, struct rs_capture_order *out,
                              uint32_t *n);

#endif
