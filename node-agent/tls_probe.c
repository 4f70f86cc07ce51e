/* Diagnostic TLS connections to the server, to say why the agent's own do not come up (see
 * tls_probe.h). Each attempt: dial (TCP connect), send the 8-byte SP header (its first write runs
 * the TLS handshake), receive the server's header. */
#include "node-agent/tls_probe.h"

#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_TIMEOUT_MS 5000

enum step { STEP_DIAL, STEP_SEND, STEP_RECV };

struct rs_tls_probe {
    nng_stream_dialer *dialer;
    nng_stream *stream;
    nng_aio *aio;
    nng_tls_config *conf[2]; /* the agent's; the same without checking the server */
    int attempt;             /* index into conf */
    enum step step;
    atomic_bool done;
    uint8_t header[8];
    char url[256], name[256];
};

static void
finish(rs_tls_probe *p, int level, const char *nng_error, const char *why)
{
    rs_log(level, "RS-AGENT-TLS", "%s (server name checked: %s): %s%s%s", p->url, p->name, why,
           nng_error ? ": " : "", nng_error ? nng_error : "");
    atomic_store(&p->done, true);
}

/* Starts attempt `attempt`; returns an NNG code. */
static int
attempt(rs_tls_probe *p, int n)
{
    int rv;

    if (p->stream) {
        nng_stream_free(p->stream);
        p->stream = NULL;
    }
    if (p->dialer) {
        nng_stream_dialer_free(p->dialer);
        p->dialer = NULL;
    }
    p->attempt = n;
    p->step = STEP_DIAL;
    if ((rv = nng_stream_dialer_alloc(&p->dialer, p->url)) != 0 ||
        (rv = nng_stream_dialer_set_ptr(p->dialer, NNG_OPT_TLS_CONFIG, p->conf[n])) != 0)
        return rv;
    nng_aio_set_timeout(p->aio, PROBE_TIMEOUT_MS);
    nng_stream_dialer_dial(p->dialer, p->aio);
    return 0;
}

static void
failed(rs_tls_probe *p, int rv)
{
    if (p->step == STEP_DIAL) {
        finish(p, RS_LOG_WARN, nng_strerror(rv),
               rv == NNG_ECONNREFUSED
                   ? "cannot connect: is the server up, and is this its --listen port?"
                   : "cannot connect");
        return;
    }
    if (p->attempt == 0) { /* the handshake failed: whose certificate? */
        int r2 = attempt(p, 1);
        if (r2 != 0)
            finish(p, RS_LOG_WARN, nng_strerror(r2), "the TLS handshake failed");
        return;
    }
    finish(p, RS_LOG_WARN, nng_strerror(rv),
           "the server refused the TLS handshake whatever its certificate: it wants a client "
           "certificate signed by its --agent-tls-ca (--tls-cert, --tls-key here), or refuses "
           "this one, or it does not speak TLS on this port");
}

static void
on_step(void *arg)
{
    rs_tls_probe *p = arg;
    int rv = nng_aio_result(p->aio);
    nng_iov iov = {p->header, sizeof p->header};

    if (rv != 0) {
        failed(p, rv);
        return;
    }
    switch (p->step) {
    case STEP_DIAL:
        p->stream = nng_aio_get_output(p->aio, 0);
        /* the SP header of a req0 socket: "\0SP\0", protocol 0x30, reserved */
        memcpy(p->header, "\0SP\0\0\x30\0\0", sizeof p->header);
        p->step = STEP_SEND;
        nng_aio_set_iov(p->aio, 1, &iov);
        nng_stream_send(p->stream, p->aio);
        return;
    case STEP_SEND:
        p->step = STEP_RECV;
        nng_aio_set_iov(p->aio, 1, &iov);
        nng_stream_recv(p->stream, p->aio);
        return;
    case STEP_RECV:
        if (p->attempt == 0)
            finish(p, RS_LOG_INFO, NULL, "a TLS session with the server works now");
        else
            finish(p, RS_LOG_WARN, NULL,
                   "the server's certificate is refused here (the server takes this agent's): "
                   "is it signed by the CA in --tls-ca, valid now, and issued for the name "
                   "checked (--tls-server-name)?");
        return;
    }
}

int
rs_tls_probe_start(const char *url, nng_tls_config *conf, nng_tls_config *no_check,
                   const char *server_name, rs_tls_probe **out)
{
    rs_tls_probe *p = calloc(1, sizeof *p);
    int rv;

    if (!p)
        return -ENOMEM;
    snprintf(p->url, sizeof p->url, "%s", url);
    snprintf(p->name, sizeof p->name, "%s", server_name);
    nng_tls_config_hold(conf);
    nng_tls_config_hold(no_check);
    p->conf[0] = conf;
    p->conf[1] = no_check;
    if ((rv = nng_aio_alloc(&p->aio, on_step, p)) != 0 || (rv = attempt(p, 0)) != 0) {
        rs_tls_probe_free(p);
        return RS_E_CONFIG;
    }
    *out = p;
    return 0;
}

bool
rs_tls_probe_done(rs_tls_probe *p)
{
    return atomic_load(&p->done);
}

void
rs_tls_probe_free(rs_tls_probe *p)
{
    if (!p)
        return;
    if (p->aio)
        nng_aio_stop(p->aio);
    if (p->stream)
        nng_stream_free(p->stream);
    if (p->dialer)
        nng_stream_dialer_free(p->dialer);
    if (p->aio)
        nng_aio_free(p->aio);
    for (int i = 0; i < 2; i++)
        if (p->conf[i])
            nng_tls_config_free(p->conf[i]);
    free(p);
}
