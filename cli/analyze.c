/* `rankscope analyze FILE...`: imports PyTorch profiler traces into an embedded store (a temporary
 * one, or --data DIR) and prints the cross-rank report with the same analyses and tables the server
 * and the other commands use — no server needed. */
#include "cli/commands.h"

#include "common/error.h"
#include "common/fs.h"
#include "import/trace_file.h"
#include "cli/output.h"
#include "cli/trace_args.h"
#include "query/advice.h"
#include "query/jobs.h"
#include "query/skew.h"
#include "query/steps.h"
#include "query/stragglers.h"
#include "query/top.h"
#include "storage/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BATCHES_PER_COMMIT 32
#define TOP_KERNELS 10
#define STEPS_SHOWN 30 /* per rank, as `rankscope steps` shows */

struct store_sink {
    rs_store *store;
    rs_store_write *w;
    unsigned pending;
    uint64_t agent_id, batch_seq;
    uint64_t duplicates;
};

static int
sink_commit(struct store_sink *s)
{
    int rc = 0;

    if (s->w) {
        rc = rs_store_write_commit(s->w);
        s->w = NULL;
        s->pending = 0;
    }
    return rc;
}

/* rs_kineto_sink_fn: one batch into the store, committed in groups. */
static int
sink_batch(void *arg, const struct rs_rank_batch *b)
{
    struct store_sink *s = arg;
    struct rs_agent_batch ab = rs__cli_import_batch(s->agent_id, ++s->batch_seq, b);
    bool duplicate;
    int rc;

    if (!s->w && (rc = rs_store_write_begin(s->store, &s->w)) != 0)
        return rc;
    if ((rc = rs_store_write_batch(s->w, &ab, &duplicate)) != 0) {
        rs_store_write_abort(s->w);
        s->w = NULL;
        return rc;
    }
    s->duplicates += duplicate;
    if (++s->pending >= BATCHES_PER_COMMIT)
        return sink_commit(s);
    return 0;
}

/* Each rank's newest `keep` steps, as rs_query_job_steps(keep) would have loaded them (views into
 * `ranks`; free only the array). */
static struct rs_rank_steps *
newest_steps(const struct rs_rank_steps *ranks, size_t n_ranks, size_t keep)
{
    struct rs_rank_steps *v = calloc(n_ranks ? n_ranks : 1, sizeof *v);

    for (size_t i = 0; v && i < n_ranks; i++) {
        size_t first = ranks[i].n > keep ? ranks[i].n - keep : 0;
        v[i] = ranks[i];
        v[i].steps += first;
        v[i].n -= first;
        v[i].to_store = NULL; /* nothing is stored from here */
        v[i].n_to_store = 0;
    }
    return v;
}

struct report {
    json_t *ranks, *steps, *top, *skew, *stragglers, *advice;
};

static void
report_free(struct report *rep)
{
    json_decref(rep->ranks);
    json_decref(rep->steps);
    json_decref(rep->top);
    json_decref(rep->skew);
    json_decref(rep->stragglers);
    json_decref(rep->advice);
}

/* Step metrics are the costly part: loaded once, for the straggler rule's default lookback,
 * and shared by the steps table and the straggler verdict. */
static int
report_build(rs_store *store, const char *job, struct report *rep, char *err, size_t err_len)
{
    struct rs_profile_scope all = {job, RS_PROFILE_ALL_RANKS, false, 0, 0};
    struct rs_straggler_options so;
    struct rs_skew_options ko = {0, 0};
    struct rs_rank_steps *ranks = NULL, *newest = NULL;
    size_t n_ranks = 0;
    rs_store_read *r;
    int rc;

    if ((rc = rs_store_read_begin(store, &r)) != 0) {
        snprintf(err, err_len, "reading the store: %s", rs_strerror(rc));
        return rc;
    }
    rs_straggler_options_default(&so);
    so.fit_short = true; /* a trace is short: windows fitted to its steps, as the REST answer's */
    const char *what = "steps";
    if ((rc = rs_query_job_steps(r, job, rs_straggler_steps_needed(&so), &ranks, &n_ranks)) != 0)
        goto out;
    rc = -ENOMEM;
    if (!(rep->steps = rs_steps_json(job, ranks, n_ranks, STEPS_SHOWN)) ||
        !(newest = newest_steps(ranks, n_ranks, rs_straggler_steps_needed(&so))))
        goto out;
    if ((what = "ranks", rc = rs_query_ranks(r, job, &rep->ranks)) == 0 &&
        (what = "top kernels", rc = rs_query_top(r, &all, TOP_KERNELS, &rep->top)) == 0 &&
        (what = "NCCL skew", rc = rs_query_skew(r, job, &ko, &rep->skew)) == 0)
        what = "stragglers",
        rc = rs_query_stragglers_on(r, job, &so, newest, n_ranks, &rep->stragglers);
    if (rc == 0)
        what = "advice",
        rc = rs_query_advice_json(r, job, 0, RS_ADVICE_ALL_RANKS, &rep->advice);
out:
    free(newest);
    rs_job_steps_free(ranks, n_ranks);
    rs_store_read_end(r);
    if (rc != 0)
        snprintf(err, err_len, "%s of job %s: %s", what, job, rs_strerror(rc));
    return rc;
}

/* The report for people. The ranks table is left out: its per-step columns come from step
 * records, which traces without ProfilerStep markers do not have (--json carries it). */
static int
print_report(const char *job, const struct report *rep)
{
    int (*const render[])(const char *, json_t *) = {
        rs__cli_render_steps, rs__cli_render_top,        rs__cli_render_skew,
        rs__cli_render_stragglers, rs__cli_render_advice};
    json_t *docs[] = {rep->steps, rep->top, rep->skew, rep->stragglers, rep->advice};
    int rc = 0;

    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        printf("\n");
        rs__cli_escape_doc(docs[i]); /* kernel names from the traces */
        rc |= render[i](job, docs[i]);
    }
    return rc;
}

static int
make_temp_dir(char *out, size_t len)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(out, len, "%s/rankscope-analyze-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(out) ? 0 : -errno;
}

int
rs_cli_analyze(const struct rs_cli_options *o, int argc, char **argv)
{
    struct rs_trace_set set;
    struct store_sink sink = {0};
    struct report rep = {0};
    char dir[4096], err[1024];
    bool temporary = !o->data_dir || !*o->data_dir;
    json_t *files = NULL;
    int rc, exit_code = 1;

    if ((rc = rs__cli_trace_set_open(o, "rankscope analyze FILE... [--job NAME] [--data DIR]", argc,
                                     argv, &set)) != 0)
        return rc;
    if (temporary)
        rc = make_temp_dir(dir, sizeof dir);
    else
        rc = snprintf(dir, sizeof dir, "%s", o->data_dir) < 0 ? -EINVAL : 0;
    /* it writes: the writer lock keeps it off a store a server is writing (docs/operations.md) */
    struct rs_store_options so = {.exclusive = true};
    if (rc == 0)
        rc = rs_store_open(dir, &so, &sink.store);
    if (rc == RS_E_LOCKED) {
        long pid = rs_store_locked_by(dir);
        char who[64] = "another process";
        if (pid > 0)
            snprintf(who, sizeof who, "another process, pid %ld", pid);
        fprintf(stderr,
                "rankscope: the store in %s is in use by %s (a rankscope-server?); analyze "
                "writes into its store: give it another --data, or send the traces to that "
                "server with `rankscope import`\n",
                dir, who);
        goto done;
    }
    if (rc != 0) {
        fprintf(stderr, "rankscope: cannot open a store in %s: %s\n", dir, rs_strerror(rc));
        goto done;
    }
    /* A temporary store is unlinked at once: LMDB keeps working through its open files and maps,
     * and nothing is left behind in TMPDIR when analyze is interrupted or killed. */
    if (temporary)
        rs_fs_remove_tree(dir);
    sink.agent_id = set.agent_id;
    if ((rc = rs__cli_trace_set_import(&set, sink_batch, &sink, &files)) != 0 ||
        (rc = sink_commit(&sink)) != 0) {
        if (rc > 0) /* the file's error is printed */
            rc = 0;
        else if (rc < 0)
            fprintf(stderr, "rankscope: storing the imported records: %s\n", rs_strerror(rc));
        goto done;
    }
    if ((rc = report_build(sink.store, set.job, &rep, err, sizeof err)) != 0) {
        fprintf(stderr, "rankscope: %s\n", rs__cli_escaped(err));
        goto done;
    }
    if (o->json) {
        json_t *doc = json_pack("{s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:O}", "job", set.job,
                                "files", files, "ranks", rep.ranks, "steps", rep.steps, "top",
                                rep.top, "skew", rep.skew, "stragglers", rep.stragglers, "advice",
                                rep.advice);
        if (!temporary && doc)
            json_object_set_new(doc, "data", json_string(dir));
        exit_code = doc ? rs__cli_print_json(doc) : 1;
    } else {
        exit_code = print_report(set.job, &rep) ? 1 : 0;
        if (!temporary)
            printf("\nthe imported data stays in %s (rankscope-server --data %s serves it)\n", dir,
                   dir);
    }
done:
    if (sink.w)
        rs_store_write_abort(sink.w);
    rs_store_close(sink.store);
    if (temporary && !sink.store) /* made, but no store opened in it */
        rmdir(dir);
    report_free(&rep);
    json_decref(files);
    rs__cli_trace_set_close(&set);
    return exit_code;
}
