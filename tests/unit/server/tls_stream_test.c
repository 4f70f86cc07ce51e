/* Unit tests of the TLS stream layer (server/tls_stream.c): a client stream and a server stream
 * connected in memory — handshake, data both ways (large, and delivered a byte at a time),
 * verification failures (other CA, other name), plain HTTP, garbage, the input bound, close_notify,
 * loading refusals (missing files, a key that is not the certificate's) and the fingerprint
 * against openssl's. Certificates are made with the openssl command in a temporary directory. */
#include "server/tls_stream.h"
#include "tests/t.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/rs-tls-unit.XXXXXX";
static char path_buf[8][320];

static const char *
path(int slot, const char *name)
{
    snprintf(path_buf[slot], sizeof path_buf[slot], "%s/%s", dir, name);
    return path_buf[slot];
}

/* CA "ca", server "srv" (localhost) signed by it, "other" CA, and "other.key" (not srv's). */
static int
make_certs(void)
{
    char cmd[4096];

    if (!mkdtemp(dir))
        return -1;
    snprintf(cmd, sizeof cmd,
             "(cd %s && k='-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes' && "
             "openssl req -x509 $k -days 2 -subj /CN=ca -keyout ca.key -out ca.crt && "
             "openssl req -x509 $k -days 2 -subj /CN=other -keyout other.key -out other.crt && "
             "openssl req $k -subj /CN=localhost -keyout srv.key -out srv.csr && "
             "printf 'subjectAltName=DNS:localhost\\n' > ext && "
             "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
             "-extfile ext -out srv.crt && "
             "openssl x509 -in srv.crt -noout -fingerprint -sha256 > srv.fp) >/dev/null 2>&1",
             dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Moves what `from` has to send into `to`, `chunk` bytes at a time (0: all at once). */
static int
carry(rs_tls_stream *from, rs_tls_stream *to, size_t chunk)
{
    uint8_t *data;
    size_t len;
    int rc = 0;

    rs_tls_stream_output(from, &data, &len);
    for (size_t off = 0; rc == 0 && off < len; off += chunk ? chunk : len)
        rc = rs_tls_stream_input(to, data + off, chunk && len - off > chunk ? chunk : len - off);
    free(data);
    return rc;
}

/* Steps both handshakes until both are established or one fails: returns 0 or the failure. */
static int
handshake(rs_tls_stream *cli, rs_tls_stream *srv, size_t chunk, int *which)
{
    char buf[64];
    size_t n;
    int rc;

    for (int round = 0; round < 20; round++) {
        *which = 1;
        if ((rc = rs_tls_stream_read(cli, buf, sizeof buf, &n)) != 0)
            return rc;
        if ((rc = carry(cli, srv, chunk)) != 0)
            return rc;
        *which = 2;
        if ((rc = rs_tls_stream_read(srv, buf, sizeof buf, &n)) != 0)
            return rc;
        if ((rc = carry(srv, cli, chunk)) != 0)
            return rc;
        if (rs_tls_stream_established(cli) && rs_tls_stream_established(srv))
            return 0;
    }
    return -1;
}

/* Everything `s` decrypts now, appended to out (cap bytes). */
static size_t
drain(rs_tls_stream *s, uint8_t *out, size_t cap, int *rc)
{
    size_t got = 0, n;

    do {
        *rc = rs_tls_stream_read(s, out + got, cap - got, &n);
        got += n;
    } while (*rc == 0 && n > 0 && got < cap);
    return got;
}

static void
round_trip(size_t chunk)
{
    rs_tls_conf *sc, *cc;
    rs_tls_stream *srv, *cli;
    char err[512];
    int which, rc;
    size_t big = 1u << 20;
    uint8_t *out = malloc(big), *in = malloc(big);

    T_OK(rs_tls_conf_server_new(path(0, "srv.crt"), path(1, "srv.key"), &sc, err, sizeof err));
    T_OK(rs_tls_conf_client_new(path(0, "ca.crt"), "localhost", &cc, err, sizeof err));
    T_OK(rs_tls_stream_new(sc, &srv));
    T_OK(rs_tls_stream_new(cc, &cli));
    rs_tls_conf_release(sc); /* the streams hold their configurations */
    rs_tls_conf_release(cc);
    T_EQ(rs_tls_stream_write(cli, "x", 1), RS_TLS_E_HANDSHAKE); /* not before the handshake */
    T_EQ(handshake(cli, srv, chunk, &which), 0);
    for (size_t i = 0; i < big; i++)
        out[i] = (uint8_t)(i * 7 + (i >> 9));
    T_OK(rs_tls_stream_write(cli, out, big));
    /* the server reads what arrives as it comes, as http.c does (its input is bounded) */
    uint8_t *wire;
    size_t wire_len, got = 0, piece = chunk ? 4096 : 65536;
    rs_tls_stream_output(cli, &wire, &wire_len);
    T_CHECK(wire_len > big); /* records carry overhead */
    rc = 0;
    for (size_t off = 0; rc == 0 && off < wire_len; off += piece) {
        size_t n = wire_len - off < piece ? wire_len - off : piece;
        if ((rc = rs_tls_stream_input(srv, wire + off, n)) == 0)
            got += drain(srv, in + got, big - got, &rc);
    }
    free(wire);
    T_EQ(rc, 0);
    T_EQ(got, big);
    T_CHECK(memcmp(in, out, big) == 0);
    T_OK(rs_tls_stream_write(srv, "HTTP/1.1 200 OK\r\n\r\n", 19));
    T_OK(carry(srv, cli, chunk));
    got = drain(cli, in, big, &rc);
    T_EQ(got, 19);
    T_CHECK(memcmp(in, "HTTP/1.1 200 OK\r\n\r\n", 19) == 0);
    rs_tls_stream_close_notify(cli);
    T_OK(carry(cli, srv, chunk));
    drain(srv, in, big, &rc);
    T_EQ(rc, RS_TLS_E_CLOSED);
    rs_tls_stream_free(&srv);
    rs_tls_stream_free(&cli);
    T_CHECK(srv == NULL && cli == NULL);
    free(out);
    free(in);
}

static void
round_trip_whole(void)
{
    round_trip(0);
}

static void
round_trip_byte_by_byte(void)
{
    round_trip(1);
}

/* The client's verification fails (`ca` did not sign the server's certificate, or `name` is not
 * the one it carries); the server sees the client's alert. */
static void
refused_by_client(const char *ca, const char *name)
{
    rs_tls_conf *sc, *cc;
    rs_tls_stream *srv, *cli;
    char err[512];
    int which = 0;

    T_OK(rs_tls_conf_server_new(path(0, "srv.crt"), path(1, "srv.key"), &sc, err, sizeof err));
    T_OK(rs_tls_conf_client_new(path(2, ca), name, &cc, err, sizeof err));
    T_OK(rs_tls_stream_new(sc, &srv));
    T_OK(rs_tls_stream_new(cc, &cli));
    T_EQ(handshake(cli, srv, 0, &which), RS_TLS_E_HANDSHAKE);
    T_EQ(which, 1);
    T_CHECK(strstr(rs_tls_stream_error(cli), "verif") != NULL);
    T_OK(carry(cli, srv, 0)); /* the alert */
    char buf[16];
    size_t n;
    T_EQ(rs_tls_stream_read(srv, buf, sizeof buf, &n), RS_TLS_E_HANDSHAKE);
    T_CHECK(rs_tls_stream_error(srv)[0] != '\0');
    T_CHECK(!rs_tls_stream_established(srv));
    rs_tls_stream_free(&srv);
    rs_tls_stream_free(&cli);
    rs_tls_conf_release(sc);
    rs_tls_conf_release(cc);
}

static void
other_ca(void)
{
    refused_by_client("other.crt", "localhost");
}

static void
other_name(void)
{
    refused_by_client("ca.crt", "elsewhere.example");
}

/* A fresh server stream given `data`: the code its read returns. */
static int
server_reads(const void *data, size_t len)
{
    rs_tls_conf *sc;
    rs_tls_stream *srv;
    char err[512], buf[256];
    size_t n;
    int rc;

    if ((rc = rs_tls_conf_server_new(path(0, "srv.crt"), path(1, "srv.key"), &sc, err,
                                     sizeof err)) != 0)
        return rc;
    if ((rc = rs_tls_stream_new(sc, &srv)) == 0 && (rc = rs_tls_stream_input(srv, data, len)) == 0)
        rc = rs_tls_stream_read(srv, buf, sizeof buf, &n);
    rs_tls_stream_free(&srv);
    rs_tls_conf_release(sc);
    return rc;
}

static void
plain_http_and_garbage(void)
{
    static const char get[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    uint8_t junk[3000];

    T_EQ(server_reads(get, sizeof get - 1), RS_TLS_E_PLAINTEXT);
    T_EQ(server_reads("P", 1), RS_TLS_E_PLAINTEXT); /* one byte is enough to tell */
    srand(7);
    for (int i = 0; i < 200; i++) {
        size_t len = 1 + (size_t)rand() % sizeof junk;
        for (size_t j = 0; j < len; j++)
            junk[j] = (uint8_t)rand();
        if (i % 2) { /* behind a plausible handshake record header */
            junk[0] = 0x16;
            junk[1] = 0x03;
            junk[2] = (uint8_t)(i % 5);
        }
        int rc = server_reads(junk, len);
        T_CHECK(rc == 0 || rc == RS_TLS_E_HANDSHAKE || rc == RS_TLS_E_PLAINTEXT);
    }
    /* a truncated record: more is needed, nothing fails yet */
    static const uint8_t partial[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc};
    T_EQ(server_reads(partial, sizeof partial), 0);
}

static void
input_bounded(void)
{
    rs_tls_conf *sc;
    rs_tls_stream *srv;
    char err[512];
    uint8_t *big = calloc(1, RS_TLS_STREAM_MAX_INPUT);

    T_OK(rs_tls_conf_server_new(path(0, "srv.crt"), path(1, "srv.key"), &sc, err, sizeof err));
    T_OK(rs_tls_stream_new(sc, &srv));
    big[0] = 0x16;
    T_OK(rs_tls_stream_input(srv, big, RS_TLS_STREAM_MAX_INPUT));
    T_EQ(rs_tls_stream_input(srv, big, 1), RS_E_FULL);
    rs_tls_stream_free(&srv);
    rs_tls_conf_release(sc);
    free(big);
}

static void
loading(void)
{
    rs_tls_conf *c = NULL;
    char err[512], fp[65], want[200] = "", *p, *q;
    FILE *f;

    T_EQ(rs_tls_conf_server_new(path(0, "missing.crt"), path(1, "srv.key"), &c, err, sizeof err),
         RS_E_CONFIG);
    T_CHECK(strstr(err, "missing.crt") != NULL);
    T_EQ(rs_tls_conf_server_new(path(0, "srv.crt"), path(1, "other.key"), &c, err, sizeof err),
         RS_E_CONFIG);
    T_CHECK(strstr(err, "does not belong") != NULL);
    T_EQ(rs_tls_conf_server_new(path(0, "srv.key"), path(1, "srv.key"), &c, err, sizeof err),
         RS_E_CONFIG); /* a key where the certificate should be */
    T_EQ(rs_tls_conf_client_new(path(0, "nothing.crt"), NULL, &c, err, sizeof err), RS_E_CONFIG);
    T_CHECK(c == NULL);
    T_OK(rs_tls_conf_server_new(path(0, "srv.crt"), path(1, "srv.key"), &c, err, sizeof err));
    rs_tls_conf_fingerprint(c, fp);
    rs_tls_conf_release(c);
    /* openssl: "sha256 Fingerprint=AB:CD:..." */
    if ((f = fopen(path(2, "srv.fp"), "r"))) {
        if (!fgets(want, sizeof want, f))
            want[0] = '\0';
        fclose(f);
    }
    p = strchr(want, '=');
    T_CHECK(p != NULL);
    for (q = want; p && *++p && *p != '\n';)
        if (*p != ':')
            *q++ = (char)(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p);
    *q = '\0';
    T_CHECK(strcmp(fp, want) == 0);
}

int
main(void)
{
    if (make_certs() != 0) {
        fprintf(stderr, "cannot make certificates with openssl in %s\n", dir);
        printf("unit/server/tls_stream: 0 passed, 1 failed\n");
        return 1;
    }
    T_RUN(round_trip_whole);
    T_RUN(round_trip_byte_by_byte);
    T_RUN(other_ca);
    T_RUN(other_name);
    T_RUN(plain_http_and_garbage);
    T_RUN(input_bounded);
    T_RUN(loading);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return T_DONE("unit/server/tls_stream");
}
