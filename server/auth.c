/* Authentication and roles of rankscope-server (see auth.h, docs/security.md). */
#include "server/auth.h"

#include "common/auth_token.h"
#include "common/error.h"
#include "common/log.h"
#include "server/server_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct rs_server_auth {
    char *path;           /* the token file, NULL when none */
    rs_auth_table *table; /* NULL when no token file: auth is off */
    bool insecure;        /* exposed beyond loopback without tokens (--insecure) */
};

#define HOW_TO_GET_ONE                                                                             \
    "an administrator makes one with rankscope-server --new-token NAME --role ROLE; the CLI "      \
    "reads it from --token-file or RANKSCOPE_CLI_TOKEN_FILE (docs/security.md)"

/* An NNG URL's listener is loopback-only: ipc:// and inproc:// are local; a tcp-like URL's host
 * is judged like --http's. */
static bool
url_loopback(const char *url)
{
    const char *sep = strstr(url, "://");

    if (strncmp(url, "ipc://", 6) == 0 || strncmp(url, "inproc://", 9) == 0)
        return true;
    return sep && rs__server_http_loopback(sep + 3);
}

int
rs__server_auth_new(const struct rs_server_config *cfg, rs_server_auth **out)
{
    bool exposed = !rs__server_http_loopback(cfg->http) || !url_loopback(cfg->listen);
    char err[512];
    rs_server_auth *a = calloc(1, sizeof *a);
    int rc;

    if (!a)
        return -ENOMEM;
    if (cfg->token_file && cfg->token_file[0]) {
        if ((rc = rs_auth_table_load(cfg->token_file, &a->table, err, sizeof err)) != 0) {
            rs_log(RS_LOG_ERROR, "RS-AUTH-FILE", "%s", err);
            free(a);
            return RS_E_CONFIG;
        }
        if (!(a->path = strdup(cfg->token_file))) {
            rs_auth_table_free(a->table);
            free(a);
            return -ENOMEM;
        }
        rs_log(RS_LOG_INFO, "RS-AUTH-FILE", "token file %s: %zu principals", a->path,
               rs_auth_table_count(a->table));
    } else if (exposed && !cfg->insecure) {
        rs_log(RS_LOG_ERROR, "RS-AUTH-REQUIRED",
               "--http %s or --listen %s is reachable beyond loopback, and no --token-file is "
               "given: anyone who reaches it could read, import and delete every job. Give a "
               "token file (rankscope-server --new-token NAME --role ROLE makes its lines), or "
               "start with --insecure on a network you trust",
               cfg->http, cfg->listen);
        free(a);
        return RS_E_CONFIG;
    } else if (exposed) {
        a->insecure = true;
        rs_log(RS_LOG_WARN, "RS-AUTH-INSECURE",
               "INSECURE: --http %s / --listen %s reach beyond loopback without a token file: "
               "anyone who reaches them may read, import and delete every job",
               cfg->http, cfg->listen);
    }
    *out = a;
    return 0;
}

void
rs__server_auth_reload(rs_server_auth *a)
{
    rs_auth_table *fresh = NULL;
    char err[512];

    if (!a->path) {
        rs_log(RS_LOG_INFO, "RS-AUTH-RELOAD", "SIGHUP: no --token-file, nothing to reload");
        return;
    }
    if (rs_auth_table_load(a->path, &fresh, err, sizeof err) != 0) {
        rs_log(RS_LOG_ERROR, "RS-AUTH-RELOAD",
               "SIGHUP: %s; keeping the %zu principals loaded before", err,
               rs_auth_table_count(a->table));
        return;
    }
    rs_log(RS_LOG_INFO, "RS-AUTH-RELOAD", "SIGHUP: token file %s: %zu principals (were %zu)",
           a->path, rs_auth_table_count(fresh), rs_auth_table_count(a->table));
    rs_auth_table_free(a->table);
    a->table = fresh;
}

const char *
rs__server_auth_mode(const rs_server_auth *a)
{
    return !a ? "off" : a->table ? "tokens" : a->insecure ? "insecure" : "off";
}

/* The role a request needs (auth.h). */
static enum rs_auth_role
needed_role(const struct rs_http_request *req)
{
    if (strcmp(req->path, "/healthz") == 0)
        return RS_AUTH_ROLE_NONE;
    if (strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0)
        return RS_AUTH_ROLE_READ;
    if (strcmp(req->method, "POST") == 0 && strcmp(req->path, "/v1/import") == 0)
        return RS_AUTH_ROLE_INGEST;
    return RS_AUTH_ROLE_ADMIN;
}

/* The token of "Bearer TOKEN" (scheme case-insensitive), or NULL. */
static const char *
bearer(const char *authorization)
{
    if (strncasecmp(authorization, "Bearer ", 7) != 0)
        return NULL;
    return authorization + 7 + strspn(authorization + 7, " ");
}

static void
unauthorized(struct rs_counters *counters, rs_http_conn *c, const struct rs_http_request *req,
             const char *peer, const char *challenge, const char *why)
{
    RS_COUNT(counters, http_unauthorized);
    rs_log_limited(10, RS_LOG_WARN, "RS-AUTH-DENIED", "401 %s %s from %s: %s", req->method,
                   req->path, peer, why);
    rs_http_set_header(c, challenge);
    rs_http_respond_error(c, 401, "%s: send \"Authorization: Bearer TOKEN\"; %s", why,
                          HOW_TO_GET_ONE);
}

bool
rs__server_auth_refused(rs_server_auth *a, struct rs_counters *counters, rs_http_conn *c,
                        const struct rs_http_request *req, struct rs_auth_who *who)
{
    enum rs_auth_role need = needed_role(req);
    const struct rs_auth_principal *p;
    const char *token;
    char msg[512];

    rs_http_conn_peer(c, who->peer, sizeof who->peer);
    snprintf(who->name, sizeof who->name, "-");
    who->role = RS_AUTH_ROLE_ADMIN;
    if (!a || !a->table || need == RS_AUTH_ROLE_NONE)
        return false;
    if (!req->authorization[0]) {
        unauthorized(counters, c, req, who->peer, "WWW-Authenticate: Bearer realm=\"rankscope\"",
                     "this server needs a token and the request carries none");
        return true;
    }
    if (!(token = bearer(req->authorization))) {
        unauthorized(counters, c, req, who->peer,
                     "WWW-Authenticate: Bearer realm=\"rankscope\", error=\"invalid_request\"",
                     "the Authorization header is not a Bearer token");
        return true;
    }
    if (!(p = rs_auth_table_find(a->table, token))) {
        unauthorized(counters, c, req, who->peer,
                     "WWW-Authenticate: Bearer realm=\"rankscope\", error=\"invalid_token\"",
                     "the token is not valid (unknown, revoked or mistyped)");
        return true;
    }
    snprintf(who->name, sizeof who->name, "%s", p->name);
    who->role = p->role;
    if (rs_auth_role_allows(p->role, need))
        return false;
    RS_COUNT(counters, http_unauthorized);
    rs_log_limited(10, RS_LOG_WARN, "RS-AUTH-DENIED", "403 %s %s from %s: %s has role %s",
                   req->method, req->path, who->peer, p->name, rs_auth_role_name(p->role));
    snprintf(msg, sizeof msg,
             "%s %s needs the %s role; '%s' has the %s role (ask an administrator for a token "
             "with the %s role)",
             req->method, req->path, rs_auth_role_name(need), p->name, rs_auth_role_name(p->role),
             rs_auth_role_name(need));
    rs_http_respond_json(c, 403,
                         json_pack("{s:{s:i, s:s, s:s, s:s}}", "error", "status", 403, "message",
                                   msg, "role_needed", rs_auth_role_name(need), "role",
                                   rs_auth_role_name(p->role)));
    return true;
}

int
rs__server_auth_agent(void *arg, const char *token, const char *peer, char *principal, size_t len,
                      char *why, size_t why_len)
{
    rs_server_auth *a = arg;
    const struct rs_auth_principal *p;

    if (!a || !a->table) {
        snprintf(principal, len, "%s", "");
        return 0;
    }
    if (!token[0])
        snprintf(why, why_len,
                 "unauthorized: this server needs an ingest token and the batch carries none "
                 "(give the agent --token-file)");
    else if (!(p = rs_auth_table_find(a->table, token)))
        snprintf(why, why_len,
                 "unauthorized: the agent's token is not valid (unknown, revoked or "
                 "mistyped)");
    else if (!rs_auth_role_allows(p->role, RS_AUTH_ROLE_INGEST))
        snprintf(why, why_len,
                 "unauthorized: agent batches need the ingest role; '%s' has the %s role", p->name,
                 rs_auth_role_name(p->role));
    else {
        snprintf(principal, len, "%s", p->name);
        return 0;
    }
    rs_log_limited(10, RS_LOG_WARN, "RS-AUTH-AGENT", "refused a batch from %s: %s", peer, why);
    return -1;
}

const struct rs_auth_who rs__server_self = {"server", RS_AUTH_ROLE_NONE, "local"};

void
rs__server_audit(const struct rs_auth_who *who, const char *action, const char *fmt, ...)
{
    char rest[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(rest, sizeof rest, fmt, ap);
    va_end(ap);
    rs_log(RS_LOG_INFO, "RS-AUDIT", "who=%s role=%s from=%s action=%s %s", who->name,
           rs_auth_role_name(who->role), who->peer, action, rest);
}

void
rs__server_auth_free(rs_server_auth *a)
{
    if (!a)
        return;
    rs_auth_table_free(a->table);
    free(a->path);
    free(a);
}

int
rs_server_new_token(const struct rs_server_config *cfg)
{
    enum rs_auth_role role;
    uint8_t hash[RS_AUTH_HASH_BYTES];
    char token[RS_AUTH_NEW_TOKEN_LEN + 1], hex[80];
    int rc;

    if (!rs_auth_name_valid(cfg->new_token)) {
        fprintf(stderr,
                "rankscope-server: --new-token: a name is 1 to %d of letters, digits, ._@-\n",
                RS_AUTH_NAME_MAX);
        return 2;
    }
    if (rs_auth_role_parse(cfg->role, &role) != 0) {
        fprintf(stderr, "rankscope-server: --role must be read, ingest or admin\n");
        return 2;
    }
    if ((rc = rs_auth_token_new(token, sizeof token)) != 0 ||
        (rc = rs_auth_token_hash(token, hash)) != 0) {
        fprintf(stderr, "rankscope-server: cannot make a token: %s\n", rs_strerror(rc));
        return 1;
    }
    rs_auth_hash_format(hash, hex, sizeof hex);
    printf("# the token of %s (shown only now: keep it in a file of mode 0600 for --token-file)\n"
           "%s\n"
           "# the line for the server's --token-file (then send the server SIGHUP)\n"
           "%s %s %s\n",
           cfg->new_token, token, cfg->new_token, rs_auth_role_name(role), hex);
    memset(token, 0, sizeof token);
    return fflush(stdout) == 0 ? 0 : 1;
}
