/* Unit tests of the pprof export on the hand-built job of profile_fixture.h: the stall flame graph
 * (rank -> kernel -> pc -> reason) with the fixture's exact counts, the GPU-time profile with its
 * exact launches and nanoseconds, the automatic choice, rank and window scopes, and the errors. */
#include "common/error.h"
#include "query/pprof_export.h"
#include "query/profile.h"
#include "tests/t.h"
#include "tests/unit/pprof_read.h"
#include "tests/unit/query/profile_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pprof_profile *export(rs_store_read *r, const char *job, uint64_t rank, uint64_t since,
                             uint64_t until, enum rs_pprof_profile which,
                             struct rs_pprof_export_stats *st, int want_rc)
{
    struct rs_pprof_export_options o = {job, rank, since, until, which, 0};
    uint8_t *gz = NULL;
    size_t len = 0;
    int rc = rs_pprof_export(r, &o, &gz, &len, st);
    pprof_profile *p = NULL;

    T_EQ(rc, want_rc);
    if (rc != 0)
        return NULL;
    p = pprof_read(gz, len);
    free(gz);
    T_CHECK(p != NULL);
    if (p)
        T_CHECK(pprof_valid(p));
    return p;
}

static int64_t
label_num(const pprof_profile *p, const Perftools__Profiles__Sample *s, const char *key)
{
    for (size_t i = 0; i < s->n_label; i++)
        if (strcmp(pprof_str(p, s->label[i]->key), key) == 0)
            return s->label[i]->num;
    return -1;
}

static void
stalls_flame_graph(rs_store_read *r)
{
    struct rs_pprof_export_stats st;
    pprof_profile *p = export(r, "job", RS_PROFILE_ALL_RANKS, 0, 0, RS_PPROF_AUTO, &st, 0);

    if (!p)
        return;
    T_EQ(st.profile, RS_PPROF_STALLS); /* automatic: the window has samples */
    T_EQ(st.ranks, 2);
    T_EQ(st.events, 110);
    T_EQ(st.stacks, 4);
    T_EQ(p->n_sample_type, 1);
    T_EQ(strcmp(pprof_str(p, p->sample_type[0]->type), "samples"), 0);
    T_EQ(pprof_value(p, "rank 0;a;a+0x80;long_scoreboard", 0), 10);
    T_EQ(pprof_value(p, "rank 0;a;a+0xc0;selected", 0), 30);
    T_EQ(pprof_value(p, "rank 1;a;a+0x80;long_scoreboard", 0), 40);
    T_EQ(pprof_value(p, "rank 1;a;a+0xc0;selected", 0), 30);
    /* the pc frame sits at its offset in the cubin's mapping */
    T_EQ(p->n_mapping, 2); /* the job (shown as the "main binary"), then the cubin */
    T_EQ(strcmp(pprof_str(p, p->mapping[0]->filename), "rankscope job job"), 0);
    T_EQ(strcmp(pprof_str(p, p->mapping[1]->filename), "cubin-00000001"), 0);
    T_EQ(strcmp(pprof_str(p, p->mapping[1]->build_id), "00000001"), 0);
    for (size_t i = 0; i < p->n_sample; i++) {
        const Perftools__Profiles__Sample *s = p->sample[i];
        const Perftools__Profiles__Location *pc = pprof_location(p, s->location_id[1]);
        T_CHECK(pc && pc->mapping_id == p->mapping[1]->id &&
                (pc->address == 0x80 || pc->address == 0xc0));
        char stack[256];
        pprof_stack(p, s, stack, sizeof stack);
        T_EQ(label_num(p, s, "rank"), stack[5] - '0'); /* "rank N;..." */
    }
    T_CHECK(p->n_comment >= 1 && strstr(pprof_str(p, p->comment[0]), "job job") != NULL);
    perftools__profiles__profile__free_unpacked(p, NULL);
}

static void
time_profile(rs_store_read *r)
{
    struct rs_pprof_export_stats st;
    pprof_profile *p = export(r, "job", RS_PROFILE_ALL_RANKS, 0, 0, RS_PPROF_TIME, &st, 0);

    if (!p)
        return;
    T_EQ(st.profile, RS_PPROF_TIME);
    T_EQ(st.ranks, 2);
    /* rank 0: 30 kernels + 10 AllReduce; rank 1: 40 + 10 */
    T_EQ(st.events, 90);
    T_EQ(p->n_sample_type, 2);
    T_EQ(strcmp(pprof_str(p, p->default_sample_type), "gpu_time"), 0);
    T_EQ(pprof_value(p, "rank 0;a", 0), 20);
    T_EQ(pprof_value(p, "rank 0;a", 1), 20 * 100 * (int64_t)US);
    T_EQ(pprof_value(p, "rank 1;a", 1), 20 * 150 * (int64_t)US);
    T_EQ(pprof_value(p, "rank 0;b", 1), 10 * 50 * (int64_t)US);
    T_EQ(pprof_value(p, "rank 0;c", 0), -1);
    T_EQ(pprof_value(p, "rank 1;c", 1), 10 * 20 * (int64_t)US);
    T_EQ(pprof_value(p, "rank 0;NCCL AllReduce", 0), 10);
    T_EQ(pprof_value(p, "rank 1;NCCL AllReduce", 1), 10 * 30 * (int64_t)US);
    T_EQ(p->time_nanos, (int64_t)(T0 + 10 * US));
    T_EQ(p->duration_nanos, (int64_t)(9 * 1000 * US + 830 * US - 10 * US));
    perftools__profiles__profile__free_unpacked(p, NULL);
}

static void
scopes(rs_store_read *r)
{
    struct rs_pprof_export_stats st;
    char stack[256];

    /* one rank */
    pprof_profile *p = export(r, "job", 1, 0, 0, RS_PPROF_STALLS, &st, 0);
    if (p) {
        T_EQ(st.ranks, 1);
        T_EQ(st.events, 70);
        for (size_t i = 0; i < p->n_sample; i++) {
            pprof_stack(p, p->sample[i], stack, sizeof stack);
            T_CHECK(strncmp(stack, "rank 1;", 7) == 0);
        }
        perftools__profiles__profile__free_unpacked(p, NULL);
    }
    /* the first 5 steps: half of everything */
    p = export(r, "job", RS_PROFILE_ALL_RANKS, T0, T0 + 5 * 1000 * US, RS_PPROF_TIME, &st, 0);
    if (p) {
        T_EQ(pprof_value(p, "rank 0;a", 0), 10);
        T_EQ(pprof_value(p, "rank 1;NCCL AllReduce", 0), 5);
        perftools__profiles__profile__free_unpacked(p, NULL);
    }
    /* a window with nothing: a valid, empty time profile */
    p = export(r, "job", RS_PROFILE_ALL_RANKS, T0 + 100000 * US, 0, RS_PPROF_AUTO, &st, 0);
    if (p) {
        T_EQ(st.profile, RS_PPROF_TIME);
        T_EQ(st.ranks, 0);
        T_EQ(p->n_sample, 0);
        perftools__profiles__profile__free_unpacked(p, NULL);
    }
}

static void
without_samples_and_errors(rs_store_read *r)
{
    struct rs_pprof_export_stats st;
    pprof_profile *p = export(r, "nopc", RS_PROFILE_ALL_RANKS, 0, 0, RS_PPROF_AUTO, &st, 0);

    if (p) { /* automatic: no samples, so GPU time */
        T_EQ(st.profile, RS_PPROF_TIME);
        T_EQ(pprof_value(p, "rank 0;a", 0), 20);
        perftools__profiles__profile__free_unpacked(p, NULL);
    }
    export(r, "nopc", RS_PROFILE_ALL_RANKS, 0, 0, RS_PPROF_STALLS, &st, -ENODATA);
    export(r, "absent", RS_PROFILE_ALL_RANKS, 0, 0, RS_PPROF_AUTO, &st, RS_E_NOT_FOUND);
    export(r, "job", 7, 0, 0, RS_PPROF_AUTO, &st, RS_E_NOT_FOUND);
}

/* After the fixture's kernels are rolled up into windows, the time profile has the same values
 * (the windows stand in for the records; collectives stay raw). */
static void
time_profile_after_rollup(rs_store_read *r)
{
    struct rs_pprof_export_stats st;
    pprof_profile *p = export(r, "job", RS_PROFILE_ALL_RANKS, 0, 0, RS_PPROF_TIME, &st, 0);

    if (!p)
        return;
    T_EQ(st.events, 90);
    T_EQ(pprof_value(p, "rank 0;a", 0), 20);
    T_EQ(pprof_value(p, "rank 0;a", 1), 20 * 100 * (int64_t)US);
    T_EQ(pprof_value(p, "rank 1;a", 1), 20 * 150 * (int64_t)US);
    T_EQ(pprof_value(p, "rank 1;c", 1), 10 * 20 * (int64_t)US);
    T_EQ(pprof_value(p, "rank 1;NCCL AllReduce", 1), 10 * 30 * (int64_t)US);
    perftools__profiles__profile__free_unpacked(p, NULL);
}

int
main(void)
{
    char dir[] = "/tmp/rs-pprof-XXXXXX";
    rs_store *st;
    rs_store_read *r = fixture_open(dir, &st);

    rs_store_read_end(r); /* and a job without PC samples, seen by a new read */
    put_rank_of(st, "nopc", 0, false);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_RUN_ARG(stalls_flame_graph, r);
    T_RUN_ARG(time_profile, r);
    T_RUN_ARG(scopes, r);
    T_RUN_ARG(without_samples_and_errors, r);
    rs_store_read_end(r);
    /* + rank 1's Stream Syncs, rolled up as copies; nopc's rank 0 has no summaries: raw */
    T_EQ(fixture_roll_up(st, "job", 2), 30 + 40 + 10);
    T_EQ(rs_store_read_begin(st, &r), 0);
    T_RUN_ARG(time_profile_after_rollup, r);
    fixture_close(dir, st, r);
    return T_DONE("query/pprof_export");
}
