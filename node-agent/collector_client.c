/* Collector -> agent hand-off over SOCK_SEQPACKET, non-blocking, drop-and-count (see
 * collector_client.h). */
#include "node-agent/collector_client.h"

#include "common/clock.h"
#include "common/error.h"
#include "common/hash.h"
#include "node-agent/records.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define RECORD_BOUND 64u /* bytes one encoded record can take, at most */
#define FRAME_BUDGET (RS_WIRE_MAX_FRAME_BYTES - 4096u) /* leaves room for identity and clock */
#define RECONNECT_NS 1000000000ull
#define SEND_BUFFER (4 << 20)

struct rs_collector {
    pid_t pid; /* of the process that opened the handle: a forked child stays inert */
    int fd;
    uint64_t last_connect_ns;
    char *socket_path;
    char *job, *host, *gpu_uuid;
    struct rs_rank_identity identity;
    uint32_t max_pending;
    struct rs_records pending; /* names persist across flushes: kernel names repeat */
    struct rs_records frame;   /* one frame being built, names local to it */
    size_t frame_bytes;
    struct rs_collector_stats stats;
    uint32_t status_flags;
    char *status_text;
    bool status_unsent;
    uint64_t capture_id; /* frames' capture mark */
    struct rs_capture_report reports[RS_CAPTURE_MAX_REPORTS];
    uint32_t n_reports; /* waiting for the next frame */
    uint64_t collector_id; /* numbers this handle's frames apart from a restarted rank's */
    uint64_t records_sent; /* records in the frames the socket took (RankBatch.records_sent) */
    uint8_t buf[RS_WIRE_MAX_FRAME_BYTES];
};

static bool
inert(const rs_collector *c)
{
    return c->pid != getpid();
}

int
rs_collector_open(const struct rs_collector_options *opts, const struct rs_rank_identity *id,
                  rs_collector **out)
{
    rs_collector *c;

    if (!rs_wire_job_valid(id->job))
        return RS_E_MALFORMED;
    if (!(c = calloc(1, sizeof *c)))
        return -ENOMEM;
    c->pid = getpid();
    c->fd = -1;
    c->max_pending = opts->max_pending ? opts->max_pending : 1u << 20;
    c->collector_id = rs_random_u64() | 1; /* never 0: 0 means "not reported" */
    c->socket_path = strdup(opts->socket_path);
    c->job = strdup(id->job);
    c->host = strdup(id->host ? id->host : "");
    c->gpu_uuid = strdup(id->gpu_uuid ? id->gpu_uuid : "");
    if (!c->socket_path || !c->job || !c->host || !c->gpu_uuid) {
        rs_collector_free(c);
        return -ENOMEM;
    }
    c->identity = *id;
    c->identity.job = c->job;
    c->identity.host = c->host;
    c->identity.gpu_uuid = c->gpu_uuid;
    rs_records_init(&c->pending);
    rs_records_init(&c->frame);
    *out = c;
    return 0;
}

void
rs_collector_free(rs_collector *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    rs_records_fini(&c->pending);
    rs_records_fini(&c->frame);
    free(c->socket_path);
    free(c->job);
    free(c->host);
    free(c->gpu_uuid);
    free(c->status_text);
    free(c);
}

uint32_t
rs_collector_name(rs_collector *c, const char *name)
{
    if (inert(c))
        return UINT32_MAX;
    return rs_strtab_intern(&c->pending.names, name);
}

#define NO_NAME (RS_STRTAB_NONE - 1) /* records without a name skip the name check */

/* Shared admission check for every add_*: bounded buffer, valid name ids. */
static int
admit(rs_collector *c, uint32_t name_id)
{
    if (inert(c))
        return RS_E_CLOSED;
    if (rs_records_count(&c->pending) >= c->max_pending ||
        (name_id != NO_NAME && name_id >= c->pending.names.count)) {
        c->stats.dropped++;
        return RS_E_FULL;
    }
    return 0;
}

static int
counted(rs_collector *c, int rc)
{
    if (rc != 0) {
        c->stats.dropped++;
        return RS_E_FULL;
    }
    return 0;
}

int
rs_collector_add_kernel(rs_collector *c, const struct rs_kernel_record *k)
{
    int rc = admit(c, k->name_id);
    return rc ? rc : counted(c, rs_records_add_kernel(&c->pending, k));
}

int
rs_collector_add_memcpy(rs_collector *c, const struct rs_memcpy_record *m)
{
    int rc = admit(c, NO_NAME);
    return rc ? rc : counted(c, rs_records_add_memcpy(&c->pending, m));
}

int
rs_collector_add_collective(rs_collector *c, const struct rs_collective_record *r)
{
    int rc = admit(c, r->name_id);
    return rc ? rc : counted(c, rs_records_add_collective(&c->pending, r));
}

int
rs_collector_add_step(rs_collector *c, const struct rs_step_record *s)
{
    int rc = admit(c, NO_NAME);
    return rc ? rc : counted(c, rs_records_add_step(&c->pending, s));
}

int
rs_collector_add_stall(rs_collector *c, const struct rs_stall_record *s)
{
    int rc = admit(c, s->kernel_name_id);
    if (rc == 0 && s->reason_id >= c->pending.names.count)
        rc = counted(c, -1);
    return rc ? rc : counted(c, rs_records_add_stall(&c->pending, s));
}

static void
try_connect(rs_collector *c)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    uint64_t now = rs_clock_mono_ns();
    int fd, size = SEND_BUFFER;

    if (c->last_connect_ns && now - c->last_connect_ns < RECONNECT_NS)
        return;
    c->last_connect_ns = now;
    if (strlen(c->socket_path) >= sizeof addr.sun_path)
        return;
    strcpy(addr.sun_path, c->socket_path);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size); /* absorbs bursts */
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        return;
    }
    c->fd = fd;
    c->stats.connects++;
}

/* Encodes c->frame and sends it; on any failure its records are counted as dropped. */
static int
send_frame(rs_collector *c, const struct rs_clock_pair *clock)
{
    struct rs_rank_batch b = {.identity = c->identity, .clock = *clock};
    uint64_t n = rs_records_count(&c->frame);
    size_t len = 0;
    int rc;

    if (n == 0 && !c->status_unsent && c->n_reports == 0)
        return 0;
    rs_records_view(&c->frame, &b);
    b.dropped_records = c->stats.dropped;
    b.collector_flags = c->status_flags;
    b.collector_status = c->status_text;
    b.capture_id = c->capture_id;
    b.captures = c->reports;
    b.n_captures = c->n_reports;
    /* The frame's number is used only if the socket takes it: a frame refused here is counted
     * as dropped, so the numbers the agent sees have a gap only for frames lost after sending. */
    b.collector_id = c->collector_id;
    b.frame_seq = c->stats.frames_sent + 1;
    b.records_sent = c->records_sent + n;
    b.frames = 1;
    b.frame_records = n;
    rc = rs_wire_rank_batch_encode(&b, c->buf, sizeof c->buf, &len);
    if (rc == 0) {
        if (c->fd < 0)
            try_connect(c);
        if (c->fd < 0)
            rc = -ENOTCONN;
        else if (send(c->fd, c->buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len) {
            rc = -errno;
            if (rc != -EAGAIN && rc != -ENOBUFS) { /* the agent went away: reconnect later */
                close(c->fd);
                c->fd = -1;
            }
        }
    }
    if (rc == 0) {
        c->status_unsent = false;
        c->n_reports = 0;
        c->stats.frames_sent++;
        c->records_sent += n;
        c->stats.kernels += c->frame.kernels.count;
        for (uint32_t i = 0; i < c->frame.memcpys.count; i++) {
            if (rs_copy_kind_is_host_side(c->frame.memcpys.items[i].kind))
                c->stats.syncs++;
            else
                c->stats.memcpys++;
        }
        c->stats.collectives += c->frame.collectives.count;
        c->stats.steps += c->frame.steps.count;
        c->stats.stalls += c->frame.stalls.count;
    } else {
        c->stats.frames_dropped++;
        c->stats.dropped += n;
    }
    rs_records_clear(&c->frame, 1);
    c->frame_bytes = 0;
    return rc;
}

/* Reserves room for one record (and its name) in the frame; sends the frame first when the record
 * may not fit. */
static void
frame_room(rs_collector *c, const struct rs_clock_pair *clock, const char *name, int *last_rc)
{
    size_t need = RECORD_BOUND + (name ? strlen(name) + 8 : 0);
    int rc;

    if (c->frame_bytes + need > FRAME_BUDGET && (rc = send_frame(c, clock)) != 0)
        *last_rc = rc;
    c->frame_bytes += need;
}

static uint32_t
frame_name(rs_collector *c, uint32_t global_id)
{
    return rs_strtab_intern(&c->frame.names, c->pending.names.strings[global_id]);
}

int
rs_collector_flush(rs_collector *c, const struct rs_clock_pair *clock)
{
    struct rs_records *p = &c->pending;
    int last = 0, rc;

    if (inert(c))
        return RS_E_CLOSED;
    /* A name interned in the frame costs its length again, so account for it per record; the
     * bound is loose but keeps every frame under the limit without trial encodes. */
    for (uint32_t i = 0; i < p->kernels.count; i++) {
        struct rs_kernel_record k = p->kernels.items[i];
        frame_room(c, clock, p->names.strings[k.name_id], &last);
        k.name_id = frame_name(c, k.name_id);
        if (k.name_id == RS_STRTAB_NONE || rs_records_add_kernel(&c->frame, &k))
            c->stats.dropped++;
    }
    for (uint32_t i = 0; i < p->collectives.count; i++) {
        struct rs_collective_record r = p->collectives.items[i];
        frame_room(c, clock, p->names.strings[r.name_id], &last);
        r.name_id = frame_name(c, r.name_id);
        if (r.name_id == RS_STRTAB_NONE || rs_records_add_collective(&c->frame, &r))
            c->stats.dropped++;
    }
    for (uint32_t i = 0; i < p->memcpys.count; i++) {
        frame_room(c, clock, NULL, &last);
        if (rs_records_add_memcpy(&c->frame, &p->memcpys.items[i]))
            c->stats.dropped++;
    }
    for (uint32_t i = 0; i < p->steps.count; i++) {
        frame_room(c, clock, NULL, &last);
        if (rs_records_add_step(&c->frame, &p->steps.items[i]))
            c->stats.dropped++;
    }
    for (uint32_t i = 0; i < p->stalls.count; i++) {
        struct rs_stall_record s = p->stalls.items[i];
        size_t extra = strlen(p->names.strings[s.reason_id]) + 8;
        frame_room(c, clock, p->names.strings[s.kernel_name_id], &last);
        c->frame_bytes += extra;
        s.kernel_name_id = frame_name(c, s.kernel_name_id);
        s.reason_id = frame_name(c, s.reason_id);
        if (s.kernel_name_id == RS_STRTAB_NONE || s.reason_id == RS_STRTAB_NONE ||
            rs_records_add_stall(&c->frame, &s))
            c->stats.dropped++;
    }
    if ((rc = send_frame(c, clock)) != 0)
        last = rc;
    rs_records_clear(p, 0);
    return last;
}

int
rs_collector_set_status(rs_collector *c, uint32_t flags, const char *text)
{
    char *copy = strdup(text ? text : "");

    if (!copy)
        return -ENOMEM;
    free(c->status_text);
    c->status_text = copy;
    c->status_flags = flags;
    c->status_unsent = true;
    return 0;
}

int
rs_collector_set_gpu_uuid(rs_collector *c, const char *uuid)
{
    char *copy = strdup(uuid);

    if (!copy)
        return -ENOMEM;
    free(c->gpu_uuid);
    c->gpu_uuid = copy;
    c->identity.gpu_uuid = copy;
    return 0;
}

void
rs_collector_count_dropped(rs_collector *c, uint64_t n)
{
    c->stats.dropped += n;
}

void
rs_collector_get_stats(const rs_collector *c, struct rs_collector_stats *out)
{
    *out = c->stats;
}

int
rs_collector_poll_control(rs_collector *c, struct rs_capture_order *out, uint32_t max, uint32_t *n)
{
    uint8_t frame[RS_CAPTURE_MAX_CONTROL_BYTES + 1];
    struct rs_capture_order got[RS_CAPTURE_MAX_ORDERS];

    *n = 0;
    if (inert(c) || c->fd < 0)
        return 0;
    for (int i = 0; i < RS_COLLECTOR_MAX_CONTROL_FRAMES; i++) {
        struct iovec iov = {frame, sizeof frame};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        ssize_t len = recvmsg(c->fd, &msg, MSG_DONTWAIT);
        uint32_t k = 0;
        if (len < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (len <= 0) { /* the agent closed the connection: reconnect at a flush */
            close(c->fd);
            c->fd = -1;
            return -ENOTCONN;
        }
        c->stats.control_frames++;
        if ((msg.msg_flags & MSG_TRUNC) ||
            rs_capture_control_decode(frame, (size_t)len, got, &k) != 0) {
            c->stats.control_rejected++;
            continue;
        }
        for (uint32_t j = 0; j < k && *n < max; j++)
            out[(*n)++] = got[j];
    }
    return 0;
}

void
rs_collector_set_capture(rs_collector *c, uint64_t id)
{
    c->capture_id = id;
}

int
rs_collector_report_capture(rs_collector *c, const struct rs_capture_report *r)
{
    if (c->n_reports >= RS_CAPTURE_MAX_REPORTS || !rs_capture_report_valid(r))
        return RS_E_FULL;
    c->reports[c->n_reports++] = *r;
    return 0;
}
