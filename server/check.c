/* Offline store commands of rankscope-server (see server.h): `--check` runs the consistency
 * check and prints what it found; `--compact-to DIR` writes a compacted copy. */
#include "common/error.h"
#include "server/server.h"
#include "server/server_int.h"
#include "storage/store.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

/* Opens the existing store in cfg->data (never creates one); NULL with a message otherwise. */
static rs_store *
open_existing(const struct rs_server_config *cfg, const char *what)
{
    struct rs_store_options opts = rs__server_store_options(cfg);
    opts.keep_format = true; /* an older server may be serving it: never convert it from here */
    opts.exclusive = false;  /* a reader: safe beside the server that writes it */
    char path[PATH_MAX];
    struct stat st;
    rs_store *store;
    int rc;

    snprintf(path, sizeof path, "%s/data.mdb", cfg->data);
    if (stat(path, &st) != 0) {
        printf("%s: no store in %s (no data.mdb)\n", what, cfg->data);
        return NULL;
    }
    if ((rc = rs_store_open(cfg->data, &opts, &store)) != 0) {
        if (rc == RS_E_VERSION)
            printf("%s: the store in %s is of an older format; start this version's "
                   "rankscope-server on it once (it converts the store as it starts), then "
                   "run this again\n",
                   what, cfg->data);
        else
            printf("%s: cannot open the store in %s: %s\n", what, cfg->data, rs_strerror(rc));
        return NULL;
    }
    return store;
}

int
rs_server_check(const struct rs_server_config *cfg)
{
    struct rs_store_check_report rep;
    rs_store *store = open_existing(cfg, "check");
    int rc;

    if (!store)
        return 1;
    uint64_t used = 0;
    rc = rs_store_check(store, &rep);
    rs_store_used_bytes(store, &used);
    rs_store_close(store);
    printf("check: %llu bytes in use\n", (unsigned long long)used);
    printf("check: %s: %llu jobs, %llu ranks, %llu series chunks, %llu kernel window parts, %llu "
           "steps, %llu step summaries, %llu collective records, %llu names, %llu batches\n",
           cfg->data, (unsigned long long)rep.jobs, (unsigned long long)rep.ranks,
           (unsigned long long)rep.series_chunks, (unsigned long long)rep.kernel_windows,
           (unsigned long long)rep.steps, (unsigned long long)rep.step_summaries,
           (unsigned long long)rep.collectives, (unsigned long long)rep.strings,
           (unsigned long long)rep.batches);
    printf("check: bytes per database:");
    for (size_t i = 0; i < RS_STORE_DBS && rep.dbs[i].name; i++) {
        printf("%s %s %llu", i ? "," : "", rep.dbs[i].name, (unsigned long long)rep.dbs[i].bytes);
        if (rep.dbs[i].leaf_bytes)
            printf(" (%.0f%% full)",
                   100.0 * (double)rep.dbs[i].entry_bytes / (double)rep.dbs[i].leaf_bytes);
    }
    printf("\n");
    if (rep.gpu_readings)
        printf("check: GPU telemetry: %llu readings in %llu bytes of series entries (%.1f bytes a "
               "reading)\n",
               (unsigned long long)rep.gpu_readings, (unsigned long long)rep.gpu_entry_bytes,
               (double)rep.gpu_entry_bytes / (double)rep.gpu_readings);
    if (rep.gpu_windows)
        printf("check: GPU telemetry rollups: %llu windows of %llu readings in %llu bytes of "
               "series entries\n",
               (unsigned long long)rep.gpu_windows, (unsigned long long)rep.gpu_window_readings,
               (unsigned long long)rep.gpu_window_entry_bytes);
    if (rep.captures)
        printf("check: captures on demand: %llu kept\n", (unsigned long long)rep.captures);
    if (rep.gpu_ranks || rep.verdicts)
        printf("check: GPU map: %llu GPUs; verdict history: %llu verdicts\n",
               (unsigned long long)rep.gpu_ranks, (unsigned long long)rep.verdicts);
    if (rep.hangs)
        printf("check: hang history: %llu hangs\n", (unsigned long long)rep.hangs);
    if (rc == 0) {
        printf("check: consistent\n");
        return 0;
    }
    if (rc == RS_E_CORRUPT)
        printf("check: %llu problems; first: %s\n", (unsigned long long)rep.problems,
               rep.first_problem);
    else
        printf("check: could not finish: %s\n", rs_strerror(rc));
    return 1;
}

int
rs_server_compact(const struct rs_server_config *cfg)
{
    char path[PATH_MAX];
    struct stat before, after;
    rs_store *store = open_existing(cfg, "compact");
    int rc;

    if (!store)
        return 1;
    rc = rs_store_compact(store, cfg->compact_to);
    rs_store_close(store);
    if (rc != 0) {
        printf("compact: cannot write %s: %s\n", cfg->compact_to,
               rc == -EEXIST ? "it already holds a store" : rs_strerror(rc));
        return 1;
    }
    snprintf(path, sizeof path, "%s/data.mdb", cfg->data);
    stat(path, &before);
    snprintf(path, sizeof path, "%s/data.mdb", cfg->compact_to);
    stat(path, &after);
    printf("compact: %s (%lld bytes on disk) -> %s (%lld bytes); start the server on the copy to "
           "use it\n",
           cfg->data, (long long)before.st_blocks * 512, cfg->compact_to,
           (long long)after.st_blocks * 512);
    return 0;
}
