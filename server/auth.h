/* Who may do what on rankscope-server (docs/security.md): the token file (auth_file.h) loaded at
 * start and on SIGHUP, the role each REST request and agent batch needs, the refusal of a server
 * exposed beyond loopback without tokens (unless --insecure), and the audit log. Not a public
 * API: server/ only. Everything runs on the loop thread except rs__server_auth_new (before it). */
#ifndef RS_SERVER_AUTH_H
#define RS_SERVER_AUTH_H

#include "server/auth_file.h"
#include "server/http.h"
#include "server/server.h"

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

typedef struct rs_server_auth rs_server_auth;

/* Who sent a request: the principal's name ("-" when the server has no token file) and role, and
 * the peer's address, for refusals and audit lines. */
struct rs_auth_who {
    char name[RS_AUTH_NAME_MAX + 1];
    enum rs_auth_role role;
    char peer[80];
};

/* Before anything listens: loads cfg->token_file when set, and refuses (RS_E_CONFIG, logged with
 * what to do) a REST or agent listener beyond loopback without a token file unless
 * cfg->insecure. Returns 0 with *out, RS_E_CONFIG or -ENOMEM. */
int rs__server_auth_new(const struct rs_server_config *cfg, rs_server_auth **out);

/* SIGHUP (server.c's handler, with the TLS files): the token file is read again; a bad new
 * file keeps the old table and logs why (RS-AUTH-RELOAD). */
void rs__server_auth_reload(rs_server_auth *a);

/* "tokens" (a token file is in force), "insecure" (beyond loopback without one, --insecure) or
 * "off" (loopback only, no token file: make demo). */
const char *rs__server_auth_mode(const rs_server_auth *a);

/* REST: answers 401 (no token, not Bearer, unknown token; with WWW-Authenticate: Bearer) or 403
 * (the principal's role does not allow the request) and returns true; or fills *who and returns
 * false. GET /healthz is open; GET and HEAD need read, POST /v1/import ingest, everything else
 * (DELETE) admin. Without a token file everything passes as "-". */
bool rs__server_auth_refused(rs_server_auth *a, struct rs_counters *counters, rs_http_conn *c,
                             const struct rs_http_request *req, struct rs_auth_who *who);

/* Agent batches (struct rs_ingest_options.authorize, with the rs_server_auth as arg): a token
 * with the ingest (or admin) role. */
int rs__server_auth_agent(void *arg, const char *token, const char *peer, char *principal,
                          size_t len, char *why, size_t why_len);

/* The server itself as the actor of audit lines (retention): who=server role=none from=local. */
extern const struct rs_auth_who rs__server_self;

/* One RS-AUDIT log line: "who=NAME role=ROLE from=PEER action=ACTION " + the formatted rest
 * (job=..., how much, result=...). Names are valid job names; the log escapes the rest. */
void rs__server_audit(const struct rs_auth_who *who, const char *action, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Frees the token table; NULL is fine. */
void rs__server_auth_free(rs_server_auth *a);

#endif
