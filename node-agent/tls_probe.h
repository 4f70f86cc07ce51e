/* Why an agent cannot reach a tls+tcp:// server. NNG redials a failed TLS connection without
 * saying why, and its error codes do not tell the agent refusing the server's certificate from
 * the server refusing the agent's. This makes diagnostic connections of its own (NNG's stream
 * API: dial, send the SP header, read the reply): first with the agent's configuration, then, if
 * the handshake failed, with one that takes any server certificate but presents the same client
 * certificate. Success the second time means the server's certificate is the problem; failure,
 * the agent's (missing, or not signed by the server's --agent-tls-ca). It logs the verdict as
 * RS-AGENT-TLS; nothing it receives is used. Asynchronous, on NNG's threads. */
#ifndef RS_NODE_AGENT_TLS_PROBE_H
#define RS_NODE_AGENT_TLS_PROBE_H

#include <stdbool.h>

struct nng_tls_config;
typedef struct rs_tls_probe rs_tls_probe;

/* Starts probing `url` with `conf` (the agent's) and `no_check` (the same client certificate, any
 * server certificate); both held until the probe is freed. `server_name` is the name checked,
 * for the message. Returns 0 or a negative code. */
int rs_tls_probe_start(const char *url, struct nng_tls_config *conf,
                       struct nng_tls_config *no_check, const char *server_name,
                       rs_tls_probe **out);

/* Whether the probe has finished (and logged). Any thread. */
bool rs_tls_probe_done(rs_tls_probe *p);

/* Stops the probe if it still runs and frees it. NULL does nothing. */
void rs_tls_probe_free(rs_tls_probe *p);

#endif
