/* The server's TLS files: the HTTPS configuration of the REST API (tls_stream.h) and the NNG one
 * of a tls+tcp:// agent listener, loaded at start and reloaded without a restart (SIGHUP). A
 * reload that fails (a file that does not parse, a key that is not its certificate's) keeps the
 * files in use and says why. Connections already open keep their certificate; new ones get the
 * new one. Loop thread only. */
#ifndef RS_SERVER_TLS_RELOAD_H
#define RS_SERVER_TLS_RELOAD_H

#include "server/counters.h"
#include "server/http.h"
#include "server/ingest.h"
#include "server/server.h"

typedef struct rs_server_tls rs_server_tls;

/* Loads what `cfg` asks for (tls_cert/tls_key for HTTPS; for a tls+tcp:// cfg->listen the agent
 * pair, defaulting to the HTTPS one, and agent_tls_ca). Refuses, logging why (RS-TLS-CONFIG): half
 * a pair, files that do not load, a tls+tcp:// listen without a certificate, agent settings with
 * a tcp:// listen. `cfg` and `counters` must outlive the object. Returns 0 or RS_E_CONFIG (or
 * -ENOMEM); on success *out is set (an object with nothing loaded when TLS is not asked for). */
int rs_server_tls_new(const struct rs_server_config *cfg, struct rs_counters *counters,
                      rs_server_tls **out);

/* What rs_http_set_tls and rs_ingest_options.tls take: the configurations loaded now, or NULL
 * where that side serves without TLS. Valid until the next reload. */
rs_tls_conf *rs_server_tls_http(const rs_server_tls *t);
struct nng_tls_config *rs_server_tls_agents(const rs_server_tls *t);

/* Where reloads go: the running HTTP server and ingest listener (either may be NULL). */
void rs_server_tls_attach(rs_server_tls *t, rs_http *http, rs_ingest *ingest);

/* Re-reads every file and hands the new configurations to the attached listeners; each side that
 * fails keeps its old configuration (RS-TLS-RELOAD error, tls_reload_failures). Logs the new
 * certificates' SHA-256 fingerprints. Returns 0 when every side reloaded (or nothing is
 * configured), else the first error. For the server's SIGHUP handler. */
int rs_server_tls_reload(rs_server_tls *t);

/* Frees; call after the listeners are closed. NULL does nothing. */
void rs_server_tls_free(rs_server_tls *t);

#endif
