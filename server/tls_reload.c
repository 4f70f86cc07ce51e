/* The server's TLS files, loaded at start and on SIGHUP (see tls_reload.h): the HTTPS
 * configuration is ours (tls_stream.c), the agents' one NNG's (proto/nng_tls.c); both loaders
 * refuse a key that does not belong to its certificate before anything changes. */
#include "server/tls_reload.h"

#include "common/error.h"
#include "common/log.h"
#include "proto/nng_tls.h"

#include <errno.h>
#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rs_server_tls {
    const struct rs_server_config *cfg;
    struct rs_counters *counters;
    const char *agent_cert, *agent_key; /* the agent pair in force (may be the HTTPS one) */
    bool agents_tls;                    /* cfg->listen is tls+tcp:// */
    rs_tls_conf *http_conf;
    nng_tls_config *agent_conf;
    rs_http *http;
    rs_ingest *ingest;
};

static bool
set(const char *s)
{
    return s && s[0];
}

/* NNG's server configuration for the agents' listener; its fingerprint in fp. */
static int
agent_conf_new(const rs_server_tls *t, nng_tls_config **out, char *fp, char *err, size_t err_len)
{
    struct rs_nng_tls_files files = {t->agent_cert, t->agent_key, t->cfg->agent_tls_ca, NULL,
                                     false};

    return rs_nng_tls_config_new(true, &files, out, fp, err, err_len);
}

int
rs_server_tls_new(const struct rs_server_config *cfg, struct rs_counters *counters,
                  rs_server_tls **out)
{
    rs_server_tls *t = calloc(1, sizeof *t);
    char err[512], fp[65];
    int rc = RS_E_CONFIG;

    if (!t)
        return -ENOMEM;
    t->cfg = cfg;
    t->counters = counters;
    t->agents_tls = strncmp(cfg->listen, "tls+tcp", 7) == 0;
    t->agent_cert = set(cfg->agent_tls_cert) ? cfg->agent_tls_cert : cfg->tls_cert;
    t->agent_key = set(cfg->agent_tls_key) ? cfg->agent_tls_key : cfg->tls_key;
    if (set(cfg->tls_cert) != set(cfg->tls_key) ||
        set(cfg->agent_tls_cert) != set(cfg->agent_tls_key)) {
        rs_log(RS_LOG_ERROR, "RS-TLS-CONFIG",
               "a certificate needs its key: give --tls-cert with --tls-key, --agent-tls-cert with "
               "--agent-tls-key");
        goto fail;
    }
    if (!t->agents_tls && (set(cfg->agent_tls_cert) || set(cfg->agent_tls_ca))) {
        rs_log(RS_LOG_ERROR, "RS-TLS-CONFIG",
               "--agent-tls-* apply to a tls+tcp:// --listen, and --listen is %s", cfg->listen);
        goto fail;
    }
    if (t->agents_tls && !set(t->agent_cert)) {
        rs_log(RS_LOG_ERROR, "RS-TLS-CONFIG",
               "--listen %s needs a certificate: --agent-tls-cert and --agent-tls-key (or "
               "--tls-cert and --tls-key)",
               cfg->listen);
        goto fail;
    }
    if (set(cfg->tls_cert)) {
        if ((rc = rs_tls_conf_server_new(cfg->tls_cert, cfg->tls_key, &t->http_conf, err,
                                         sizeof err)) != 0) {
            rs_log(RS_LOG_ERROR, "RS-TLS-CONFIG", "HTTPS: %s", err);
            goto fail;
        }
        rs_tls_conf_fingerprint(t->http_conf, fp);
        rs_log(RS_LOG_INFO, "RS-TLS-LOADED", "HTTPS certificate %s, SHA-256 %s", cfg->tls_cert,
               fp);
    }
    if (t->agents_tls) {
        if ((rc = agent_conf_new(t, &t->agent_conf, fp, err, sizeof err)) != 0) {
            rs_log(RS_LOG_ERROR, "RS-TLS-CONFIG", "agents (tls+tcp://): %s", err);
            goto fail;
        }
        rs_log(RS_LOG_INFO, "RS-TLS-LOADED", "agents' certificate %s, SHA-256 %s%s%s",
               t->agent_cert, fp, set(cfg->agent_tls_ca) ? "; client certificates signed by " : "",
               set(cfg->agent_tls_ca) ? cfg->agent_tls_ca : "");
    }
    *out = t;
    return 0;
fail:
    rs_server_tls_free(t);
    return rc == -ENOMEM ? rc : RS_E_CONFIG;
}

rs_tls_conf *
rs_server_tls_http(const rs_server_tls *t)
{
    return t->http_conf;
}

struct nng_tls_config *
rs_server_tls_agents(const rs_server_tls *t)
{
    return t->agent_conf;
}

void
rs_server_tls_attach(rs_server_tls *t, rs_http *http, rs_ingest *ingest)
{
    t->http = http;
    t->ingest = ingest;
}

static int
reload_http(rs_server_tls *t)
{
    rs_tls_conf *conf;
    char err[512], fp[65];
    int rc;

    if ((rc = rs_tls_conf_server_new(t->cfg->tls_cert, t->cfg->tls_key, &conf, err,
                                     sizeof err)) != 0) {
        RS_COUNT(t->counters, tls_reload_failures);
        rs_log(RS_LOG_ERROR, "RS-TLS-RELOAD", "HTTPS keeps its previous certificate: %s", err);
        return rc;
    }
    if (t->http)
        rs_http_set_tls(t->http, conf);
    rs_tls_conf_release(t->http_conf);
    t->http_conf = conf;
    rs_tls_conf_fingerprint(conf, fp);
    RS_COUNT(t->counters, tls_reloads);
    rs_log(RS_LOG_INFO, "RS-TLS-RELOAD", "HTTPS certificate %s reloaded, SHA-256 %s",
           t->cfg->tls_cert, fp);
    return 0;
}

static int
reload_agents(rs_server_tls *t)
{
    nng_tls_config *conf = NULL;
    char err[512], fp[65];
    int rc;

    if ((rc = agent_conf_new(t, &conf, fp, err, sizeof err)) == 0 && t->ingest &&
        (rc = rs_ingest_set_tls(t->ingest, conf)) != 0)
        snprintf(err, sizeof err, "the listener refused it: %s", rs_strerror(rc));
    if (rc != 0) {
        if (conf)
            nng_tls_config_free(conf);
        RS_COUNT(t->counters, tls_reload_failures);
        rs_log(RS_LOG_ERROR, "RS-TLS-RELOAD", "agents keep the previous certificate: %s", err);
        return rc;
    }
    nng_tls_config_free(t->agent_conf);
    t->agent_conf = conf;
    RS_COUNT(t->counters, tls_reloads);
    rs_log(RS_LOG_INFO, "RS-TLS-RELOAD", "agents' certificate %s reloaded, SHA-256 %s",
           t->agent_cert, fp);
    return 0;
}

int
rs_server_tls_reload(rs_server_tls *t)
{
    int rc = 0, rc2 = 0;

    if (!t)
        return 0;
    if (t->http_conf)
        rc = reload_http(t);
    if (t->agent_conf)
        rc2 = reload_agents(t);
    return rc ? rc : rc2;
}

void
rs_server_tls_free(rs_server_tls *t)
{
    if (!t)
        return;
    rs_tls_conf_release(t->http_conf);
    if (t->agent_conf)
        nng_tls_config_free(t->agent_conf);
    free(t);
}
