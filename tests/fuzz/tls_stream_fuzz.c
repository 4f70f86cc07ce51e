/* libFuzzer target for the HTTPS layer's input side (server/tls_stream.c): what a client sends
 * before it is authenticated — ClientHellos, plain HTTP, garbage — into a server stream. Byte 0
 * is the piece size the rest arrives in (0: all at once); after each piece the stream is read
 * and its answer taken, as http.c does. The server's certificate is made once with the openssl
 * command in a temporary directory, removed at exit. */
#include "server/tls_stream.h"

#include "common/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/rs-tls-fuzz.XXXXXX";
static rs_tls_conf *conf;

static void
cleanup(void)
{
    char cmd[128];

    rs_tls_conf_release(conf);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static rs_tls_conf *
server_conf(void)
{
    char cmd[1024], cert[64], key[64], err[512];

    if (conf)
        return conf;
    if (!mkdtemp(dir))
        abort();
    atexit(cleanup);
    snprintf(cmd, sizeof cmd,
             "(cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
             "-days 2 -subj /CN=localhost -keyout k.pem -out c.pem) >/dev/null 2>&1",
             dir);
    snprintf(cert, sizeof cert, "%s/c.pem", dir);
    snprintf(key, sizeof key, "%s/k.pem", dir);
    if (system(cmd) != 0 || rs_tls_conf_server_new(cert, key, &conf, err, sizeof err) != 0) {
        fprintf(stderr, "tls_stream fuzz: no certificate (is openssl installed?)\n");
        abort();
    }
    return conf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_tls_stream *s;
    uint8_t plain[4096], *out;
    size_t piece, n, len;
    int rc = 0;

    if (size < 1 || rs_tls_stream_new(server_conf(), &s) != 0)
        return 0;
    piece = data[0] ? data[0] : size;
    data++;
    size--;
    for (size_t off = 0; rc == 0 && off < size; off += piece) {
        size_t take = size - off < piece ? size - off : piece;
        if ((rc = rs_tls_stream_input(s, data + off, take)) != 0)
            break;
        do {
            rc = rs_tls_stream_read(s, plain, sizeof plain, &n);
            if (n > sizeof plain)
                __builtin_trap();
        } while (rc == 0 && n > 0);
        rs_tls_stream_output(s, &out, &len);
        if ((out == NULL) != (len == 0))
            __builtin_trap();
        free(out);
    }
    if (rc >= RS_TLS_E_HANDSHAKE && rc <= RS_TLS_E_CLOSED && rs_tls_stream_error(s)[0] == '\0')
        __builtin_trap(); /* every failure of the layer says why */
    rs_tls_stream_free(&s);
    return 0;
}
