/* Retention by space (the storage issue: "MDB_MAP_FULL handled by retention, never by crashing";
 * "retention by a disk budget per store"). Every `check_ms` the server looks at the store's data
 * (pages in use, rs_store_space_get) and at whether a commit found the map full since the last
 * look; when the data exceeds `budget_bytes` (0: no budget, then 90% of the map — a full LMDB map
 * can refuse even the deletion that would free it) or the map was full, the job that
 * received data least recently is deleted — in chunks, by a writer task, so ingest keeps flowing
 * — and logged (RS-RETENTION-SPACE) and counted (jobs_deleted_for_space). Meanwhile agents are
 * told to retry and keep their batches: nothing acknowledged is lost, only the oldest job. The job
 * that is alone in the store is never deleted this way (the log says to raise --map-size-gb). */
#ifndef RS_SERVER_SPACE_H
#define RS_SERVER_SPACE_H

#include <stdint.h>

struct rs_server;
typedef struct rs_space rs_space;

int rs_space_start(struct rs_server *srv, uint64_t budget_bytes, unsigned check_ms, rs_space **out);

/* A new budget (a SIGHUP's reload; 0 = 90% of the map), from the next check on. Loop thread. */
void rs_space_set_budget(rs_space *s, uint64_t budget_bytes);

/* Stops the timer (loop thread); freed once the loop has closed it and a deletion in flight has
 * finished. NULL is fine. */
void rs_space_close(rs_space *s);

#endif
