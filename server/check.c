/* `rankscope-server --check`: opens an existing store, runs the storage consistency check and
 * prints what it found (see server.h). */
#include "common/error.h"
#include "server/server.h"
#include "storage/store.h"

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

int
rs_server_check(const struct rs_server_config *cfg)
{
    struct rs_store_options opts = {(uint64_t)cfg->map_size_gb << 30, false, 0};
    struct rs_store_check_report rep;
    char path[PATH_MAX];
    struct stat st;
    rs_store *store;
    int rc;

    snprintf(path, sizeof path, "%s/data.mdb", cfg->data);
    if (stat(path, &st) != 0) {
        printf("check: no store in %s (no data.mdb)\n", cfg->data);
        return 1;
    }
    if ((rc = rs_store_open(cfg->data, &opts, &store)) != 0) {
        printf("check: cannot open the store in %s: %s\n", cfg->data, rs_strerror(rc));
        return 1;
    }
    uint64_t used = 0;
    rc = rs_store_check(store, &rep);
    rs_store_used_bytes(store, &used);
    rs_store_close(store);
    printf("check: %llu bytes in use\n", (unsigned long long)used);
    printf("check: %s: %llu jobs, %llu ranks, %llu series chunks, %llu steps, %llu collective "
           "records, %llu names, %llu batches\n",
           cfg->data, (unsigned long long)rep.jobs, (unsigned long long)rep.ranks,
           (unsigned long long)rep.series_chunks, (unsigned long long)rep.steps,
           (unsigned long long)rep.collectives, (unsigned long long)rep.strings,
           (unsigned long long)rep.batches);
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
