/* Unit tests of the pprof builder: stacks and labels merge as documented, frames and mappings are
 * interned, misuse is refused, and what it encodes reads back as a valid profile with the same
 * samples (tests/unit/pprof_read.h). */
#include "common/clock.h"
#include "proto/pprof.h"
#include "tests/t.h"
#include "tests/unit/pprof_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static pprof_profile *
encode_and_read(const rs_pprof *p)
{
    uint8_t *gz = NULL;
    size_t len = 0;
    pprof_profile *out;

    T_EQ(rs_pprof_encode(p, &gz, &len), 0);
    T_CHECK(len > 18 && gz[0] == 0x1f && gz[1] == 0x8b); /* gzip magic */
    out = pprof_read(gz, len);
    free(gz);
    T_CHECK(out != NULL);
    if (out)
        T_CHECK(pprof_valid(out));
    return out;
}

static void
merges_stacks_and_labels(void)
{
    rs_pprof *p;
    uint64_t root, leaf, other, again;
    struct rs_pprof_label rank0[1] = {{"rank", NULL, 0, NULL}},
                          rank1[1] = {{"rank", NULL, 1, NULL}};

    T_OK(rs_pprof_new(&p));
    T_OK(rs_pprof_add_sample_type(p, "launches", "count"));
    T_OK(rs_pprof_add_sample_type(p, "gpu_time", "nanoseconds"));
    T_OK(rs_pprof_set_default_sample_type(p, "gpu_time"));
    T_EQ(rs_pprof_set_default_sample_type(p, "nope"), -EINVAL);
    T_OK(rs_pprof_frame(p, "rank 0", 0, 0, &root));
    T_OK(rs_pprof_frame(p, "gemm", 0, 0, &leaf));
    T_OK(rs_pprof_frame(p, "gemm", 0, 0, &again));
    T_EQ(again, leaf); /* interned */
    T_OK(rs_pprof_frame(p, "copy", 0, 0, &other));
    T_CHECK(other != leaf && root != leaf && root && leaf && other);

    uint64_t s1[2] = {leaf, root}, s2[2] = {other, root};
    int64_t v1[2] = {1, 100}, v2[2] = {1, 50};
    T_OK(rs_pprof_add(p, s1, 2, v1, rank0, 1));
    T_OK(rs_pprof_add(p, s1, 2, v1, rank0, 1)); /* same stack + labels: merged */
    T_OK(rs_pprof_add(p, s1, 2, v2, rank1, 1)); /* other label: its own sample */
    T_OK(rs_pprof_add(p, s2, 2, v2, rank0, 1));
    T_EQ(rs_pprof_samples(p), 3);
    T_OK(rs_pprof_add_comment(p, "a comment"));
    rs_pprof_set_time(p, 1000, 500);

    pprof_profile *r = encode_and_read(p);
    if (r) {
        T_EQ(r->n_sample, 3);
        T_EQ(r->n_function, 3);
        T_EQ(r->n_location, 3);
        T_EQ(strcmp(pprof_str(r, r->default_sample_type), "gpu_time"), 0);
        T_EQ(strcmp(pprof_str(r, r->sample_type[1]->unit), "nanoseconds"), 0);
        T_EQ(r->time_nanos, 1000);
        T_EQ(r->duration_nanos, 500);
        T_EQ(r->n_comment, 1);
        T_EQ(strcmp(pprof_str(r, r->comment[0]), "a comment"), 0);
        T_EQ(pprof_value(r, "rank 0;copy", 1), 50);
        int64_t rank0_gemm = -1, rank1_gemm = -1;
        char stack[256];
        for (size_t i = 0; i < r->n_sample; i++) {
            pprof_stack(r, r->sample[i], stack, sizeof stack);
            T_EQ(r->sample[i]->n_label, 1);
            if (strcmp(stack, "rank 0;gemm") == 0 && r->sample[i]->label[0]->num == 0)
                rank0_gemm = r->sample[i]->value[1];
            if (strcmp(stack, "rank 0;gemm") == 0 && r->sample[i]->label[0]->num == 1)
                rank1_gemm = r->sample[i]->value[1];
        }
        T_EQ(rank0_gemm, 200);
        T_EQ(rank1_gemm, 50);
        perftools__profiles__profile__free_unpacked(r, NULL);
    }
    rs_pprof_free(p);
}

static void
mappings_and_addresses(void)
{
    rs_pprof *p;
    uint64_t m1, m2, m1_again, a, b;
    int64_t one = 1;

    T_OK(rs_pprof_new(&p));
    T_OK(rs_pprof_add_sample_type(p, "samples", "count"));
    T_OK(rs_pprof_add_mapping(p, "cubin-1", "1", 0x100, &m1));
    T_OK(rs_pprof_add_mapping(p, "cubin-2", "2", 0x100, &m2));
    T_OK(rs_pprof_add_mapping(p, "cubin-1", "1", 0x400, &m1_again));
    T_EQ(m1_again, m1);
    T_CHECK(m1 != m2);
    T_OK(rs_pprof_frame(p, "k+0x300", m1, 0x300, &a)); /* inside the grown limit */
    T_OK(rs_pprof_frame(p, "k+0x300", m2, 0x300 & 0xff, &b));
    T_CHECK(a != b); /* same name, other mapping/address: another location */
    T_EQ(rs_pprof_frame(p, "x", m2 + 1, 0, &b), -EINVAL);
    T_OK(rs_pprof_add(p, &a, 1, &one, NULL, 0));
    pprof_profile *r = encode_and_read(p);
    if (r) {
        T_EQ(r->n_mapping, 2);
        const Perftools__Profiles__Location *l = pprof_location(r, r->sample[0]->location_id[0]);
        T_CHECK(l && l->address == 0x300 && l->mapping_id == m1);
        T_EQ(r->mapping[m1 - 1]->memory_limit, 0x400);
        T_CHECK(r->mapping[0]->has_functions);
        perftools__profiles__profile__free_unpacked(r, NULL);
    }
    rs_pprof_free(p);
}

static void
refuses_misuse(void)
{
    rs_pprof *p;
    uint64_t loc, deep[RS_PPROF_MAX_DEPTH + 1];
    int64_t v[RS_PPROF_MAX_VALUES] = {0};
    struct rs_pprof_label many[RS_PPROF_MAX_LABELS + 1];

    T_OK(rs_pprof_new(&p));
    T_OK(rs_pprof_frame(p, "f", 0, 0, &loc));
    T_EQ(rs_pprof_add(p, &loc, 1, v, NULL, 0), -EINVAL); /* no sample type yet */
    for (int i = 0; i < RS_PPROF_MAX_VALUES; i++)
        T_OK(rs_pprof_add_sample_type(p, "t", "count"));
    T_EQ(rs_pprof_add_sample_type(p, "t", "count"), -EINVAL);
    uint64_t unknown = loc + 1, zero = 0;
    T_EQ(rs_pprof_add(p, &unknown, 1, v, NULL, 0), -EINVAL);
    T_EQ(rs_pprof_add(p, &zero, 1, v, NULL, 0), -EINVAL);
    for (size_t i = 0; i <= RS_PPROF_MAX_DEPTH; i++)
        deep[i] = loc;
    T_EQ(rs_pprof_add(p, deep, RS_PPROF_MAX_DEPTH + 1, v, NULL, 0), -EINVAL);
    memset(many, 0, sizeof many);
    for (size_t i = 0; i <= RS_PPROF_MAX_LABELS; i++)
        many[i].key = "k";
    T_EQ(rs_pprof_add(p, &loc, 1, v, many, RS_PPROF_MAX_LABELS + 1), -EINVAL);
    T_OK(rs_pprof_add(p, &loc, 1, v, NULL, 0));
    T_EQ(rs_pprof_add_sample_type(p, "late", "count"), -EINVAL); /* after samples */
    T_EQ(rs_pprof_samples(p), 1);
    rs_pprof_free(p);
}

static void
empty_profile_is_valid(void)
{
    rs_pprof *p;

    T_OK(rs_pprof_new(&p));
    T_OK(rs_pprof_add_sample_type(p, "samples", "count"));
    pprof_profile *r = encode_and_read(p);
    if (r) {
        T_EQ(r->n_sample, 0);
        perftools__profiles__profile__free_unpacked(r, NULL);
    }
    rs_pprof_free(p);
}

/* Many distinct stacks: the indexes grow, and every sample keeps its own value. */
static void
many_stacks(void)
{
    rs_pprof *p;
    char name[32];

    T_OK(rs_pprof_new(&p));
    T_OK(rs_pprof_add_sample_type(p, "samples", "count"));
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 5000; i++) {
            uint64_t s[2];
            int64_t v = i;
            snprintf(name, sizeof name, "k%d", i);
            T_OK(rs_pprof_frame(p, name, 0, 0, &s[0]));
            T_OK(rs_pprof_frame(p, "root", 0, 0, &s[1]));
            T_OK(rs_pprof_add(p, s, 2, &v, NULL, 0));
        }
    T_EQ(rs_pprof_samples(p), 5000);
    /* a deadline already past: the encoding stops (-ETIMEDOUT), nothing written */
    uint8_t *gz = (uint8_t *)"untouched";
    size_t len = 7;
    T_EQ(rs_pprof_encode_until(p, rs_clock_mono_ns() - 1, &gz, &len), -ETIMEDOUT);
    T_CHECK(len == 7 && strcmp((char *)gz, "untouched") == 0);
    T_OK(rs_pprof_encode_until(p, rs_clock_mono_ns() + 60000000000ull, &gz, &len));
    free(gz);
    pprof_profile *r = encode_and_read(p);
    if (r) {
        T_EQ(r->n_sample, 5000);
        T_EQ(pprof_value(r, "root;k4321", 0), 2 * 4321);
        perftools__profiles__profile__free_unpacked(r, NULL);
    }
    rs_pprof_free(p);
}

int
main(void)
{
    T_RUN(merges_stacks_and_labels);
    T_RUN(mappings_and_addresses);
    T_RUN(refuses_misuse);
    T_RUN(empty_profile_is_valid);
    T_RUN(many_stacks);
    return T_DONE("proto/pprof");
}
