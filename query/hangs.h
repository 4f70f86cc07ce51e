/* Hang verdicts (docs/analysis.md "Hangs"): an NCCL operation started on some ranks and not
 * finished within the collector's limit. Collectors with the NCCL profiler plugin report their
 * oldest operation in flight past the limit as a condition (RS_COLLECTOR_IN_FLIGHT) with a text in
 * a fixed form (proto/in_flight.h),
 * and every rank batch replaces the rank's condition, so it clears when the operation finishes.
 * The rule, per job (a waiting rank counts while its collector said so within `fresh_ns`: t0_ms
 * + ms; one whose process is gone says nothing about now, and is neither waiting nor absent):
 *   - every communicator with at least one waiting rank is a hang verdict, named by the
 *     (op, seq) most of its waiting ranks report (ties: the lowest seq);
 *   - waiting: those ranks (they arrived: NCCL started the operation there), with whether a
 *     kernel channel of it started on their GPU;
 *   - never arrived: when the communicator spans the job's world (its size is the world size),
 *     every other rank of the job that reports nothing in flight, with host and GPU (it may be
 *     busy, or stuck outside NCCL: its last records say when it was last heard of); otherwise
 *     only their number
 *     (comm size - waiting), since a sub-communicator's members are not known;
 *   - since: the earliest start among the waiting ranks.
 * A status that does not parse is not a verdict (counted in `malformed`). Pure functions over
 * rank infos: the REST endpoint and the server's hang watch use the same code. */
#ifndef RS_QUERY_HANGS_H
#define RS_QUERY_HANGS_H

#include "proto/in_flight.h"
#include "storage/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rs_hang_rank {
    uint32_t rank;
    const char *host, *gpu_uuid; /* borrowed from the rank infos passed in */
    bool gpu_started;            /* waiting ranks only */
};

struct rs_hang {
    uint64_t comm, seq, since_ns;
    char op[32];
    uint32_t comm_size;
    struct rs_hang_rank *waiting, *absent; /* rank order */
    size_t n_waiting, n_absent;
    uint32_t absent_unknown; /* members that did not arrive, ranks not known (sub-communicator) */
};

struct rs_hang_report {
    struct rs_hang *hangs; /* by comm */
    size_t n;
    size_t malformed; /* in-flight statuses that did not parse */
};

/* Applies the rule to `ranks` (n of them, any order) at `now_ns`, waiting ranks not heard of
 * within fresh_ns left out (0: none). The report borrows strings from
 * `ranks`, which must outlive it. Returns 0 or -ENOMEM (out untouched). */
int rs_hangs_find(const struct rs_rank_info *ranks, size_t n, uint64_t now_ns, uint64_t fresh_ns,
                  struct rs_hang_report *out);
void rs_hang_report_fini(struct rs_hang_report *rep);

/* {"hangs": [{"comm": "0x...", "op", "seq", "since_ns", "comm_size", "waiting": [{"rank", "host",
 * "gpu_uuid", "gpu_started"}], "never_arrived": [{"rank", "host", "gpu_uuid"}],
 * "never_arrived_unknown": N}], "malformed_statuses": N} (docs/openapi.yaml). NULL on ENOMEM. */
json_t *rs_hang_report_json(const struct rs_hang_report *rep);

/* The whole query for one job from the store: GET /v1/jobs/{job}/hangs. RS_E_NOT_FOUND for an
 * unknown job. */
#define RS_HANG_FRESH_NS (60ull * 1000000000ull)
int rs_query_hangs(rs_store_read *r, const char *job, uint64_t now_ns, json_t **out);

#endif
