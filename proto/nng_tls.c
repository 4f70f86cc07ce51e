/* NNG TLS configurations for tls+tcp:// (see nng_tls.h): the PEM files are checked with mbedTLS
 * (tls_pem.h; the library NNG itself uses here), then handed to NNG. */
#include "proto/nng_tls.h"

#include "common/error.h"
#include "common/fs.h"
#include "proto/tls_pem.h"

#include <errno.h>
#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>
#include <stdio.h>
#include <stdlib.h>

#define PEM_MAX (1u << 20)

static bool
given(const char *s)
{
    return s && s[0];
}

/* Checks the pair (tls_pem.h) and fingerprints the certificate. */
static int
check_pair(const char *cert_path, const char *key_path, char fp[65], char *err, size_t err_len)
{
    mbedtls_x509_crt crt;
    mbedtls_pk_context key;
    int rc;

    mbedtls_x509_crt_init(&crt);
    mbedtls_pk_init(&key);
    if ((rc = rs_tls_pem_pair(&crt, &key, cert_path, key_path, err, err_len)) == 0 && fp)
        rs_tls_pem_fingerprint(&crt, fp);
    mbedtls_pk_free(&key);
    mbedtls_x509_crt_free(&crt);
    return rc;
}

/* Reads the pair and gives it to NNG. */
static int
own_cert(nng_tls_config *c, const char *cert_path, const char *key_path, char *err,
         size_t err_len)
{
    char *cert = NULL, *key = NULL;
    size_t len;
    int rc, rv;

    if ((rc = rs_fs_read_all(cert_path, PEM_MAX, &cert, &len)) != 0 ||
        (rc = rs_fs_read_all(key_path, PEM_MAX, &key, &len)) != 0)
        snprintf(err, err_len, "cannot read %s or %s: %s", cert_path, key_path, rs_strerror(rc));
    else if ((rv = nng_tls_config_own_cert(c, cert, key, NULL)) != 0) {
        snprintf(err, err_len, "NNG refuses the certificate %s: %s", cert_path, nng_strerror(rv));
        rc = RS_E_CONFIG;
    }
    free(cert);
    free(key);
    return rc;
}

int
rs_nng_tls_config_new(bool server, const struct rs_nng_tls_files *files,
                      struct nng_tls_config **out, char fingerprint[65], char *err,
                      size_t err_len)
{
    nng_tls_config *c = NULL;
    int rc = RS_E_CONFIG, rv;

    if (fingerprint)
        fingerprint[0] = '\0';
    if (given(files->cert) != given(files->key)) {
        snprintf(err, err_len, "a certificate needs its key, and a key its certificate");
        return RS_E_CONFIG;
    }
    if (server && !given(files->cert)) {
        snprintf(err, err_len, "a tls+tcp:// listener needs a certificate and its key");
        return RS_E_CONFIG;
    }
    if (!server && !given(files->ca) && !files->no_server_check) {
        snprintf(err, err_len, "a tls+tcp:// server is verified against a CA file: give one");
        return RS_E_CONFIG;
    }
    if (given(files->cert) &&
        (rc = check_pair(files->cert, files->key, fingerprint, err, err_len)) != 0)
        return rc;
    if ((rv = nng_tls_config_alloc(&c, server ? NNG_TLS_MODE_SERVER : NNG_TLS_MODE_CLIENT)) != 0 ||
        (rv = nng_tls_config_version(c, NNG_TLS_1_2, NNG_TLS_1_2)) != 0) {
        snprintf(err, err_len, "NNG has no TLS here: %s", nng_strerror(rv));
        rc = rv == NNG_ENOMEM ? -ENOMEM : RS_E_CONFIG;
        goto fail;
    }
    if (given(files->cert) && (rc = own_cert(c, files->cert, files->key, err, err_len)) != 0)
        goto fail;
    rc = RS_E_CONFIG;
    if (given(files->ca) && ((rv = nng_tls_config_ca_file(c, files->ca)) != 0 ||
                             (rv = nng_tls_config_auth_mode(c, NNG_TLS_AUTH_MODE_REQUIRED)))) {
        snprintf(err, err_len, "CA file %s: %s", files->ca, nng_strerror(rv));
        goto fail;
    }
    if (!server && files->no_server_check &&
        (rv = nng_tls_config_auth_mode(c, NNG_TLS_AUTH_MODE_NONE)) != 0) {
        snprintf(err, err_len, "NNG: %s", nng_strerror(rv));
        goto fail;
    }
    if (!server && given(files->server_name) &&
        (rv = nng_tls_config_server_name(c, files->server_name)) != 0) {
        snprintf(err, err_len, "server name %s: %s", files->server_name, nng_strerror(rv));
        goto fail;
    }
    *out = c;
    return 0;
fail:
    if (c)
        nng_tls_config_free(c);
    return rc;
}
