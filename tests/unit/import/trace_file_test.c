/* Unit tests of trace files on disk: gzip and plain files give the same records, the header
 * pre-scan pass, the rank from the file name, errors naming the file and byte, and argument
 * expansion (files, directories, globs). */
#include "import/trace_file.h"

#include "common/error.h"
#include "common/fs.h"
#include "tests/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[256];

static void
write_file(const char *name, const char *text, bool gzip)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (gzip) {
        gzFile gz = gzopen(path, "wb");
        T_CHECK(gz != NULL);
        if (!gz)
            return;
        T_EQ(gzwrite(gz, text, (unsigned)strlen(text)), strlen(text));
        gzclose(gz);
    } else {
        FILE *f = fopen(path, "wb");
        T_CHECK(f != NULL);
        if (!f)
            return;
        fputs(text, f);
        fclose(f);
    }
}

struct count {
    uint64_t kernels, batches;
    uint32_t rank;
};

static int
count(void *arg, const struct rs_rank_batch *b)
{
    struct count *c = arg;

    c->kernels += b->n_kernels;
    c->batches++;
    c->rank = b->identity.rank;
    return 0;
}

static bool lone; /* import's rs_kineto_options.lone_rank0 */

static int
import(const char *name, int64_t rank, struct count *c, struct rs_kineto_stats *st, char *err,
       size_t len)
{
    struct rs_kineto_options o = {"j", rank, "", lone};
    char path[512];

    memset(c, 0, sizeof *c);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return rs_trace_import_file(path, &o, count, c, NULL, NULL, st, err, len);
}

static const char trace[] =
    "{\"distributedInfo\": {\"rank\": 1, \"world_size\": 2}, \"baseTimeNanoseconds\": 1000000000,"
    " \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 1, \"dur\": "
    "1},"
    " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", \"ts\": 3, \"dur\": 1}]}";

static void
files(void)
{
    struct rs_kineto_stats st;
    struct count c;
    char err[512];

    write_file("plain_rank1.json", trace, false);
    write_file("zipped_rank1.json.gz", trace, true);
    T_EQ(import("plain_rank1.json", -1, &c, &st, err, sizeof err), 0);
    T_EQ(c.kernels, 2);
    T_EQ(c.rank, 1);
    T_EQ(import("zipped_rank1.json.gz", -1, &c, &st, err, sizeof err), 0);
    T_EQ(c.kernels, 2);
    T_EQ(st.world_size, 2);

    /* header after the events, no rank in the trace: scan pass, then the name's rank */
    write_file("late_rank7.json",
               "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": "
               "1, \"dur\": 1}], \"baseTimeNanoseconds\": 2000000000}",
               false);
    T_EQ(import("late_rank7.json", -1, &c, &st, err, sizeof err), 0);
    T_EQ(c.rank, 7);
    T_EQ(c.kernels, 1);
    T_EQ(st.first_ns, 2000001000);
    write_file("norank.json", "{\"traceEvents\": []}", false);
    T_EQ(import("norank.json", -1, &c, &st, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "norank.json: ") != NULL && strstr(err, "--rank") != NULL);

    /* errors name the file and the byte */
    write_file("broken.json", "{\"traceEvents\": [{\"ph\": \"X\",, }]}", false);
    T_EQ(import("broken.json", 0, &c, &st, err, sizeof err), RS_E_MALFORMED);
    T_CHECK(strstr(err, "broken.json: expected a member name at byte 28") != NULL);
    write_file("broken.json.gz", "{\"traceEvents\": [{\"ph\": \"X\",, }]}", true);
    T_EQ(import("broken.json.gz", 0, &c, &st, err, sizeof err), RS_E_MALFORMED);
    T_CHECK(strstr(err, "at byte 28") != NULL);
    T_CHECK(import("missing.json", 0, &c, &st, err, sizeof err) < 0);
    T_CHECK(strstr(err, "missing.json") != NULL);
    /* a truncated gzip stream is a clear error, not a crash */
    char path[512];
    snprintf(path, sizeof path, "%s/zipped_rank1.json.gz", dir);
    T_EQ(truncate(path, 30), 0);
    T_CHECK(import("zipped_rank1.json.gz", -1, &c, &st, err, sizeof err) != 0);
    T_CHECK(strstr(err, "zipped_rank1.json.gz: ") != NULL);
}

static void
rank_names(void)
{
    T_EQ(rs_trace_rank_from_name("/x/rank9/trace_rank3.json.gz"), 3);
    T_EQ(rs_trace_rank_from_name("worker-RANK_12.pt.trace.json"), 12);
    T_OK(rs_trace_rank_from_name("rank-0.json"));
    T_EQ(rs_trace_rank_from_name("ranking.json"), -1);
    T_EQ(rs_trace_rank_from_name("trace.json"), -1);
}

static void
expand(void)
{
    char sub[300], glob[300], missing[300], err[512];
    char **paths;
    size_t n;

    snprintf(sub, sizeof sub, "%s/sub", dir);
    T_OK(rs_fs_mkdir_p(sub));
    write_file("sub/b_rank1.json", "{}", false);
    write_file("sub/a_rank0.json.gz", "{}", true);
    write_file("sub/notes.txt", "x", false);
    char *args1[] = {sub};
    T_OK(rs_trace_expand(args1, 1, &paths, &n, err, sizeof err));
    T_EQ(n, 2);
    if (n == 2) {
        T_CHECK(strstr(paths[0], "sub/a_rank0.json.gz") != NULL);
        T_CHECK(strstr(paths[1], "sub/b_rank1.json") != NULL);
    }
    rs_trace_paths_free(paths, n);
    /* a glob, plus one of its files again: de-duplicated */
    snprintf(glob, sizeof glob, "%s/sub/*_rank*", dir);
    char again[300];
    snprintf(again, sizeof again, "%s/sub/b_rank1.json", dir);
    char *args2[] = {glob, again};
    T_OK(rs_trace_expand(args2, 2, &paths, &n, err, sizeof err));
    T_EQ(n, 2);
    rs_trace_paths_free(paths, n);
    snprintf(missing, sizeof missing, "%s/nothing*.json", dir);
    char *args3[] = {missing};
    T_EQ(rs_trace_expand(args3, 1, &paths, &n, err, sizeof err), RS_E_NOT_FOUND);
    T_CHECK(strstr(err, "nothing*.json: no trace files") != NULL);
}

/* A trace that says no rank: refused, or rank 0 of a one-rank job for a lone file; JSON that is
 * no trace is told apart from a broken trace. */
static void
rankless_and_not_traces(void)
{
    static const char rankless[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", "
                                   "\"name\": \"a\", \"ts\": 1, \"dur\": 1}]}";
    struct rs_kineto_stats st;
    struct count c;
    char err[512];

    write_file("single.json", rankless, false);
    write_file("config.json", "{\"lr\": 0.1}", false);
    write_file("broken.json", "{\"traceEvents\": [", false);
    lone = false;
    T_EQ(import("single.json", -1, &c, &st, err, sizeof err), RS_E_CONFIG);
    T_CHECK(strstr(err, "does not say its rank") != NULL);
    lone = true;
    T_EQ(import("single.json", -1, &c, &st, err, sizeof err), 0);
    T_EQ(c.rank, 0);
    T_EQ(c.kernels, 1);
    T_EQ(st.world_size, 1);
    T_CHECK(st.rank_assumed);
    T_EQ(import("plain_rank1.json", -1, &c, &st, err, sizeof err), 0); /* says its rank */
    T_CHECK(!st.rank_assumed && st.world_size == 2);
    lone = false;
    T_EQ(import("config.json", -1, &c, &st, err, sizeof err), RS_E_MALFORMED);
    T_CHECK(st.not_a_trace && strstr(err, "not a trace") != NULL);
    T_EQ(import("broken.json", -1, &c, &st, err, sizeof err) != 0, 1);
    T_CHECK(!st.not_a_trace);
    T_EQ(c.batches, 0);
}

int
main(void)
{
    snprintf(dir, sizeof dir, "/tmp/rs-trace-file-test-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    T_RUN(files);
    T_RUN(rank_names);
    T_RUN(rankless_and_not_traces);
    T_RUN(expand);
    rs_fs_remove_tree(dir);
    return T_DONE("import/trace_file");
}
