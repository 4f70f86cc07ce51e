/* `rankscope export JOB --format perfetto --out DIR`: a window of a job as Chrome/Perfetto trace
 * files, one per rank (query/trace_export.h), read from a store directory (--data: a server's data
 * directory, which may be in use, or one kept by `analyze --data`). */
#include "query/cli/commands.h"

#include "common/error.h"
#include "common/fs.h"
#include "query/trace_export.h"

#include <stdio.h>
#include <string.h>

int
rs_cli_export(const struct rs_cli_options *o, int argc, char **argv)
{
    static const char usage[] = "rankscope export JOB --format perfetto --data DIR --out DIR "
                                "[--since-ns T --until-ns T]";
    struct rs_trace_export_stats st;
    rs_store *store = NULL;
    rs_store_read *r = NULL;
    char err[1024];
    int rc;

    if (argc != 1 || !rs_wire_job_valid(argv[0])) {
        fprintf(stderr, "usage: %s\n", usage);
        return 2;
    }
    if (!o->format || strcmp(o->format, "perfetto") != 0) {
        fprintf(stderr,
                "rankscope: --format %s is not supported; this build exports 'perfetto' "
                "(Chrome trace JSON)\n",
                o->format && *o->format ? o->format : "(none)");
        return 2;
    }
    if (!o->data_dir || !*o->data_dir || !o->out || !*o->out) {
        fprintf(stderr,
                "rankscope: export reads a store directory and writes files: give --data "
                "DIR and --out DIR\nusage: %s\n",
                usage);
        return 2;
    }
    if ((rc = rs_fs_mkdir_p(o->out)) != 0) {
        fprintf(stderr, "rankscope: %s: %s\n", o->out, rs_strerror(rc));
        return 1;
    }
    if ((rc = rs_store_open(o->data_dir, NULL, &store)) != 0 ||
        (rc = rs_store_read_begin(store, &r)) != 0) {
        fprintf(stderr, "rankscope: cannot read the store in %s: %s\n", o->data_dir,
                rs_strerror(rc));
        rs_store_close(store);
        return 1;
    }
    struct rs_trace_export_options eo = {argv[0], o->since_ns > 0 ? (uint64_t)o->since_ns : 0,
                                         o->until_ns > 0 ? (uint64_t)o->until_ns : 0, o->out};
    rc = rs_trace_export(r, &eo, &st, err, sizeof err);
    rs_store_read_end(r);
    rs_store_close(store);
    if (rc != 0) {
        fprintf(stderr, "rankscope: %s\n", err);
        return rc == RS_E_NOT_FOUND ? 3 : 1;
    }
    printf("exported job %s to %s/%s_rank*.json: %u ranks, %llu kernels, %llu NCCL kernels, %llu "
           "steps\n(open a file in https://ui.perfetto.dev, or the directory with HTA)\n",
           argv[0], o->out, argv[0], st.ranks, (unsigned long long)st.kernels,
           (unsigned long long)st.collectives, (unsigned long long)st.steps);
    return 0;
}
