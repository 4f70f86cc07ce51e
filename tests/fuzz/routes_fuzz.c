/* libFuzzer target for the REST API's routes and query parameters through the real router: a
 * whole rankscope-server (rs_server_run, on a temporary store holding one small job "fz") runs in
 * a thread, and each input becomes one request — its first byte picks the method, the rest is
 * the request target (path and query; spaces, CR and LF become '+' so that the request line
 * stays one). The server must answer every such request, and never with 500: a 500 means a
 * parameter reached code that did not expect it (invalid UTF-8 once gave "500 out of memory").
 * Build: make fuzz-routes; make test replays tests/fuzz/corpus/routes. */
#include "common/log.h"
#include "proto/wire.h"
#include "server/server.h"
#include "tests/t_batch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/rs-routes-fuzz-XXXXXX", data_dir[64], ready[64];
static struct rs_server_config cfg;
static int http_port;

static void *
serve(void *arg)
{
    (void)arg;
    rs_server_run(&cfg);
    return NULL;
}

static void
remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char sub[512];

    if (!d) {
        unlink(path);
        return;
    }
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_tree(sub);
        }
    closedir(d);
    rmdir(path);
}

static void
cleanup(void)
{
    remove_tree(dir);
}

/* Sends req and reads the answer until the server closes; returns its status (0: none). */
static int
exchange(const char *req, size_t len)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)http_port)};
    struct timeval tv = {20, 0};
    char buf[65536];
    int fd = socket(AF_INET, SOCK_STREAM, 0), status = 0;
    size_t got = 0;
    ssize_t n;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 || send(fd, req, len, 0) != (ssize_t)len) {
        close(fd);
        return -1;
    }
    while ((n = recv(fd, buf + got, sizeof buf - 1 - got, 0)) > 0)
        if ((got += (size_t)n) == sizeof buf - 1)
            got = 16; /* keep the status line, drop the rest of a large answer */
    buf[got] = '\0';
    close(fd);
    if (strncmp(buf, "HTTP/1.1 ", 9) == 0)
        status = atoi(buf + 9);
    return status;
}

/* The job every query can find: two ranks with kernels, a collective and a step each. */
static void
import_job(void)
{
    static const char *const names[] = {"gemm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
    struct rs_kernel_record k[2] = {{1000, 2000, 0, 7, 0, 0}, {2100, 2600, 0, 7, 0, 0}};
    struct rs_collective_record c = {2000, 9000, 1024, 99, 1, RS_COLL_ALLREDUCE, 1, 17, true};
    struct rs_step_record s = {.step = 1, .start_ns = 900, .end_ns = 9500};
    struct rs_rank_batch rb[2];
    for (uint32_t r = 0; r < 2; r++)
        rb[r] = (struct rs_rank_batch){.identity = T_IDENTITY("fz", r, 2, "GPU-x"),
                                       .strings = names,
                                       .n_strings = 2,
                                       .kernels = k,
                                       .n_kernels = 2,
                                       .collectives = &c,
                                       .n_collectives = 1,
                                       .steps = &s,
                                       .n_steps = 1};
    struct rs_agent_batch b = t_agent_batch(9, 1, rb, 2);
    uint8_t *body;
    size_t len;
    char head[256], *req;

    if (rs_wire_agent_batch_encode(&b, &body, &len) != 0)
        abort();
    int n = snprintf(head, sizeof head,
                     "POST /v1/import HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     "application/x-protobuf\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                     len);
    req = malloc((size_t)n + len);
    memcpy(req, head, (size_t)n);
    memcpy(req + n, body, len);
    if (exchange(req, (size_t)n + len) != 200)
        abort();
    free(req);
    free(body);
}

static void
start_server(void)
{
    pthread_t t;
    FILE *f;
    char line[256];

    if (!mkdtemp(dir))
        abort();
    atexit(cleanup);
    snprintf(data_dir, sizeof data_dir, "%s/data", dir);
    snprintf(ready, sizeof ready, "%s/ready", dir);
    /* the defaults of server/main.c's table, but for ports, deadlines and sizes */
    cfg = (struct rs_server_config){.data = data_dir,
                                    .http = "127.0.0.1:0",
                                    .listen = "tcp://127.0.0.1:0",
                                    .ready_file = ready,
                                    .log_level = "error",
                                    .ingest_contexts = 4,
                                    .max_batch_mb = 17,
                                    .writer_queue = 64,
                                    .map_size_gb = 0.25,
                                    .http_max_header_bytes = 16384,
                                    .http_max_body_bytes = 1 << 20,
                                    .http_request_timeout_ms = 10000,
                                    .http_idle_timeout_ms = 30000,
                                    .http_max_connections = 64,
                                    .compact_to = "",
                                    .retention_s = 0,
                                    .maintenance_s = 600,
                                    .raw_retention_s = 0,
                                    .rollup_window_s = 60,
                                    .evaluate_ms = 0,
                                    .active_s = 120,
                                    .query_threads = 1,
                                    .query_max = 16,
                                    .query_max_per_client = 16,
                                    .query_timeout_ms = 5000,
                                    .ingest_threads = 1,
                                    .http_max_connections_per_peer = 64,
                                    .http_max_body_total_mb = 16,
                                    .agent_max_connections_per_peer = 16,
                                    .agent_max_connections = 64,
                                    .agent_idle_timeout_s = 300,
                                    .tls_cert = "",
                                    .tls_key = "",
                                    .agent_tls_cert = "",
                                    .agent_tls_key = "",
                                    .agent_tls_ca = "",
                                    .token_file = "",
                                    .new_token = "",
                                    .role = "read"};
    rs_log_set_level("error");
    if (pthread_create(&t, NULL, serve, NULL) != 0)
        abort();
    pthread_detach(t);
    for (int i = 0; i < 400 && http_port == 0; i++) {
        usleep(25000);
        if ((f = fopen(ready, "r"))) {
            while (fgets(line, sizeof line, f))
                if (strncmp(line, "http=", 5) == 0 && strrchr(line, ':'))
                    http_port = atoi(strrchr(line, ':') + 1);
            fclose(f);
        }
    }
    if (http_port == 0)
        abort();
    import_job();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"GET", "GET", "GET", "POST", "DELETE", "HEAD", "PUT"};
    char req[12288];
    size_t n;

    if (!http_port)
        start_server();
    if (size < 1 || size > 8000)
        return 0;
    const char *m = methods[data[0] % (sizeof methods / sizeof methods[0])];
    /* DELETE only of a job that is not "fz": the job stays for the inputs after this one */
    n = (size_t)snprintf(req, sizeof req, "%s ", m);
    for (size_t i = 1; i < size; i++)
        req[n++] = data[i] == ' ' || data[i] == '\r' || data[i] == '\n' ? '+' : (char)data[i];
    if (strcmp(m, "DELETE") == 0 && size >= 12 && memcmp(data + 1, "/v1/jobs/fz", 11) == 0 &&
        (size == 12 || data[12] == '?'))
        return 0;
    n += (size_t)snprintf(req + n, sizeof req - n,
                          " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    int status = exchange(req, n);
    if (status == 500 || status == 0) {
        fprintf(stderr, "routes fuzz: %s answered %d\n", req, status);
        __builtin_trap();
    }
    return 0;
}
