/* TLS over memory buffers with mbedTLS 2.28 (see tls_stream.h): the REST API's HTTPS layer sits
 * between libuv's reads/writes and the HTTP parser (http.c). mbedTLS reads ciphertext from `in`
 * and writes ciphertext to `out` through the two callbacks below; nothing here touches a socket. */
#include "server/tls_stream.h"

#include "common/array.h"
#include "common/error.h"
#include "proto/tls_pem.h"

#include <errno.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rs_tls_conf {
    unsigned refs;
    bool server;
    mbedtls_ssl_config ssl;
    mbedtls_x509_crt cert; /* server: own chain; client: trusted CAs */
    mbedtls_pk_context key;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    char *server_name; /* client: the name the server's certificate must carry (NULL: any) */
};

struct rs_tls_stream {
    rs_tls_conf *conf;
    mbedtls_ssl_context ssl;
    uint8_t *in; /* received ciphertext; in[in_off .. in_len) not yet consumed */
    size_t in_off, in_len, in_cap;
    uint8_t *out; /* ciphertext to send */
    size_t out_len, out_cap;
    uint64_t in_total;
    bool established, plaintext;
    char error[160];
};

static void
describe(char *out, size_t len, const char *what, int mbed_rc)
{
    char text[120];

    mbedtls_strerror(mbed_rc, text, sizeof text);
    snprintf(out, len, "%s: %s (-0x%04x)", what, text, (unsigned)-mbed_rc);
}

/* ---- configurations ------------------------------------------------------------------------- */

static rs_tls_conf *
conf_alloc(bool server)
{
    static const char personal[] = "rankscope tls";
    rs_tls_conf *c = calloc(1, sizeof *c);

    if (!c)
        return NULL;
    c->refs = 1;
    c->server = server;
    mbedtls_ssl_config_init(&c->ssl);
    mbedtls_x509_crt_init(&c->cert);
    mbedtls_pk_init(&c->key);
    mbedtls_entropy_init(&c->entropy);
    mbedtls_ctr_drbg_init(&c->drbg);
    if (mbedtls_ctr_drbg_seed(&c->drbg, mbedtls_entropy_func, &c->entropy,
                              (const unsigned char *)personal, sizeof personal - 1) != 0 ||
        mbedtls_ssl_config_defaults(&c->ssl,
                                    server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
                                    MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT) != 0) {
        rs_tls_conf_release(c);
        return NULL;
    }
    /* TLS 1.2 at least: 1.0 and 1.1 are deprecated (RFC 8996). */
    mbedtls_ssl_conf_min_version(&c->ssl, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    mbedtls_ssl_conf_rng(&c->ssl, mbedtls_ctr_drbg_random, &c->drbg);
    return c;
}

int
rs_tls_conf_server_new(const char *cert_path, const char *key_path, rs_tls_conf **out, char *err,
                       size_t err_len)
{
    rs_tls_conf *c = conf_alloc(true);
    int rc;

    if (!c) {
        snprintf(err, err_len, "out of memory");
        return -ENOMEM;
    }
    if (rs_tls_pem_pair(&c->cert, &c->key, cert_path, key_path, err, err_len) != 0)
        goto fail;
    if ((rc = mbedtls_ssl_conf_own_cert(&c->ssl, &c->cert, &c->key)) != 0) {
        describe(err, err_len, "certificate", rc);
        goto fail;
    }
    *out = c;
    return 0;
fail:
    rs_tls_conf_release(c);
    return RS_E_CONFIG;
}

int
rs_tls_conf_client_new(const char *ca_path, const char *server_name, rs_tls_conf **out, char *err,
                       size_t err_len)
{
    rs_tls_conf *c = conf_alloc(false);

    if (!c) {
        snprintf(err, err_len, "out of memory");
        return -ENOMEM;
    }
    if (rs_tls_pem_certs(&c->cert, ca_path, "CA file", err, err_len) != 0) {
        rs_tls_conf_release(c);
        return RS_E_CONFIG;
    }
    mbedtls_ssl_conf_ca_chain(&c->ssl, &c->cert, NULL);
    mbedtls_ssl_conf_authmode(&c->ssl, MBEDTLS_SSL_VERIFY_REQUIRED);
    if (server_name && !(c->server_name = strdup(server_name))) {
        rs_tls_conf_release(c);
        return -ENOMEM;
    }
    *out = c;
    return 0;
}

void
rs_tls_conf_fingerprint(const rs_tls_conf *conf, char out[65])
{
    out[0] = '\0';
    if (conf->server)
        rs_tls_pem_fingerprint(&conf->cert, out);
}

void
rs_tls_conf_hold(rs_tls_conf *conf)
{
    conf->refs++;
}

void
rs_tls_conf_release(rs_tls_conf *conf)
{
    if (!conf || --conf->refs > 0)
        return;
    free(conf->server_name);
    mbedtls_ssl_config_free(&conf->ssl);
    mbedtls_x509_crt_free(&conf->cert);
    mbedtls_pk_free(&conf->key);
    mbedtls_ctr_drbg_free(&conf->drbg);
    mbedtls_entropy_free(&conf->entropy);
    free(conf);
}

/* ---- streams -------------------------------------------------------------------------------- */

static int
bio_send(void *arg, const unsigned char *buf, size_t len)
{
    rs_tls_stream *s = arg;

    if (RS_ARRAY_RESERVE(s->out, s->out_cap, s->out_len, len) != 0)
        return MBEDTLS_ERR_SSL_ALLOC_FAILED;
    memcpy(s->out + s->out_len, buf, len);
    s->out_len += len;
    return (int)len;
}

static int
bio_recv(void *arg, unsigned char *buf, size_t len)
{
    rs_tls_stream *s = arg;
    size_t avail = s->in_len - s->in_off;

    if (avail == 0)
        return MBEDTLS_ERR_SSL_WANT_READ;
    if (len > avail)
        len = avail;
    memcpy(buf, s->in + s->in_off, len);
    s->in_off += len;
    if (s->in_off == s->in_len)
        s->in_off = s->in_len = 0;
    return (int)len;
}

int
rs_tls_stream_new(rs_tls_conf *conf, rs_tls_stream **out)
{
    rs_tls_stream *s = calloc(1, sizeof *s);

    if (!s)
        return -ENOMEM;
    mbedtls_ssl_init(&s->ssl);
    if (mbedtls_ssl_setup(&s->ssl, &conf->ssl) != 0 ||
        (conf->server_name && mbedtls_ssl_set_hostname(&s->ssl, conf->server_name) != 0)) {
        mbedtls_ssl_free(&s->ssl);
        free(s);
        return -ENOMEM;
    }
    mbedtls_ssl_set_bio(&s->ssl, s, bio_send, bio_recv, NULL);
    rs_tls_conf_hold(conf);
    s->conf = conf;
    *out = s;
    return 0;
}

void
rs_tls_stream_free(rs_tls_stream **sp)
{
    rs_tls_stream *s = *sp;

    if (!s)
        return;
    mbedtls_ssl_free(&s->ssl);
    rs_tls_conf_release(s->conf);
    free(s->in);
    free(s->out);
    free(s);
    *sp = NULL;
}

int
rs_tls_stream_input(rs_tls_stream *s, const void *data, size_t len)
{
    const uint8_t *p = data;

    if (len == 0)
        return 0;
    if (s->in_len - s->in_off + len > RS_TLS_STREAM_MAX_INPUT)
        return RS_E_FULL;
    /* A TLS connection opens with a handshake record (type 22); an upper-case letter is an HTTP
     * method: a client that speaks plain HTTP to this port. */
    if (s->in_total == 0 && p[0] >= 'A' && p[0] <= 'Z')
        s->plaintext = true;
    s->in_total += len;
    if (s->in_off > 0) { /* keep the unread tail at the front */
        memmove(s->in, s->in + s->in_off, s->in_len - s->in_off);
        s->in_len -= s->in_off;
        s->in_off = 0;
    }
    if (RS_ARRAY_RESERVE(s->in, s->in_cap, s->in_len, len) != 0)
        return -ENOMEM;
    memcpy(s->in + s->in_len, p, len);
    s->in_len += len;
    return 0;
}

/* The code of a failed mbedTLS call, with its description kept for rs_tls_stream_error. */
static int
failed(rs_tls_stream *s, const char *what, int mbed_rc, int code)
{
    describe(s->error, sizeof s->error, what, mbed_rc);
    if (mbed_rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
        char why[96];
        int n = mbedtls_x509_crt_verify_info(why, sizeof why, "",
                                             mbedtls_ssl_get_verify_result(&s->ssl));
        if (n > 0) {
            why[strcspn(why, "\n")] = '\0';
            size_t used = strlen(s->error);
            snprintf(s->error + used, sizeof s->error - used, ": %s", why);
        }
    }
    return mbed_rc == MBEDTLS_ERR_SSL_ALLOC_FAILED ? -ENOMEM : code;
}

int
rs_tls_stream_read(rs_tls_stream *s, void *buf, size_t cap, size_t *n)
{
    int rc;

    *n = 0;
    if (s->plaintext) {
        snprintf(s->error, sizeof s->error, "the client speaks plain HTTP to the TLS port");
        return RS_TLS_E_PLAINTEXT;
    }
    if (!s->established) {
        rc = mbedtls_ssl_handshake(&s->ssl);
        if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE)
            return 0;
        if (rc != 0)
            return failed(s, "handshake", rc, RS_TLS_E_HANDSHAKE);
        s->established = true;
    }
    if (cap == 0)
        return 0;
    rc = mbedtls_ssl_read(&s->ssl, buf, cap > INT32_MAX ? INT32_MAX : cap);
    if (rc > 0) {
        *n = (size_t)rc;
        return 0;
    }
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE)
        return 0;
    if (rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
        snprintf(s->error, sizeof s->error, "the peer closed the TLS session");
        return RS_TLS_E_CLOSED;
    }
    return failed(s, "read", rc, RS_TLS_E_PROTOCOL);
}

int
rs_tls_stream_write(rs_tls_stream *s, const void *data, size_t len)
{
    const unsigned char *p = data;

    if (!s->established) {
        snprintf(s->error, sizeof s->error, "write before the handshake completed");
        return RS_TLS_E_HANDSHAKE;
    }
    while (len > 0) {
        int rc = mbedtls_ssl_write(&s->ssl, p, len > INT32_MAX ? INT32_MAX : len);
        if (rc < 0)
            return failed(s, "write", rc, RS_TLS_E_PROTOCOL);
        p += rc;
        len -= (size_t)rc;
    }
    return 0;
}

void
rs_tls_stream_close_notify(rs_tls_stream *s)
{
    if (s->established)
        mbedtls_ssl_close_notify(&s->ssl);
}

void
rs_tls_stream_output(rs_tls_stream *s, uint8_t **data, size_t *len)
{
    *data = s->out_len ? s->out : NULL;
    *len = s->out_len;
    if (s->out_len) {
        s->out = NULL;
        s->out_len = s->out_cap = 0;
    }
}

bool
rs_tls_stream_established(const rs_tls_stream *s)
{
    return s->established;
}

const char *
rs_tls_stream_error(const rs_tls_stream *s)
{
    return s->error;
}
