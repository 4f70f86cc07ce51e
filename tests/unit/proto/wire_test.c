/* Unit tests of proto/wire: round trips and rejection of bad input. */
#include "common/error.h"
#include "common/hash.h"
#include "proto/wire.h"
#include "tests/t.h"
#include "tests/t_batch.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"gemm_kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
static const struct rs_kernel_record kernels[] = {{1000000, 1002000, 0, 7, 0, 42},
                                                  {1003000, 1004500, 0, 7, 0, 43}};
static const struct rs_collective_record colls[] = {
    {1002000, 1009000, 1 << 20, 0xabcdef, 5, RS_COLL_ALLREDUCE, 1, 17, false}};
static const struct rs_step_record steps[] = {{.step = 3, .start_ns = 999000, .end_ns = 1010000}};
static const struct rs_memcpy_record copies[] = {{1001000, 1001100, 4096, RS_COPY_DTOD, 7}};
static const struct rs_stall_record stalls[] = {{0x40, 17, 0, 1, 0xdeadbeef}};

static struct rs_rank_batch
sample_rank(void)
{
    struct rs_rank_batch b = {
        .identity = T_IDENTITY_OF("job-1", 3, 1, 8, "node7", "GPU-abc", 1234),
        .clock = {111, 222},
        T_RECORDS(strings, names, 2),
        T_RECORDS(kernels, kernels, 2),
        T_RECORDS(memcpys, copies, 1),
        T_RECORDS(collectives, colls, 1),
        T_RECORDS(steps, steps, 1),
        T_RECORDS(stalls, stalls, 1),
        .dropped_records = 9,
        .collector_flags = RS_COLLECTOR_CLOCK_REPLACED,
        .collector_status = "clock replaced",
    };
    return b;
}

static void
rank_frame_round_trip(void)
{
    struct rs_rank_batch b = sample_rank();
    uint8_t buf[RS_WIRE_MAX_FRAME_BYTES];
    size_t len = 0;
    rs_wire_rank_frame *f = NULL;

    T_OK(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len));
    T_EQ(rs_wire_rank_batch_size(&b), len);
    T_OK(rs_wire_rank_frame_decode(buf, len, RS_WIRE_MAX_FRAME_BYTES, &f));
    if (!f)
        return;
    const struct rs_rank_batch *d = rs_wire_rank_frame_batch(f);
    T_CHECK(strcmp(d->identity.job, "job-1") == 0);
    T_EQ(d->identity.rank, 3);
    T_EQ(d->identity.world_size, 8);
    T_EQ(d->n_kernels, 2);
    T_EQ(d->kernels[1].start_ns, 1003000);
    T_EQ(d->kernels[1].end_ns, 1004500);
    T_EQ(d->kernels[1].correlation, 43);
    T_EQ(d->collectives[0].seq, 5);
    T_EQ(d->collectives[0].comm_hash, 0xabcdef);
    T_EQ(d->collectives[0].op, RS_COLL_ALLREDUCE);
    T_EQ(d->steps[0].start_ns, 999000);
    T_EQ(d->memcpys[0].bytes, 4096);
    T_EQ(d->stalls[0].cubin_crc, 0xdeadbeef);
    T_EQ(d->dropped_records, 9);
    T_EQ(d->collector_flags, RS_COLLECTOR_CLOCK_REPLACED);
    T_CHECK(strcmp(d->collector_status, "clock replaced") == 0);
    T_CHECK(strcmp(d->strings[d->collectives[0].name_id], names[1]) == 0);
    T_CHECK(d->string_hashes == NULL); /* (only agent batches carry the names' hashes) */
    rs_wire_rank_frame_free(f);
}

static void
agent_batch_round_trip(void)
{
    struct rs_rank_batch ranks[2] = {sample_rank(), sample_rank()};
    struct rs_agent_batch b = {.agent_id = 7,
                               .boot_id = 8,
                               .batch_seq = 99,
                               .hello = {.agent_id = 7,
                                         .boot_id = 8,
                                         .host = "host",
                                         .agent_version = "0.1.0",
                                         .clock = {1, 2}},
                               .ranks = ranks,
                               .n_ranks = 2,
                               .agent_dropped = 3};
    rs_wire_agent_batch *d = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    uint64_t agent = 0, seq = 0;

    ranks[1].identity.rank = 4;
    T_OK(rs_wire_agent_batch_encode(&b, &buf, &len));
    T_OK(rs_wire_agent_batch_decode(buf, len, &d));
    T_OK(rs_wire_agent_batch_peek_seq(buf, len, &agent, &seq));
    T_EQ(agent, 7);
    T_EQ(seq, 99);
    if (d) {
        const struct rs_agent_batch *g = rs_wire_agent_batch_get(d);
        T_EQ(g->batch_seq, 99);
        T_EQ(g->n_ranks, 2);
        T_EQ(g->ranks[1].identity.rank, 4);
        T_EQ(g->agent_dropped, 3);
        T_CHECK(strcmp(g->hello.host, "host") == 0);
        /* the decoder hashes the names (the server's writer uses these) */
        const struct rs_rank_batch *rb = &g->ranks[1];
        T_CHECK(rb->string_hashes != NULL && rb->n_strings == 2);
        for (uint32_t i = 0; rb->string_hashes && i < rb->n_strings; i++)
            T_EQ(rb->string_hashes[i], rs_hash_fnv1a64(rb->strings[i], strlen(rb->strings[i])));
    }
    rs_wire_agent_batch_free(d);
    /* Every truncation of a valid request is refused cleanly (or decodes to a valid prefix). */
    for (size_t cut = 0; cut < len; cut++) {
        rs_wire_agent_batch *t = NULL;
        int rc = rs_wire_agent_batch_decode(buf, cut, &t);
        T_CHECK(rc != 0 || t != NULL);
        rs_wire_agent_batch_free(t);
    }
    free(buf);
}

static void
rejects_bad_input(void)
{
    static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x34};
    struct rs_rank_batch b = sample_rank();
    struct rs_kernel_record bad_k = {10, 5, 0, 0, 0, 0};
    uint8_t buf[RS_WIRE_MAX_FRAME_BYTES];
    rs_wire_rank_frame *f = NULL;
    rs_wire_agent_batch *d = NULL;
    size_t len;

    T_EQ(rs_wire_rank_frame_decode(garbage, sizeof garbage, 1 << 16, &f), RS_E_MALFORMED);
    T_EQ(rs_wire_agent_batch_decode(garbage, sizeof garbage, &d), RS_E_MALFORMED);
    T_EQ(rs_wire_rank_frame_decode(buf, 100, 50, &f), RS_E_TOO_BIG);
    T_EQ(rs_wire_agent_batch_decode(buf, RS_WIRE_MAX_BATCH_BYTES + 1, &d), RS_E_TOO_BIG);
    /* end before start */
    b.kernels = &bad_k;
    b.n_kernels = 1;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    /* name id out of range */
    b = sample_rank();
    b.n_strings = 1;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    /* invalid job names */
    b = sample_rank();
    b.identity.job = "bad/job";
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    b.identity.job = "";
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    /* rank outside world */
    b = sample_rank();
    b.identity.rank = 8;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    /* unknown collector flag bits */
    b = sample_rank();
    b.collector_flags = 1u << 20;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    /* loss accounting that cannot be: more frames merged than numbered, more records in them
     * than sent, a number without a collector or without a frame */
    const struct {
        uint64_t id, seq, sent, frames, records;
    } bad_counts[] = {
        {7, 2, 10, 3, 1}, {7, 2, 10, 1, 11}, {0, 2, 10, 1, 1}, {7, 2, 10, 0, 0}, {7, 0, 0, 1, 0}};
    for (size_t i = 0; i < sizeof bad_counts / sizeof bad_counts[0]; i++) {
        b = sample_rank();
        b.collector_id = bad_counts[i].id;
        b.frame_seq = bad_counts[i].seq;
        b.records_sent = bad_counts[i].sent;
        b.frames = bad_counts[i].frames;
        b.frame_records = bad_counts[i].records;
        T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    }
    b = sample_rank();
    b.collector_id = 7;
    b.frame_seq = 2;
    b.records_sent = 10;
    b.frames = b.frame_records = 1;
    T_OK(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len));
    T_OK(rs_wire_rank_frame_decode(buf, len, sizeof buf, &f));
    if (f) {
        const struct rs_rank_batch *g = rs_wire_rank_frame_batch(f);
        T_EQ(g->collector_id, 7);
        T_EQ(g->frame_seq, 2);
        T_EQ(g->records_sent, 10);
        T_EQ(g->frames, 1);
        T_EQ(g->frame_records, 1);
    }
    rs_wire_rank_frame_free(f);
    f = NULL;
    /* frame too small for the buffer */
    b = sample_rank();
    T_EQ(rs_wire_rank_batch_encode(&b, buf, 10, &len), RS_E_TOO_BIG);
    /* not UTF-8 */
    static const char *const bad_names[] = {"ok", "\xc3\x28"};
    b.strings = bad_names;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
}

/* An agent's summary: window totals and a measured step, decoded as sent. */
static const struct rs_kernel_total ktotals[] = {{1000000, 1000000, 0, 3, 4500, 2000},
                                                 {2000000, 1000000, 0, 1, 700, 700}};
static const struct rs_copy_total ctotals[] = {{1000000, 1000000, RS_COPY_HTOD, 2, 300, 200, 8192}};

static struct rs_rank_batch
summary_rank(struct rs_step_record *st)
{
    struct rs_rank_batch b = sample_rank();
    *st = (struct rs_step_record){.step = 3,
                                  .start_ns = 999000,
                                  .end_ns = 1010000,
                                  .measured = true,
                                  .metrics = {6000, 7000, 2000, 3000, 1000, 3}};
    b.n_kernels = b.n_memcpys = 0;
    b.steps = st;
    b.kernel_totals = ktotals;
    b.n_kernel_totals = 2;
    b.copy_totals = ctotals;
    b.n_copy_totals = 1;
    return b;
}

static void
summary_round_trip(void)
{
    struct rs_step_record st;
    struct rs_rank_batch b = summary_rank(&st);
    uint8_t buf[RS_WIRE_MAX_FRAME_BYTES];
    size_t len = 0;
    rs_wire_rank_frame *f = NULL;

    T_OK(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len));
    T_OK(rs_wire_rank_frame_decode(buf, len, RS_WIRE_MAX_FRAME_BYTES, &f));
    if (!f)
        return;
    const struct rs_rank_batch *d = rs_wire_rank_frame_batch(f);
    T_EQ(d->n_kernel_totals, 2);
    T_EQ(d->n_copy_totals, 1);
    for (uint32_t i = 0; i < d->n_kernel_totals && i < 2; i++) {
        const struct rs_kernel_total *x = &d->kernel_totals[i], *y = &ktotals[i];
        T_CHECK(x->window_start_ns == y->window_start_ns && x->window_ns == y->window_ns &&
                x->name_id == y->name_id && x->count == y->count && x->total_ns == y->total_ns &&
                x->max_ns == y->max_ns);
    }
    T_CHECK(d->n_copy_totals == 1 && d->copy_totals[0].window_start_ns == 1000000 &&
            d->copy_totals[0].kind == RS_COPY_HTOD && d->copy_totals[0].bytes == 8192 &&
            d->copy_totals[0].max_ns == 200);
    T_CHECK(d->n_steps == 1 && d->steps[0].measured && d->steps[0].metrics.compute_ns == 6000 &&
            d->steps[0].metrics.exposed_comm_ns == 2000 && d->steps[0].metrics.kernels == 3);
    rs_wire_rank_frame_free(f);
    /* a step without metrics decodes as not measured */
    b = sample_rank();
    T_OK(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len));
    T_OK(rs_wire_rank_frame_decode(buf, len, RS_WIRE_MAX_FRAME_BYTES, &f));
    if (f)
        T_CHECK(!rs_wire_rank_frame_batch(f)->steps[0].measured);
    rs_wire_rank_frame_free(f);
}

static void
rejects_bad_summaries(void)
{
    uint8_t buf[RS_WIRE_MAX_FRAME_BYTES];
    struct rs_step_record st;
    struct rs_rank_batch b;
    struct rs_kernel_total kt;
    struct rs_copy_total ct;
    size_t len;

    b = summary_rank(&st); /* metrics that do not add up to the step */
    st.metrics.idle_ns++;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    b = summary_rank(&st); /* exposed NCCL time beyond all NCCL time */
    st.metrics.exposed_comm_ns = 8000;
    st.metrics.compute_ns = 0;
    st.metrics.idle_ns = 3000;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    const struct rs_kernel_total bad_k[] = {
        {1000001, 1000000, 0, 1, 10, 10},           /* not at a multiple of its length */
        {1000000, 0, 0, 1, 10, 10},                 /* no length */
        {0, RS_WIRE_MAX_WINDOW_NS * 2, 0, 1, 1, 1}, /* too long */
        {1000000, 1000000, 0, 0, 10, 10},           /* no launch */
        {1000000, 1000000, 0, 2, 10, 11},           /* longest beyond the total */
        {1000000, 1000000, 9, 1, 10, 10},           /* name id out of range */
    };
    for (size_t i = 0; i < sizeof bad_k / sizeof bad_k[0]; i++) {
        b = summary_rank(&st);
        kt = bad_k[i];
        b.kernel_totals = &kt;
        b.n_kernel_totals = 1;
        T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
    }
    b = summary_rank(&st);
    ct = ctotals[0];
    ct.kind = RS_COPY_KIND_COUNT;
    b.copy_totals = &ct;
    T_EQ(rs_wire_rank_batch_encode(&b, buf, sizeof buf, &len), RS_E_MALFORMED);
}

static void
rejects_wrong_version(void)
{
    /* schema_version is field 1 (varint); a request carrying version 6 must be refused. */
    static const uint8_t v5[] = {0x08, 0x06, 0x11, 1, 0, 0, 0, 0, 0, 0, 0};
    rs_wire_agent_batch *d = NULL;

    T_EQ(rs_wire_agent_batch_decode(v5, sizeof v5, &d), RS_E_VERSION);
    /* batches with agent summaries go as version 2 (a version-1 server refuses them instead of
     * dropping the totals unseen), all others as version 1 */
    struct rs_step_record st;
    struct rs_rank_batch plain = sample_rank(), summary = summary_rank(&st);
    struct rs_agent_batch env = t_agent_batch(7, 1, &plain, 1);
    uint8_t *buf = NULL;
    size_t len = 0;
    T_OK(rs_wire_agent_batch_encode(&env, &buf, &len));
    T_CHECK(buf && len > 2 && buf[0] == 0x08 && buf[1] == 1);
    free(buf);
    env.ranks = &summary;
    T_OK(rs_wire_agent_batch_encode(&env, &buf, &len));
    T_CHECK(buf && len > 2 && buf[0] == 0x08 && buf[1] == 2);
    T_OK(rs_wire_agent_batch_decode(buf, len, &d));
    rs_wire_agent_batch_free(d);
    free(buf);
    /* host synchronizations go as version 3 (a version-2 server would reject the kind), as
     * records or as window totals, and come back as sent */
    struct rs_memcpy_record sync = {1002000, 1006000, 0, RS_SYNC_STREAM, 7};
    struct rs_rank_batch with_sync = sample_rank();
    with_sync.memcpys = &sync;
    with_sync.n_memcpys = 1;
    env.ranks = &with_sync;
    T_OK(rs_wire_agent_batch_encode(&env, &buf, &len));
    T_CHECK(buf && len > 2 && buf[0] == 0x08 && buf[1] == 3);
    T_OK(rs_wire_agent_batch_decode(buf, len, &d));
    const struct rs_agent_batch *got = d ? rs_wire_agent_batch_get(d) : NULL;
    T_CHECK(got && got->n_ranks == 1 && got->ranks[0].n_memcpys == 1 &&
            got->ranks[0].memcpys[0].kind == RS_SYNC_STREAM &&
            got->ranks[0].memcpys[0].end_ns - got->ranks[0].memcpys[0].start_ns == 4000);
    rs_wire_agent_batch_free(d);
    free(buf);
    struct rs_copy_total sync_total = {0, 1000000000, RS_SYNC_CONTEXT, 2, 300, 200, 0};
    summary.copy_totals = &sync_total;
    summary.n_copy_totals = 1;
    env.ranks = &summary;
    T_OK(rs_wire_agent_batch_encode(&env, &buf, &len));
    T_CHECK(buf && len > 2 && buf[0] == 0x08 && buf[1] == 3);
    free(buf);
    /* launch waits go as version 4 (a version-3 server would reject the kind), also beside a
     * host synchronization, and come back as sent */
    struct rs_memcpy_record waits[2] = {{1002000, 1006000, 0, RS_SYNC_STREAM, 7},
                                        {1007000, 1009000, 0, RS_LAUNCH_WAIT, 7}};
    with_sync.memcpys = waits;
    with_sync.n_memcpys = 2;
    env.ranks = &with_sync;
    T_OK(rs_wire_agent_batch_encode(&env, &buf, &len));
    T_CHECK(buf && len > 2 && buf[0] == 0x08 && buf[1] == 4);
    T_OK(rs_wire_agent_batch_decode(buf, len, &d));
    got = d ? rs_wire_agent_batch_get(d) : NULL;
    T_CHECK(got && got->n_ranks == 1 && got->ranks[0].n_memcpys == 2 &&
            got->ranks[0].memcpys[1].kind == RS_LAUNCH_WAIT &&
            got->ranks[0].memcpys[1].end_ns - got->ranks[0].memcpys[1].start_ns == 2000);
    rs_wire_agent_batch_free(d);
    free(buf);
    /* a batch goes as the highest version any of its ranks needs: a rank with a sync (3) before
     * a rank with a launch wait (4) is version 4, in either order */
    struct rs_memcpy_record only_sync = waits[0], only_wait = waits[1];
    struct rs_rank_batch mixed[2] = {sample_rank(), sample_rank()};
    mixed[0].memcpys = &only_sync;
    mixed[0].n_memcpys = 1;
    mixed[1].memcpys = &only_wait;
    mixed[1].n_memcpys = 1;
    mixed[1].identity.rank = 1;
    for (int order = 0; order < 2; order++) {
        struct rs_rank_batch pair[2] = {mixed[order], mixed[1 - order]};
        env.ranks = pair;
        env.n_ranks = 2;
        T_OK(rs_wire_agent_batch_encode(&env, &buf, &len));
        T_CHECK(buf && len > 2 && buf[0] == 0x08 && buf[1] == 4);
        free(buf);
    }
    env.n_ranks = 1;
    sync_total.kind = RS_LAUNCH_WAIT; /* as a window total */
    env.ranks = &summary;
    T_OK(rs_wire_agent_batch_encode(&env, &buf, &len));
    T_CHECK(buf && len > 2 && buf[0] == 0x08 && buf[1] == 4);
    free(buf);
    T_CHECK(rs_copy_kind_is_sync(RS_SYNC_EVENT) && rs_copy_kind_is_sync(RS_SYNC_CONTEXT) &&
            !rs_copy_kind_is_sync(RS_COPY_MEMSET) && !rs_copy_kind_is_sync(RS_LAUNCH_WAIT));
    T_CHECK(rs_copy_kind_is_host_side(RS_SYNC_EVENT) && rs_copy_kind_is_host_side(RS_LAUNCH_WAIT) &&
            !rs_copy_kind_is_host_side(RS_COPY_MEMSET) &&
            !rs_copy_kind_is_host_side(RS_COPY_KIND_COUNT));
    T_CHECK(strcmp(rs_copy_kind_name(RS_SYNC_STREAM), "Stream Sync") == 0);
    T_CHECK(strcmp(rs_copy_kind_name(RS_LAUNCH_WAIT), "Launch Wait") == 0);
}

static void
reply_round_trip(void)
{
    struct rs_server_reply r = {42, RS_REPLY_RETRY, "storage full", 500, {.min_flush_ms = 2000}},
                           out;
    uint8_t buf[RS_WIRE_MAX_REPLY_BYTES];
    char err[64];
    size_t len;

    T_OK(rs_wire_reply_encode(&r, buf, sizeof buf, &len));
    T_OK(rs_wire_reply_decode(buf, len, &out, err, sizeof err));
    T_EQ(out.batch_seq, 42);
    T_EQ(out.status, RS_REPLY_RETRY);
    T_EQ(out.retry_after_ms, 500);
    T_EQ(out.control.min_flush_ms, 2000);
    T_CHECK(strcmp(out.error, "storage full") == 0);
    buf[1] = 0x7f; /* corrupt */
    T_CHECK(rs_wire_reply_decode(buf, 1, &out, err, sizeof err) != 0);
}

static void
job_names(void)
{
    char out[200];

    T_CHECK(rs_wire_job_valid("slurm-1234.train_a:5@x+y=z"));
    T_CHECK(!rs_wire_job_valid("a b"));
    rs_wire_job_sanitize("my job/1", out, sizeof out);
    T_CHECK(strcmp(out, "my_job_1") == 0);
    T_CHECK(rs_wire_job_valid(out));
    rs_wire_job_sanitize("", out, sizeof out);
    T_CHECK(strcmp(out, "unknown") == 0);
}

int
main(void)
{
    T_RUN(rank_frame_round_trip);
    T_RUN(agent_batch_round_trip);
    T_RUN(rejects_bad_input);
    T_RUN(rejects_wrong_version);
    T_RUN(summary_round_trip);
    T_RUN(rejects_bad_summaries);
    T_RUN(reply_round_trip);
    T_RUN(job_names);
    return T_DONE("proto/wire");
}
