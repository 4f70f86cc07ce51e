/* Benchmark tool: the trace importer alone (streaming JSON reader + Kineto conversion) on one
 * file, records counted and dropped. Prints one JSON line: bytes, seconds, MB/s, counts and the
 * process's peak RSS. usage: rs-import-bench FILE [RANK] */
#include "common/clock.h"
#include "import/trace_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

static int
count(void *arg, const struct rs_rank_batch *b)
{
    uint64_t *records = arg;

    *records += b->n_kernels + b->n_collectives + b->n_memcpys + b->n_steps;
    return 0;
}

int
main(int argc, char **argv)
{
    struct rs_kineto_stats st;
    struct rusage ru;
    struct stat sb;
    uint64_t records = 0;
    char err[1024];

    if (argc < 2 || argc > 3 || stat(argv[1], &sb) != 0) {
        fprintf(stderr, "usage: rs-import-bench FILE [RANK]\n");
        return 2;
    }
    struct rs_kineto_options o = {.job = "bench", .rank = argc == 3 ? atoll(argv[2]) : -1, .host = ""};
    uint64_t t0 = rs_clock_mono_ns();
    int rc = rs_trace_import_file(argv[1], &o, count, &records, NULL, NULL, &st, err, sizeof err);
    double s = (double)(rs_clock_mono_ns() - t0) / 1e9;
    if (rc != 0) {
        fprintf(stderr, "rs-import-bench: %s\n", err);
        return 1;
    }
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"bytes\": %lld, \"seconds\": %.3f, \"mb_per_s\": %.1f, \"events\": %llu, "
           "\"records\": %llu, \"max_rss_kb\": %ld}\n",
           (long long)sb.st_size, s, (double)sb.st_size / 1e6 / s, (unsigned long long)st.events,
           (unsigned long long)records, ru.ru_maxrss);
    return 0;
}
