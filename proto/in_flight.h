/* The in-flight condition's text (RS_COLLECTOR_IN_FLIGHT, proto/wire.h): how a collector with the
 * NCCL profiler plugin names the oldest NCCL operation it has had in flight past its hang limit,
 * in RankBatch.collector_status, and how the server reads it back (query/hangs.h):
 *   "in flight: comm=<16 hex> r=<rank>/<size> op=<letters> seq=<hex> t0_ms=<ms> ms=<ms> gpu=<0|1>"
 * t0_ms: when NCCL started it (ms since the epoch); ms: how long it had been in flight when the
 * collector said so; gpu=1: a kernel channel of it started on the GPU. Compact because the server
 * keeps 127 bytes of a status: with ranks below 65536, an op name of up to 13 letters and up to
 * 10 digits of ms the longest text is 124 bytes. Part of the wire contract: the
 * writer and the reader share this code. */
#ifndef RS_PROTO_IN_FLIGHT_H
#define RS_PROTO_IN_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RS_IN_FLIGHT_MAX 127 /* bytes of text, the server's limit */

struct rs_in_flight {
    uint64_t comm;     /* NCCL's communicator hash */
    uint64_t seq;      /* NCCL's sequence number (point-to-point: plugin.h's numbering) */
    uint64_t since_ms; /* CLOCK_REALTIME when NCCL started the operation, ms */
    uint64_t for_ms;   /* how long it had been in flight when the collector said so */
    uint32_t comm_rank, comm_size;
    char op[32];      /* NCCL's name: letters only ("AllReduce", "Send") */
    bool gpu_started; /* a kernel channel of it started on the GPU */
};

/* Writes the text of f into out (len bytes). Returns 0, or RS_E_MALFORMED (op empty or not
 * letters only, comm_rank >= comm_size) or -ENOSPC (out too small, or over 127 bytes: the server
 * would cut it); out is then "". */
int rs_in_flight_format(const struct rs_in_flight *f, char *out, size_t len);

/* Reads a text of that form, nothing more or less. Returns 0, or RS_E_MALFORMED (another text,
 * numbers out of range, rank not below size, trailing bytes); *out written only on success. */
int rs_in_flight_parse(const char *text, struct rs_in_flight *out);

#endif
