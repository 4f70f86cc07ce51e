/* PEM certificates and keys with mbedTLS (see tls_pem.h). */
#include "proto/tls_pem.h"

#include "common/error.h"

#include <mbedtls/error.h>
#include <mbedtls/sha256.h>
#include <stdio.h>

/* "<what> <path>: <mbedTLS's words> (-0xNNNN)" */
static void
describe(char *err, size_t err_len, const char *what, const char *path, int mbed_rc)
{
    char text[120];

    mbedtls_strerror(mbed_rc, text, sizeof text);
    snprintf(err, err_len, "%s %s: %s (-0x%04x)", what, path, text, (unsigned)-mbed_rc);
}

int
rs_tls_pem_certs(mbedtls_x509_crt *crt, const char *path, const char *what, char *err,
                 size_t err_len)
{
    int rc = mbedtls_x509_crt_parse_file(crt, path);

    if (rc == 0)
        return 0;
    /* > 0: that many certificates of the file did not parse */
    describe(err, err_len, what, path, rc < 0 ? rc : MBEDTLS_ERR_X509_CERT_UNKNOWN_FORMAT);
    return RS_E_CONFIG;
}

int
rs_tls_pem_pair(mbedtls_x509_crt *crt, mbedtls_pk_context *key, const char *cert_path,
                const char *key_path, char *err, size_t err_len)
{
    int rc;

    if ((rc = rs_tls_pem_certs(crt, cert_path, "certificate", err, err_len)) != 0)
        return rc;
    if ((rc = mbedtls_pk_parse_keyfile(key, key_path, NULL)) != 0) {
        describe(err, err_len, "key", key_path, rc);
        return RS_E_CONFIG;
    }
    if (mbedtls_pk_check_pair(&crt->pk, key) != 0) {
        snprintf(err, err_len, "key %s does not belong to the certificate %s", key_path,
                 cert_path);
        return RS_E_CONFIG;
    }
    return 0;
}

void
rs_tls_pem_fingerprint(const mbedtls_x509_crt *crt, char out[65])
{
    unsigned char sum[32];

    out[0] = '\0';
    if (!crt->raw.p)
        return;
    mbedtls_sha256_ret(crt->raw.p, crt->raw.len, sum, 0);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", sum[i]);
}
