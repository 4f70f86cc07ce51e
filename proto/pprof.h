/* A pprof profile builder (proto/pprof.proto): frames, samples with labels, and the gzip-compressed
 * protobuf that `go tool pprof` and compatible viewers read. Frames are interned (one Function and
 * one Location per distinct (name, mapping, address)), and samples with the same stack and labels
 * are merged by adding their values, so a caller can feed raw records in any order. Knows nothing
 * about rankscope's data: query/pprof_export.c decides what the stacks are. Not thread-safe: one
 * owner. Memory grows with the distinct frames and stacks, not with the values added.
 */
#ifndef RS_PROTO_PPROF_H
#define RS_PROTO_PPROF_H

#include <stddef.h>
#include <stdint.h>

typedef struct rs_pprof rs_pprof;

#define RS_PPROF_MAX_VALUES 4 /* sample types per profile */
#define RS_PPROF_MAX_LABELS 4 /* labels per sample */
#define RS_PPROF_MAX_DEPTH 16 /* frames per stack */

/* A label of a sample: a string (`str` non-NULL) or a number with an optional unit. */
struct rs_pprof_label {
    const char *key;
    const char *str;
    int64_t num;
    const char *num_unit; /* NULL = none */
};

/* A new, empty profile. Returns 0 or -ENOMEM. */
int rs_pprof_new(rs_pprof **out);
void rs_pprof_free(rs_pprof *p);

/* Declares the next value column (e.g. "samples"/"count", "gpu_time"/"nanoseconds"); every sample
 * carries one value per column. Columns must be declared before the first sample. Returns 0,
 * -EINVAL (too many, or samples already added) or -ENOMEM. */
int rs_pprof_add_sample_type(rs_pprof *p, const char *type, const char *unit);

/* Optional descriptions: the column viewers show first (one declared type), when the data starts
 * and how long it covers, what one sample stands for, and free text. Return 0, -EINVAL or
 * -ENOMEM. */
int rs_pprof_set_default_sample_type(rs_pprof *p, const char *type);
void rs_pprof_set_time(rs_pprof *p, uint64_t start_ns, uint64_t duration_ns);
int rs_pprof_set_period(rs_pprof *p, const char *type, const char *unit, int64_t period);
int rs_pprof_add_comment(rs_pprof *p, const char *text);

/* A mapping: an object that frames' addresses belong to (for rankscope, a cubin), interned by
 * (file, build_id); `limit` is an address past the highest one used (the largest given wins).
 * Frames that name it carry function names already, so readers do not try to symbolize it.
 * Writes its id (nonzero) to *id. Returns 0 or -ENOMEM. */
int rs_pprof_add_mapping(rs_pprof *p, const char *file, const char *build_id, uint64_t limit,
                         uint64_t *id);

/* The location of a frame named `function` (at `address` of mapping `mapping_id`, or 0 and 0 for
 * a frame without one), interned. Writes its id (nonzero) to *location. Returns 0, -EINVAL (an
 * unknown mapping) or -ENOMEM. */
int rs_pprof_frame(rs_pprof *p, const char *function, uint64_t mapping_id, uint64_t address,
                   uint64_t *location);

/* Adds `values` (one per declared column) to the sample of this stack (location ids from
 * rs_pprof_frame, the leaf first) and these labels, creating it when new. Returns 0, -EINVAL
 * (no columns, an unknown location, depth or label count over the limits) or -ENOMEM. */
int rs_pprof_add(rs_pprof *p, const uint64_t *stack, size_t depth, const int64_t *values,
                 const struct rs_pprof_label *labels, size_t n_labels);

/* Samples (distinct stacks with their labels) so far. */
size_t rs_pprof_samples(const rs_pprof *p);

/* The profile as a gzip-compressed protobuf in a new buffer (*out, caller frees with free()).
 * Returns 0 or -ENOMEM. The builder stays usable. */
int rs_pprof_encode(const rs_pprof *p, uint8_t **out, size_t *len);

/* rs_pprof_encode that stops with -ETIMEDOUT (nothing written) once rs_clock_mono_ns() passes
 * deadline_ns (0 = never): checked before and after packing and while compressing
 * (rs_gzip_until), so a query's profile ends at its deadline, not after encoding it whole. */
int rs_pprof_encode_until(const rs_pprof *p, uint64_t deadline_ns, uint8_t **out, size_t *len);

#endif
