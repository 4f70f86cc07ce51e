/* Periodic store maintenance on the server's loop: frees LMDB reader slots of dead processes
 * (mdb_reader_check), applies retention — jobs with no new data for `retention_s` are deleted —
 * and rolls old kernel records up into windows (storage/store.h "Rollups"), in chunks, by one
 * writer task, so ingest never waits long. Runs once at start, then every `period_s`. */
#ifndef RS_SERVER_MAINTENANCE_H
#define RS_SERVER_MAINTENANCE_H

#include <stdint.h>

struct rs_server;
typedef struct rs_maintenance rs_maintenance;

struct rs_maintenance_options {
    uint64_t retention_s;     /* delete jobs with no data for this long; 0 = keep */
    uint64_t raw_retention_s; /* keep each rank's newest records raw this long; 0 = no rollups */
    uint64_t rollup_window_s; /* window of the rollups, > 0 */
    unsigned period_s;
};

int rs_maintenance_start(struct rs_server *srv, const struct rs_maintenance_options *o,
                         rs_maintenance **out);

/* New retention settings (a SIGHUP's reload): o's retention_s, raw_retention_s and
 * rollup_window_s apply from the next sweep on (a sweep in flight ends with the old ones);
 * period_s is ignored. Returns 0 or -EINVAL (raw_retention_s without rollup_window_s). Loop
 * thread. */
int rs_maintenance_set_options(rs_maintenance *m, const struct rs_maintenance_options *o);

/* Stops the timer (on the loop thread); freed when the loop has closed it and the sweep in
 * flight, if any, has finished. NULL is fine. */
void rs_maintenance_close(rs_maintenance *m);

#endif
