/* `rankscope export JOB`: a window of a job in formats other tools open, from the server or, with
 * --data, from a store directory (a server's data directory, which may be in use, or one kept by
 * `analyze --data`).
 *  --format perfetto: Chrome/Perfetto trace files, one per rank (query/trace_export.h; from the
 *    server, GET /v1/jobs/{job}/trace?rank=R for each rank), written to --out DIR.
 *  --format pprof (pprof-stalls, pprof-time): one pprof profile (query/pprof_export.h; from the
 *    server, GET /v1/jobs/{job}/pprof), written to --out FILE.
 */
#include "cli/commands.h"

#include "common/error.h"
#include "common/fs.h"
#include "cli/http.h"
#include "cli/output.h"
#include "query/pprof_export.h"
#include "query/profile.h"
#include "query/trace_export.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static const char usage[] =
    "rankscope export JOB --format perfetto --out DIR [--data DIR] [--since-ns T --until-ns T]\n"
    "       rankscope export JOB --format pprof|pprof-stalls|pprof-time [--data DIR] [--out FILE]\n"
    "                        [--rank R] [--since-ns T --until-ns T]";

static int
open_store(const char *dir, rs_store **store, rs_store_read **r)
{
    int rc;

    *store = NULL;
    if ((rc = rs_store_open(dir, NULL, store)) != 0 || (rc = rs_store_read_begin(*store, r)) != 0) {
        fprintf(stderr, "rankscope: cannot read the store in %s: %s\n", dir, rs_strerror(rc));
        rs_store_close(*store);
        return 1;
    }
    return 0;
}

static uint64_t
opt_ns(int64_t v)
{
    return v > 0 ? (uint64_t)v : 0;
}

/* Appends "?rank=R&since_ns=..&until_ns=.." (the options given) to path[n..]. */
static void
scope_query(const struct rs_cli_options *o, int64_t rank, char *path, size_t len)
{
    size_t n = strlen(path);
    char sep = '?';

    if (rank >= 0 && n < len)
        n += (size_t)snprintf(path + n, len - n, "%crank=%" PRId64, sep, rank), sep = '&';
    if (o->since_ns > 0 && n < len)
        n += (size_t)snprintf(path + n, len - n, "%csince_ns=%" PRId64, sep, o->since_ns),
            sep = '&';
    if (o->until_ns > 0 && n < len)
        snprintf(path + n, len - n, "%cuntil_ns=%" PRId64, sep, o->until_ns);
}

/* GET path: 0 with the body in *body (*len bytes, caller frees), or an exit code after printing
 * the API's error. */
static int
download(const struct rs_cli_options *o, const char *path, char **body, size_t *len)
{
    char err[1024];
    long status = 0;

    if (rs_cli_http_get_bytes(o->server, path, &status, body, len, err, sizeof err) != 0) {
        fprintf(stderr, "rankscope: %s\n", err);
        return 1;
    }
    if (status == 200)
        return 0;
    json_t *doc = json_loadb(*body, *len, 0, NULL);
    int rc = rs__cli_api_error(status, doc);
    json_decref(doc);
    free(*body);
    return rc;
}

/* Perfetto files from the server: the job's ranks, then one GET /v1/jobs/{job}/trace per rank. */
static int
perfetto_from_server(const struct rs_cli_options *o, const char *job)
{
    char path[512], file[4096], *body;
    size_t len, ranks = 0, bytes = 0;
    json_t *doc, *rank;
    size_t i;
    int rc;

    snprintf(path, sizeof path, "/v1/jobs/%s/ranks", job);
    if ((rc = download(o, path, &body, &len)) != 0)
        return rc;
    doc = json_loadb(body, len, 0, NULL);
    free(body);
    json_array_foreach(json_object_get(doc, "ranks"), i, rank)
    {
        json_int_t r = json_integer_value(json_object_get(rank, "rank"));
        snprintf(path, sizeof path, "/v1/jobs/%s/trace", job);
        scope_query(o, r, path, sizeof path);
        if ((rc = download(o, path, &body, &len)) != 0)
            break;
        snprintf(file, sizeof file, "%s/%s_rank%lld.json", o->out, job, (long long)r);
        rc = rs_fs_write_atomic(file, body, len);
        free(body);
        if (rc != 0) {
            fprintf(stderr, "rankscope: %s: %s\n", file, rs_strerror(rc));
            rc = 1;
            break;
        }
        ranks++;
        bytes += len;
    }
    json_decref(doc);
    if (rc != 0)
        return rc;
    printf("exported job %s to %s/%s_rank*.json: %zu ranks, %zu bytes from %s\n(open a file in "
           "https://ui.perfetto.dev, or the directory with HTA)\n",
           job, o->out, job, ranks, bytes, o->server);
    return 0;
}

static int
export_perfetto(const struct rs_cli_options *o, const char *job)
{
    struct rs_trace_export_stats st;
    rs_store *store;
    rs_store_read *r;
    char err[1024];
    int rc;

    if (!o->out || !*o->out) {
        fprintf(stderr,
                "rankscope: the perfetto export writes one file per rank: give --out DIR\n"
                "usage: %s\n",
                usage);
        return 2;
    }
    if ((rc = rs_fs_mkdir_p(o->out)) != 0) {
        fprintf(stderr, "rankscope: %s: %s\n", o->out, rs_strerror(rc));
        return 1;
    }
    if (!o->data_dir || !*o->data_dir)
        return perfetto_from_server(o, job);
    if (open_store(o->data_dir, &store, &r) != 0)
        return 1;
    struct rs_trace_export_options eo = {job, opt_ns(o->since_ns), opt_ns(o->until_ns), o->out, 0};
    rc = rs_trace_export(r, &eo, &st, err, sizeof err);
    rs_store_read_end(r);
    rs_store_close(store);
    if (rc != 0) {
        fprintf(stderr, "rankscope: %s\n", err);
        return rc == RS_E_NOT_FOUND ? 3 : 1;
    }
    printf("exported job %s to %s/%s_rank*.json: %u ranks, %llu kernels, %llu NCCL kernels, %llu "
           "memcpy/memset, %llu host synchronizations, %llu steps\n(open a file in "
           "https://ui.perfetto.dev, or the directory with HTA)\n",
           job, o->out, job, st.ranks, (unsigned long long)st.kernels,
           (unsigned long long)st.collectives, (unsigned long long)st.memcpys,
           (unsigned long long)st.syncs, (unsigned long long)st.steps);
    return 0;
}

/* The pprof profile from a store directory: 0 with *data set, or an exit code. */
static int
pprof_from_store(const struct rs_cli_options *o, const char *job, enum rs_pprof_profile which,
                 uint8_t **data, size_t *len)
{
    struct rs_pprof_export_stats st;
    rs_store *store;
    rs_store_read *r;
    int rc;

    if (open_store(o->data_dir, &store, &r) != 0)
        return 1;
    struct rs_pprof_export_options po = {job,
                                         o->rank >= 0 ? (uint64_t)o->rank : RS_PROFILE_ALL_RANKS,
                                         opt_ns(o->since_ns), opt_ns(o->until_ns), which, 0};
    rc = rs_pprof_export(r, &po, data, len, &st);
    rs_store_read_end(r);
    rs_store_close(store);
    if (rc == RS_E_NOT_FOUND) {
        fprintf(stderr, "rankscope: job %s not found in %s%s\n", job, o->data_dir,
                o->rank >= 0 ? ", or the rank has no records in the window" : "");
        return 3;
    }
    if (rc == -ENODATA) {
        fprintf(stderr,
                "rankscope: job %s has no PC-sampling stall samples in the window (turn PC "
                "sampling on for the job, or use --format pprof-time)\n",
                job);
        return 3;
    }
    if (rc != 0) {
        fprintf(stderr, "rankscope: export of job %s failed: %s\n", job, rs_strerror(rc));
        return 1;
    }
    fprintf(stderr, "%s profile: %u rank%s, %" PRIu64 " %s, %zu stacks\n",
            rs_pprof_profile_name(st.profile), st.ranks, st.ranks == 1 ? "" : "s", st.events,
            st.profile == RS_PPROF_STALLS ? "stall samples" : "kernel launches", st.stacks);
    return 0;
}

/* The pprof profile from the server: 0 with *data set, or an exit code. */
static int
pprof_from_server(const struct rs_cli_options *o, const char *job, enum rs_pprof_profile which,
                  uint8_t **data, size_t *len)
{
    char path[512], *body;
    int rc;

    snprintf(path, sizeof path, "/v1/jobs/%s/pprof%s%s", job, which == RS_PPROF_AUTO ? "" : "/",
             which == RS_PPROF_AUTO ? "" : rs_pprof_profile_name(which));
    scope_query(o, o->rank, path, sizeof path);
    if ((rc = download(o, path, &body, len)) != 0)
        return rc;
    *data = (uint8_t *)body;
    return 0;
}

static int
export_pprof(const struct rs_cli_options *o, const char *job)
{
    enum rs_pprof_profile which = RS_PPROF_AUTO;
    char file[4096];
    uint8_t *data = NULL;
    size_t len = 0;
    struct stat sb;
    int rc;

    if (strcmp(o->format, "pprof-stalls") == 0)
        which = RS_PPROF_STALLS;
    else if (strcmp(o->format, "pprof-time") == 0)
        which = RS_PPROF_TIME;
    bool defaulted = !o->out || !*o->out;
    if (defaulted) {
        snprintf(file, sizeof file, "%s.pb.gz", job);
        if (access(file, F_OK) == 0) { /* never replaced unless named */
            fprintf(stderr,
                    "rankscope: %s already exists in the current directory; give --out FILE to "
                    "write it elsewhere or to replace it\n",
                    file);
            return 2;
        }
    } else if (stat(o->out, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(file, sizeof file, "%s/%s.pb.gz", o->out, job);
    else
        snprintf(file, sizeof file, "%s", o->out);
    rc = o->data_dir && *o->data_dir ? pprof_from_store(o, job, which, &data, &len)
                                     : pprof_from_server(o, job, which, &data, &len);
    if (rc != 0)
        return rc;
    if ((rc = rs_fs_write_atomic(file, data, len)) != 0) {
        fprintf(stderr, "rankscope: %s: %s\n", file, rs_strerror(rc));
        free(data);
        return 1;
    }
    free(data);
    char where[4096] = "";
    if (defaulted && getcwd(where, sizeof where))
        printf("exported job %s to %s in the current directory, %s (%zu bytes, pprof; --out FILE "
               "chooses the file)\n",
               job, file, where, len);
    else
        printf("exported job %s to %s (%zu bytes, pprof)\n", job, file, len);
    printf("(view it with: go tool pprof -http=: %s)\n", file);
    return 0;
}

int
rs_cli_export(const struct rs_cli_options *o, int argc, char **argv)
{
    if (argc != 1 || !rs_wire_job_valid(argv[0])) {
        fprintf(stderr, "usage: %s\n", usage);
        return 2;
    }
    if (o->format && strcmp(o->format, "perfetto") == 0)
        return export_perfetto(o, argv[0]);
    if (o->format && (strcmp(o->format, "pprof") == 0 || strcmp(o->format, "pprof-stalls") == 0 ||
                      strcmp(o->format, "pprof-time") == 0))
        return export_pprof(o, argv[0]);
    fprintf(stderr,
            "rankscope: unknown --format '%s' (perfetto, pprof, pprof-stalls, pprof-time)\n"
            "usage: %s\n",
            o->format && *o->format ? o->format : "", usage);
    return 2;
}
