/* POST /v1/import: agent batches sent over HTTP (`rankscope import` of trace files). The body is
 * one AgentBatch protobuf, decoded and validated like an agent's request, committed by the same
 * writer with the same (agent_id, batch_seq) deduplication, and answered only after its commit. */
#include "server/server_int.h"

#include "common/error.h"
#include "common/log.h"
#include "proto/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct import_work {
    struct rs_server *srv;
    rs_http_conn *conn;
    uint64_t batch_seq;
    enum rs_reply_status status;
    char reason[160];
    /* for the audit line */
    struct rs_auth_who who;
    char job[RS_WIRE_MAX_JOB_LEN + 1];
    uint32_t ranks;
    size_t bytes;
};

static const char *const status_names[] = {"?",        "committed", "duplicate",
                                           "rejected", "retry",     "unauthorized"};

static void
import_answer(void *arg) /* on the loop */
{
    struct import_work *w = arg;

    rs__server_audit(&w->who, "import", "job=%s batch_seq=%llu ranks=%u bytes=%zu result=%s",
                     w->job, (unsigned long long)w->batch_seq, w->ranks, w->bytes,
                     status_names[(unsigned)w->status < 6 ? w->status : 0]);
    switch (w->status) {
    case RS_REPLY_ACK:
        /* its heatmap read before the dashboard asks (heatmap_warm.h) */
        rs_heatmap_warm_job(w->srv->heatmap_warm, w->job);
        /* fall through */
    case RS_REPLY_DUPLICATE:
        rs_http_respond_json(w->conn, 200,
                             json_pack("{s:I, s:s}", "batch_seq", (json_int_t)w->batch_seq,
                                       "status",
                                       w->status == RS_REPLY_ACK ? "committed" : "duplicate"));
        break;
    case RS_REPLY_REJECTED:
        rs_http_respond_error(w->conn, 400, "batch %llu rejected: %s",
                              (unsigned long long)w->batch_seq, w->reason);
        break;
    default:
        rs_http_respond_error(w->conn, 503, "batch %llu not committed now (%s): send it again",
                              (unsigned long long)w->batch_seq, w->reason);
        break;
    }
    free(w);
}

static void
import_done(void *arg, enum rs_reply_status status, const char *reason) /* writer thread */
{
    struct import_work *w = arg;

    w->status = status;
    snprintf(w->reason, sizeof w->reason, "%s", reason ? reason : "");
    if (rs_post_call(w->srv->post, import_answer, w) != 0)
        free(w); /* out of memory: the client times out and resends */
}

void
rs__server_import(struct rs_server *srv, rs_http_conn *c, const struct rs_http_request *req,
                  const struct rs_auth_who *who)
{
    rs_wire_agent_batch *batch = NULL;
    struct import_work *w;
    int rc;

    if (strcmp(req->method, "POST") != 0) {
        rs_http_respond_error(c, 405, "%s is not allowed on %s (POST an AgentBatch protobuf)",
                              req->method, req->path);
        return;
    }
    RS_COUNT(&srv->counters, batches_received);
    if ((rc = rs_wire_agent_batch_decode((const uint8_t *)req->body, req->body_len, &batch)) != 0) {
        RS_COUNT(&srv->counters, batches_rejected);
        rs_log_limited(10, RS_LOG_WARN, "RS-IMPORT-DECODE", "rejected a %zu-byte import batch: %s",
                       req->body_len, rs_strerror(rc));
        rs__server_audit(who, "import", "job=? batch_seq=? ranks=0 bytes=%zu result=rejected",
                         req->body_len);
        rs_http_respond_error(c, 400, "the body is not an AgentBatch this server accepts: %s",
                              rs_strerror(rc));
        return;
    }
    if (!(w = calloc(1, sizeof *w))) {
        rs_wire_agent_batch_free(batch);
        rs_http_respond_error(c, 500, "out of memory");
        return;
    }
    const struct rs_agent_batch *b = rs_wire_agent_batch_get(batch);
    *w = (struct import_work){srv, c, b->batch_seq, 0, "", *who, "", b->n_ranks, req->body_len};
    snprintf(w->job, sizeof w->job, "%s", b->n_ranks ? b->ranks[0].identity.job : "-");
    /* with tokens, deduplicated per principal: one cannot pre-claim another's batches */
    const char *principal =
        strcmp(rs__server_auth_mode(srv->auth), "tokens") == 0 ? who->name : NULL;
    if ((rc = rs_writer_submit_as(srv->writer, batch, principal, req->body_len, import_done, w)) !=
        0) {
        rs_wire_agent_batch_free(batch);
        free(w);
        RS_COUNT(&srv->counters, batches_retry);
        rs_http_respond_error(c, 503, "%s: send it again",
                              rc == RS_E_FULL ? "the server is busy" : "the server is stopping");
    }
}
