/* Periodic store maintenance on the server's loop: frees LMDB reader slots of dead processes
 * (mdb_reader_check) and applies retention — jobs with no new data for `retention_s` are deleted,
 * in chunks, by a writer task, so ingest never waits long. Runs once at start, then every
 * `period_s`. */
#ifndef RS_SERVER_MAINTENANCE_H
#define RS_SERVER_MAINTENANCE_H

#include <stdint.h>

struct rs_server;
typedef struct rs_maintenance rs_maintenance;

int rs_maintenance_start(struct rs_server *srv, uint64_t retention_s, unsigned period_s,
                         rs_maintenance **out);

/* Stops the timer (on the loop thread); freed when the loop has closed it and the sweep in
 * flight, if any, has finished. NULL is fine. */
void rs_maintenance_close(rs_maintenance *m);

#endif
