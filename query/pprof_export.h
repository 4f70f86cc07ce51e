/* Export of a job's window as a pprof profile (gzip-compressed protobuf, proto/pprof.h) that
 * `go tool pprof`, Pyroscope, Speedscope and other pprof readers open:
 *
 *  - stalls: PC-sampling stall reasons as a flame graph rank -> kernel -> pc -> reason, one value
 *    ("samples", count). The pc frame is named "<kernel>+0x<offset>" and sits at its offset in a
 *    mapping per cubin ("cubin-<crc>", build id the CRC), so a later step can map it to a source
 *    line; `-top` ranks the reasons, `-peek`/flame graphs show where they come from.
 *  - time: GPU time per kernel, rank -> kernel, rank -> "NCCL <op>" for collectives and
 *    rank -> "Memcpy HtoD" (and the other copy kinds; host synchronizations are host time, not
 *    GPU time, and stay out), two values ("launches", count;
 *    "gpu_time", nanoseconds, the default); rolled-up windows (storage "Rollups") count like the
 *    records they replace, at their time resolution.
 *
 * Every sample has a numeric label "rank" (pprof -tagfocus=rank=3) and a string label "host". The
 * first mapping, which readers show as the profile's "File", is "rankscope job <job>".
 * Automatic choice: stalls when the window has PC samples, else time. Memory follows the distinct
 * (rank, kernel, pc, reason) stacks, not the window's length.
 */
#ifndef RS_QUERY_PPROF_EXPORT_H
#define RS_QUERY_PPROF_EXPORT_H

#include "storage/store.h"

#include <stddef.h>
#include <stdint.h>

enum rs_pprof_profile { RS_PPROF_AUTO, RS_PPROF_STALLS, RS_PPROF_TIME };

struct rs_pprof_export_options {
    const char *job;
    uint64_t rank;               /* one rank, or RS_PROFILE_ALL_RANKS (query/profile.h) */
    uint64_t since_ns, until_ns; /* records that start in [since, until); 0 = open */
    enum rs_pprof_profile profile;
    /* rs_clock_mono_ns() past which the encoding stops with -ETIMEDOUT (0 = none); the store's
     * scans stop at the read's own deadline (rs_store_read_set_deadline) */
    uint64_t deadline_ns;
};

struct rs_pprof_export_stats {
    enum rs_pprof_profile profile; /* what was written: STALLS or TIME */
    uint32_t ranks;                /* ranks with records in the profile */
    uint64_t events;               /* stall samples, or kernel, NCCL and copy launches */
    uint64_t gpu_ns;               /* time: GPU time of those launches */
    size_t stacks;                 /* distinct stacks (pprof samples) */
};

/* The profile, gzip-compressed, in a new buffer (*out, caller frees with free()). Returns 0,
 * RS_E_NOT_FOUND (no such job, or the rank has no records), -ENODATA (stalls asked for and the
 * window has no PC samples), -ENOMEM or a storage error. An empty window gives a valid, empty
 * time profile. */
int rs_pprof_export(rs_store_read *r, const struct rs_pprof_export_options *o, uint8_t **out,
                    size_t *len, struct rs_pprof_export_stats *stats);

/* "stalls", "time", "auto". */
const char *rs_pprof_profile_name(enum rs_pprof_profile p);

#endif
