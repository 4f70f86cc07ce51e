/* `rankscope import FILE... [--job NAME]`: imports PyTorch profiler traces into a running server
 * through POST /v1/import, one AgentBatch per request, each acknowledged after its commit and
 * resent while the server answers "busy", so imported and live jobs can be compared. */
#include "cli/commands.h"

#include "common/error.h"
#include "cli/http.h"
#include "cli/output.h"
#include "cli/trace_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RETRIES 30 /* 503 answers (writer busy) per batch before giving up, 1 s apart */

struct http_sink {
    const char *server;
    uint64_t agent_id, batch_seq;
    uint64_t committed, duplicates;
    bool unauthorized; /* the server answered 401 or 403 */
};

/* rs_kineto_sink_fn: encodes the batch and posts it until it is committed. */
static int
post_batch(void *arg, const struct rs_rank_batch *b)
{
    struct http_sink *s = arg;
    struct rs_agent_batch ab = rs__cli_import_batch(s->agent_id, ++s->batch_seq, b);
    uint8_t *body = NULL;
    size_t len;
    char err[1024];
    int rc;

    if ((rc = rs_wire_agent_batch_encode(&ab, &body, &len)) != 0) {
        fprintf(stderr, "rankscope: cannot encode batch %llu: %s\n",
                (unsigned long long)ab.batch_seq, rs_strerror(rc));
        return rc;
    }
    for (int attempt = 0;; attempt++) {
        json_t *doc = NULL;
        long status = 0;
        if (rs_cli_http_body("POST", s->server, "/v1/import", "application/x-protobuf", body, len,
                             &status, &doc, err, sizeof err) != 0) {
            fprintf(stderr, "rankscope: %s\n", rs__cli_escaped(err));
            rc = RS_E_CLOSED;
            break;
        }
        const char *what = json_string_value(json_object_get(doc, "status"));
        const char *msg =
            json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
        if (status == 200) {
            bool dup = what && strcmp(what, "duplicate") == 0;
            s->duplicates += dup;
            s->committed += !dup;
            json_decref(doc);
            rc = 0;
            break;
        }
        if (status != 503 || attempt == RETRIES) {
            fprintf(stderr, "rankscope: the server refused batch %llu (HTTP %ld): %s\n",
                    (unsigned long long)ab.batch_seq, status,
                    msg ? rs__cli_escaped(msg) : "no reason given");
            if (status == 401 || status == 403) {
                fprintf(stderr, "rankscope: import needs a token with the ingest role, in "
                                "--token-file (RANKSCOPE_CLI_TOKEN_FILE) or RANKSCOPE_CLI_TOKEN\n");
                s->unauthorized = true;
            }
            json_decref(doc);
            rc = RS_E_MALFORMED;
            break;
        }
        json_decref(doc);
        sleep(1);
    }
    free(body);
    return rc;
}

int
rs_cli_import(const struct rs_cli_options *o, int argc, char **argv)
{
    struct rs_trace_set set;
    json_t *files = NULL;
    int rc;

    if ((rc = rs__cli_trace_set_open(o, "rankscope import FILE... [--job NAME] [--server URL]",
                                     argc, argv, &set)) != 0)
        return rc;
    struct http_sink sink = {o->server, set.agent_id, 0, 0, 0, false};
    rc = rs__cli_trace_set_import(&set, post_batch, &sink, &files);
    if (rc == 0) {
        if (o->json) {
            rc = rs__cli_print_json(json_pack(
                "{s:s, s:o, s:I, s:I}", "job", set.job, "files", files, "batches_committed",
                (json_int_t)sink.committed, "batches_duplicate", (json_int_t)sink.duplicates));
            files = NULL;
        } else {
            printf("imported job %s into %s: %llu batches committed, %llu already there\n", set.job,
                   o->server, (unsigned long long)sink.committed,
                   (unsigned long long)sink.duplicates);
            printf("next: rankscope --server %s stragglers %s\n", o->server, set.job);
        }
    } else {
        rc = sink.unauthorized ? RS_CLI_EXIT_UNAUTHORIZED : 1;
    }
    json_decref(files);
    rs__cli_trace_set_close(&set);
    return rc;
}
