/* Unit tests of the Kineto importer on small synthetic traces: both timestamp conventions, both
 * category spellings, NCCL kernels with and without process-group/Seq arguments, memcpy/memset,
 * ProfilerStep steps, what is ignored or rejected and counted, batching, the header-after-events
 * case, and the errors for documents that are JSON but not traces. */
#include "import/kineto.h"

#include "common/error.h"
#include "common/hash.h"
#include "tests/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mem {
    const char *s;
    size_t len, pos;
};

static ssize_t
mem_read(void *arg, void *buf, size_t cap)
{
    struct mem *m = arg;
    size_t n = m->len - m->pos < cap ? m->len - m->pos : cap;

    memcpy(buf, m->s + m->pos, n);
    m->pos += n;
    return (ssize_t)n;
}

/* What the sink saw, flattened. */
struct seen {
    size_t batches, kernels, colls, memcpys, steps;
    struct rs_kernel_record k[8];
    char kname[8][64];
    struct rs_collective_record c[8];
    struct rs_memcpy_record m[8];
    struct rs_step_record s[8];
    uint32_t rank, world;
    char job[64];
};

static int
collect(void *arg, const struct rs_rank_batch *b)
{
    struct seen *s = arg;

    s->batches++;
    s->rank = b->identity.rank;
    s->world = b->identity.world_size;
    snprintf(s->job, sizeof s->job, "%s", b->identity.job);
    for (uint32_t i = 0; i < b->n_kernels; i++, s->kernels++)
        if (s->kernels < 8) {
            s->k[s->kernels] = b->kernels[i];
            snprintf(s->kname[s->kernels], 64, "%s", b->strings[b->kernels[i].name_id]);
        }
    for (uint32_t i = 0; i < b->n_collectives; i++, s->colls++)
        if (s->colls < 8)
            s->c[s->colls] = b->collectives[i];
    for (uint32_t i = 0; i < b->n_memcpys; i++, s->memcpys++)
        if (s->memcpys < 8)
            s->m[s->memcpys] = b->memcpys[i];
    for (uint32_t i = 0; i < b->n_steps; i++, s->steps++)
        if (s->steps < 8)
            s->s[s->steps] = b->steps[i];
    return 0;
}

static int
import(const char *doc, int64_t rank, const struct rs_kineto_header *h, struct seen *s,
       struct rs_kineto_stats *st, char *err, size_t err_len)
{
    struct mem m = {doc, strlen(doc), 0};
    struct rs_kineto_options o = {.job = "job-a", .rank = rank, .host = "node1"};
    rs_json_reader *r;
    int rc;

    memset(s, 0, sizeof *s);
    if (rs_json_reader_new(mem_read, &m, &r) != 0)
        return -1;
    rc = rs_kineto_import(r, &o, h, collect, s, st, err, err_len);
    rs_json_reader_free(r);
    return rc;
}

#define BASE "1790857026000000000"
#define BASE_NS 1790857026000000000ull

static const char current[] =
    "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0}],\n"
    " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 1, \"world_size\": 4, \"pg_config\": "
    "[{\"pg_name\": \"0\", \"ranks\": [0, 1, 2, 3]}]},\n"
    " \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": " BASE ",\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 10, \"tid\": 10, "
    "\"ts\": 100.000, \"dur\": 5.000, \"args\": {\"External id\": 1}},\n"
    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#5\", \"pid\": 10, "
    "\"tid\": 10, \"ts\": 100.000, \"dur\": 900.000},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_kernel\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 110.250, \"dur\": 20.5, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 99, "
    "\"grid\": [1, 2, 3]}},\n"
    "  {\"args\": {\"stream\": 17, \"Collective name\": \"allreduce\", \"In msg nelems\": 1024, "
    "\"dtype\": \"Float\", \"Process Group Name\": \"0\"}, \"ph\": \"X\", \"cat\": \"kernel\", "
    "\"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)\", "
    "\"ts\": 200, \"dur\": 50, \"pid\": 0, \"tid\": 17},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
    "\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)\", \"ts\": 300, "
    "\"dur\": 40, \"pid\": 0, \"tid\": 17, \"args\": {\"stream\": 17, \"Collective name\": "
    "\"allreduce\", \"In msg nelems\": 1024, \"dtype\": \"Float\", \"Process Group Name\": "
    "\"0\"}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllGather_RING_LL(x)\", "
    "\"ts\": 400, \"dur\": 10, \"tid\": 18, \"args\": {\"stream\": 18, \"Seq\": 41, \"Process "
    "Group "
    "Name\": \"1\", \"Collective name\": \"_allgather_base\", \"dtype\": \"BFloat16\", \"In msg "
    "nelems\": 8}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_SendRecv(x)\", \"ts\": 450, "
    "\"dur\": 10, \"tid\": 19},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", "
    "\"ts\": 500, \"dur\": 3, \"tid\": 7, \"args\": {\"stream\": 7, \"bytes\": 4096}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"ts\": 510, "
    "\"dur\": 1, \"tid\": 7, \"args\": {\"bytes\": 4}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Sync\", \"ts\": 520, "
    "\"dur\": 30, \"pid\": 0, \"tid\": 7, \"args\": {\"stream\": 7}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Some Future Sync\", \"ts\": 560, "
    "\"dur\": 5},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#5\", \"ts\": "
    "100, "
    "\"dur\": 900},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no_duration\", \"ts\": 600},\n"
    "  {\"ph\": \"s\", \"cat\": \"ac2g\", \"id\": 99, \"ts\": 101},\n"
    "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"GPU 0\"}}\n"
    " ],\n"
    " \"traceName\": \"x.json\"}\n";

static void
current_format(void)
{
    struct rs_kineto_stats st;
    struct seen s;
    char err[256];

    T_EQ(import(current, -1, NULL, &s, &st, err, sizeof err), 0);
    T_EQ(st.rank, 1);
    T_EQ(st.world_size, 4);
    T_CHECK(st.relative_time);
    T_EQ(s.rank, 1);
    T_EQ(s.world, 4);
    T_CHECK(strcmp(s.job, "job-a") == 0);
    T_EQ(st.events, 15);
    T_EQ(st.kernels, 1);
    T_EQ(st.collectives, 4);
    T_EQ(st.memcpys, 2);
    T_EQ(st.syncs, 1);
    T_EQ(st.steps, 1);
    T_EQ(st.rejected, 1);
    T_EQ(st.ignored, 5); /* cpu_op, gpu_user_annotation, unknown sync, flow, metadata */
    /* Kineto's "cuda_sync" events come back as host synchronizations */
    T_CHECK(s.memcpys == 3 && s.m[2].kind == RS_SYNC_STREAM && s.m[2].stream == 7 &&
            s.m[2].start_ns == BASE_NS + 520000 && s.m[2].end_ns == BASE_NS + 550000);
    T_EQ(s.batches, 1);
    /* times: base + µs with 3 decimals */
    T_EQ(s.k[0].start_ns, BASE_NS + 110250);
    T_EQ(s.k[0].end_ns, BASE_NS + 130750);
    T_EQ(s.k[0].stream, 7);
    T_EQ(s.k[0].correlation, 99);
    T_CHECK(strcmp(s.kname[0], "gemm_kernel") == 0);
    /* NCCL: communicator from the process group, seq counted on the stream, bytes from nelems */
    uint64_t pg0 = rs_hash_fnv1a64("pg:0", 4), pg1 = rs_hash_fnv1a64("pg:1", 4);
    T_EQ(s.c[0].op, RS_COLL_ALLREDUCE);
    T_CHECK(s.c[0].comm_hash == pg0 && s.c[1].comm_hash == pg0);
    T_EQ(s.c[0].seq, 1);
    T_EQ(s.c[1].seq, 2);
    T_CHECK(!s.c[0].seq_exact);
    T_EQ(s.c[0].bytes, 4096);
    T_EQ(s.c[0].start_ns, BASE_NS + 200000);
    T_EQ(s.c[2].op, RS_COLL_ALLGATHER);
    T_CHECK(s.c[2].comm_hash == pg1);
    T_EQ(s.c[2].seq, 41);
    T_CHECK(s.c[2].seq_exact);
    T_EQ(s.c[2].bytes, 16);
    /* no process group: the stream stands for the communicator */
    T_EQ(s.c[3].op, RS_COLL_SENDRECV);
    T_CHECK(s.c[3].comm_hash == (RS_WIRE_STREAM_COMM_TAG | 19));
    T_EQ(s.m[0].kind, RS_COPY_HTOD);
    T_EQ(s.m[0].bytes, 4096);
    T_EQ(s.m[1].kind, RS_COPY_MEMSET);
    T_EQ(s.s[0].step, 5);
    T_EQ(s.s[0].start_ns, BASE_NS + 100000);
    T_EQ(s.s[0].end_ns, BASE_NS + 1000000);
    T_EQ(st.first_ns, BASE_NS + 100000);
    /* --rank wins over distributedInfo */
    T_EQ(import(current, 2, NULL, &s, &st, err, sizeof err), 0);
    T_EQ(s.rank, 2);
}

/* PyTorch <= 1.9: absolute epoch µs, no base, capitalised categories, no distributedInfo. */
static const char old_format[] =
    "{\"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"ProfilerStep#0\", \"ts\": "
    "1620000000000000.5, \"dur\": 1000},\n"
    "  {\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"k1\", \"ts\": 1620000000000010, \"dur\": "
    "5, "
    "\"tid\": \"stream 7\", \"args\": {\"stream\": 7}},\n"
    "  {\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"Memcpy DtoH (Device -> Pageable)\", "
    "\"ts\": 1620000000000020, \"dur\": 2},\n"
    "  {\"ph\": \"X\", \"cat\": \"Memset\", \"name\": \"Memset (Device)\", \"ts\": "
    "1620000000000030, \"dur\": 2},\n"
    "  {\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": "
    "1620000000000005, \"dur\": 3}\n"
    "]}";

static void
old_format_absolute(void)
{
    struct rs_kineto_stats st;
    struct seen s;
    char err[256];

    T_EQ(import(old_format, 0, NULL, &s, &st, err, sizeof err), 0);
    T_CHECK(!st.relative_time);
    T_EQ(st.kernels, 1);
    T_EQ(st.memcpys, 2);
    T_EQ(st.steps, 1);
    T_EQ(st.ignored, 1);
    T_EQ(s.k[0].start_ns, 1620000000000010000ull);
    T_EQ(s.s[0].start_ns, 1620000000000000500ull);
    T_EQ(s.m[0].kind, RS_COPY_DTOH);
    T_EQ(s.m[1].kind, RS_COPY_MEMSET);
    /* no rank anywhere: the importer asks for the header scan, which finds none either */
    T_EQ(import(old_format, -1, NULL, &s, &st, err, sizeof err), RS_KINETO_NEED_HEADER);
    T_EQ(s.batches, 0);
    struct rs_kineto_header h = {.scanned = true};
    T_EQ(import(old_format, -1, &h, &s, &st, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "--rank") != NULL);
}

/* A writer that puts the header after the events (and a bare event array). */
static void
header_after_events(void)
{
    const char *doc = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                      "\"ts\": 10, \"dur\": 1}], \"baseTimeNanoseconds\": 5000000, "
                      "\"distributedInfo\": {\"rank\": 3, \"world_size\": 8}}";
    struct rs_kineto_header h;
    struct rs_kineto_stats st;
    struct seen s;
    char err[256];

    T_EQ(import(doc, -1, NULL, &s, &st, err, sizeof err), RS_KINETO_NEED_HEADER);
    struct mem m = {doc, strlen(doc), 0};
    rs_json_reader *r;
    T_OK(rs_json_reader_new(mem_read, &m, &r));
    T_OK(rs_kineto_header_scan(r, &h, err, sizeof err));
    rs_json_reader_free(r);
    T_CHECK(h.scanned && h.have_base && h.have_rank);
    T_EQ(h.base_ns, 5000000);
    T_EQ(import(doc, -1, &h, &s, &st, err, sizeof err), 0);
    T_EQ(s.rank, 3);
    T_EQ(s.world, 8);
    T_EQ(s.k[0].start_ns, 5010000);
    /* relative times with a known rank but no base yet: the base may follow */
    T_EQ(import(doc, 3, NULL, &s, &st, err, sizeof err), RS_KINETO_NEED_HEADER);
    /* the JSON Array Format */
    T_EQ(import("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": "
                "1700000000000000, \"dur\": 1}]",
                0, NULL, &s, &st, err, sizeof err),
         0);
    T_EQ(st.kernels, 1);
}

static void
not_a_trace(void)
{
    struct rs_kineto_stats st;
    struct seen s;
    char err[256];

    T_EQ(import("{\"a\": 1}", 0, NULL, &s, &st, err, sizeof err), RS_E_MALFORMED);
    T_CHECK(strstr(err, "no traceEvents") != NULL);
    T_EQ(import("{\"traceEvents\": {}}", 0, NULL, &s, &st, err, sizeof err), RS_E_MALFORMED);
    T_CHECK(strstr(err, "traceEvents is not an array at byte 16") != NULL);
    T_EQ(import("{\"traceEvents\": [1]}", 0, NULL, &s, &st, err, sizeof err), RS_E_MALFORMED);
    T_CHECK(strstr(err, "not an object at byte 17") != NULL);
    T_EQ(import("\"text\"", 0, NULL, &s, &st, err, sizeof err), RS_E_MALFORMED);
    T_EQ(import("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kern", 0, NULL, &s, &st, err,
                sizeof err),
         RS_E_MALFORMED);
    T_CHECK(strstr(err, "unterminated string at byte") != NULL);
    T_EQ(import("{\"distributedInfo\": {\"rank\": \"zero\"}, \"traceEvents\": []}", -1, NULL, &s,
                &st, err, sizeof err),
         RS_E_MALFORMED);
    T_CHECK(strstr(err, "distributedInfo.rank") != NULL);
    T_EQ(import("{\"distributedInfo\": {\"rank\": 4, \"world_size\": 4}, \"traceEvents\": []}", -1,
                NULL, &s, &st, err, sizeof err),
         RS_E_MALFORMED);
    T_CHECK(strstr(err, "not below the world size") != NULL);
    T_EQ(import("{\"baseTimeNanoseconds\": -1, \"traceEvents\": []}", 0, NULL, &s, &st, err,
                sizeof err),
         RS_E_MALFORMED);
}

static void
batching(void)
{
    size_t n = 20000, cap = n * 96 + 256, len = 0;
    char *doc = malloc(cap);
    struct rs_kineto_stats st;
    struct seen s;
    char err[256];

    T_CHECK(doc != NULL);
    if (!doc)
        return;
    len += (size_t)snprintf(doc + len, cap - len,
                            "{\"baseTimeNanoseconds\": 1000000000, \"traceEvents\": [");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(doc + len, cap - len,
                                "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%zu\",\"ts\":%zu,"
                                "\"dur\":1}",
                                i ? "," : "", i % 3, i * 2);
    snprintf(doc + len, cap - len, "]}");
    T_EQ(import(doc, 0, NULL, &s, &st, err, sizeof err), 0);
    T_EQ(st.kernels, n);
    T_EQ(s.kernels, n);
    T_EQ(s.batches, (n + RS_KINETO_BATCH_RECORDS - 1) / RS_KINETO_BATCH_RECORDS);
    T_EQ(st.batches, s.batches);
    T_EQ(st.last_ns, 1000000000ull + (n - 1) * 2000 + 1000);
    free(doc);
}

static void
collective_names(void)
{
    T_EQ(rs_kineto_collective_op("allreduce"), RS_COLL_ALLREDUCE);
    T_EQ(rs_kineto_collective_op("all_gather_into_tensor"), RS_COLL_ALLGATHER);
    T_EQ(rs_kineto_collective_op("_reduce_scatter_base"), RS_COLL_REDUCESCATTER);
    T_EQ(rs_kineto_collective_op("broadcast"), RS_COLL_BROADCAST);
    T_EQ(rs_kineto_collective_op("recv"), RS_COLL_SENDRECV);
    T_EQ(rs_kineto_collective_op("all_to_all_single"), RS_COLL_ALLTOALL);
    T_EQ(rs_kineto_collective_op("barrier"), RS_COLL_UNKNOWN);
}

int
main(void)
{
    T_RUN(current_format);
    T_RUN(old_format_absolute);
    T_RUN(header_after_events);
    T_RUN(not_a_trace);
    T_RUN(batching);
    T_RUN(collective_names);
    return T_DONE("import/kineto");
}
