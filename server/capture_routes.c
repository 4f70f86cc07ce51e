/* POST /v1/jobs/{job}/capture (docs/openapi.yaml): the REST side of captures on demand
 * (captures.h; GET /v1/jobs/{job}/captures is a query in routes.c). The body is JSON, checked field by field with a message that
 * names what is wrong; every request, refused or not, leaves an RS-AUDIT line. Answered on the
 * loop: the table is in memory, a request touches at most RS_CAPTURES_MAX entries. */
#include "common/clock.h"
#include "common/error.h"
#include "server/captures.h"
#include "server/server_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define BODY_MAX 16384 /* 64 ranks and two kinds fit many times over */

/* Reads the body into ranks/kinds/seconds; answers 400 and returns -1 when it is not right. */
static int
parse_body(rs_http_conn *c, const struct rs_http_request *req, uint32_t *ranks, uint32_t *n,
           uint32_t *kinds, uint32_t *seconds)
{
    json_error_t jerr;
    json_t *doc, *v;
    const char *key;
    int rc = -1;

    if (req->body_len == 0 || req->body_len > BODY_MAX) {
        rs_http_respond_error(c, 400,
                              "the body must be a JSON object of at most %d bytes: {\"ranks\": "
                              "[0, 3], \"kinds\": [\"kernels\"], \"seconds\": 5}",
                              BODY_MAX);
        return -1;
    }
    if (!(doc = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr)) ||
        !json_is_object(doc)) {
        rs_http_respond_error(c, 400, "the body is not a JSON object%s%s", doc ? "" : ": ",
                              doc ? "" : jerr.text);
        json_decref(doc);
        return -1;
    }
    json_object_foreach(doc, key, v)
    {
        if (strcmp(key, "ranks") && strcmp(key, "kinds") && strcmp(key, "seconds")) {
            rs_http_respond_error(c, 400, "unknown field '%s' (ranks, kinds, seconds)", key);
            goto out;
        }
    }
    v = json_object_get(doc, "ranks");
    if (!json_is_array(v) || json_array_size(v) == 0 ||
        json_array_size(v) > RS_CAPTURES_MAX_RANKS) {
        rs_http_respond_error(c, 400, "ranks must be a list of 1 to %u rank numbers",
                              RS_CAPTURES_MAX_RANKS);
        goto out;
    }
    *n = (uint32_t)json_array_size(v);
    for (uint32_t i = 0; i < *n; i++) {
        json_t *r = json_array_get(v, i);
        if (!json_is_integer(r) || json_integer_value(r) < 0 ||
            json_integer_value(r) > RS_CAPTURE_MAX_RANK) {
            rs_http_respond_error(c, 400, "ranks[%u] must be an integer from 0 to %u", i,
                                  RS_CAPTURE_MAX_RANK);
            goto out;
        }
        ranks[i] = (uint32_t)json_integer_value(r);
    }
    v = json_object_get(doc, "kinds");
    *kinds = 0;
    if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > 2) {
        rs_http_respond_error(c, 400, "kinds must be a list of \"kernels\" and/or \"pc_sampling\"");
        goto out;
    }
    for (size_t i = 0; i < json_array_size(v); i++) {
        const char *k = json_string_value(json_array_get(v, i));
        if (k && strcmp(k, "kernels") == 0)
            *kinds |= RS_CAPTURE_KERNELS;
        else if (k && strcmp(k, "pc_sampling") == 0)
            *kinds |= RS_CAPTURE_PC_SAMPLING;
        else {
            rs_http_respond_error(c, 400, "kinds[%zu] is not \"kernels\" or \"pc_sampling\"", i);
            goto out;
        }
    }
    v = json_object_get(doc, "seconds");
    if (!json_is_integer(v) || json_integer_value(v) < 1 ||
        json_integer_value(v) > RS_CAPTURE_MAX_SECONDS) {
        rs_http_respond_error(c, 400, "seconds must be an integer from 1 to %u",
                              RS_CAPTURE_MAX_SECONDS);
        goto out;
    }
    *seconds = (uint32_t)json_integer_value(v);
    rc = 0;
out:
    json_decref(doc);
    return rc;
}

void
rs__server_capture_post(struct rs_server *srv, rs_http_conn *c, const struct rs_http_request *req,
                        const char *job, const struct rs_auth_who *who)
{
    uint32_t ranks[RS_CAPTURES_MAX_RANKS], n = 0, kinds = 0, seconds = 0;
    uint64_t ids[RS_CAPTURES_MAX_RANKS];
    char why[256] = "", kinds_text[32], reason[160];
    int rc, status;

    if (parse_body(c, req, ranks, &n, &kinds, &seconds) != 0) {
        rs__server_audit(who, "capture", "job=%s result=400-bad-body", job);
        return;
    }
    snprintf(reason, sizeof reason, "asked for through the REST API by %s", who->name);
    rc = rs_captures_request(srv->captures, job, ranks, n, kinds, seconds, who->name, reason,
                             rs_clock_realtime_ns(), ids, why, sizeof why);
    rs_capture_kinds_format(kinds, kinds_text, sizeof kinds_text);
    status = rc == 0 ? 202 : rc == -ENOENT ? 404 : rc == -EBUSY ? 409 : rc == RS_E_FULL ? 429 : 400;
    rs__server_audit(who, "capture", "job=%s ranks=%u first_rank=%u kinds=%s seconds=%u result=%d",
                     job, n, ranks[0], kinds_text, seconds, status);
    if (rc != 0) {
        if (status == 429)
            rs_http_retry_after(c, 60);
        rs_http_respond_error(c, status, "%s", why);
        return;
    }
    json_t *list = json_array();
    for (uint32_t i = 0; list && i < n; i++) {
        struct rs_capture_info info;
        if (rs_captures_get(srv->captures, ids[i], &info) == 0)
            json_array_append_new(list, rs_capture_info_json(&info));
    }
    rs_http_respond_json(c, 202, json_pack("{s:s,s:o}", "job", job, "captures", list));
}
