/* Captures kept across restarts (issue 25): the capture table (captures.h) is in memory, where
 * ingest, replies and REST change it many times a second; every PERIOD_MS this takes what changed
 * and writes it through one writer task (storage/store.h rs_store_capture_put / _delete), and at
 * start reads the stored captures back, the open ones becoming expired with a reason. A capture
 * asked for is thus stored within about half a second plus a commit; kill -9 loses at most the
 * changes of that moment (a capture asked for then is gone, as if never asked). Loop thread. Not
 * a public API: server/ only. */
#ifndef RS_SERVER_CAPTURE_STORE_H
#define RS_SERVER_CAPTURE_STORE_H

#include <stdint.h>

struct rs_server;
typedef struct rs_capture_store rs_capture_store;

/* Reads every stored capture into srv->captures (rs_captures_restore). Returns 0 or a storage
 * error (a corrupt entry: RS_E_CORRUPT; those read before it are kept); logs RS-CAPTURE-LOAD
 * with how many, or the error. */
int rs__capture_store_load(struct rs_server *srv);

/* Starts writing the table's changes every period_ms. Returns 0 or -ENOMEM. */
int rs__capture_store_start(struct rs_server *srv, unsigned period_ms, rs_capture_store **out);

/* Queues the changes of now (the writer stores them before it stops) and stops the timer; freed
 * once closed. NULL is fine. */
void rs__capture_store_close(rs_capture_store *s);

#endif
