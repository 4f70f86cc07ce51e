/* Helpers shared by the CLI's commands (see output.h). */
#include "cli/output.h"

#include "common/utf8.h"
#include "proto/wire.h"
#include "cli/http.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *
rs__cli_escaped(const char *s)
{
    static char bufs[4][4096];
    static unsigned next;
    char *out = bufs[next++ % 4];

    rs_utf8_escape(s ? s : "", s ? strlen(s) : 0, out, sizeof bufs[0]);
    return out;
}

void
rs__cli_escape_doc(json_t *doc)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_is_string(doc)) {
        const char *text = json_string_value(doc);
        size_t len = json_string_length(doc);
        char small[512], *out = small;
        size_t need = rs_utf8_escape(text, len, small, sizeof small);
        if (need == len)
            return; /* nothing to escape (escaping only ever lengthens) */
        if (need >= sizeof small && (out = malloc(need + 1)))
            rs_utf8_escape(text, len, out, need + 1);
        json_string_set(doc, out ? out : "?");
        if (out != small)
            free(out);
    } else if (json_is_array(doc)) {
        json_array_foreach(doc, i, v) rs__cli_escape_doc(v);
    } else if (json_is_object(doc)) {
        json_object_foreach(doc, key, v) rs__cli_escape_doc(v);
    }
}

/* Sends the request; prints API errors; returns the exit code (0 with *doc set on success). */
int
rs__cli_request(const struct rs_cli_options *o, const char *method, const char *path, json_t **doc)
{
    char err[1024];
    long status = 0;
    int rc;

    if (rs_cli_http(method, o->server, path, &status, doc, err, sizeof err) != 0) {
        fprintf(stderr, "rankscope: %s\n", rs__cli_escaped(err)); /* may quote the server */
        return 1;
    }
    if (status == 200) {
        if (!o->json)
            rs__cli_escape_doc(*doc); /* tables print names from the wire: kernels, hosts, GPUs */
        return 0;
    }
    if (status == 404 && rs__cli_explain_not_found(o, path)) {
        json_decref(*doc);
        return 3;
    }
    rc = rs__cli_api_error(status, *doc);
    json_decref(*doc);
    return rc;
}

int
rs__cli_show(const struct rs_cli_options *o, const char *method, const char *job, const char *path,
             int (*render)(const char *job, json_t *doc), int (*exit_code)(json_t *doc))
{
    json_t *doc;
    int rc, code;

    if ((rc = rs__cli_request(o, method, path, &doc)) != 0)
        return rc;
    code = exit_code ? exit_code(doc) : 0;
    if (o->json)
        return rs__cli_print_json(doc) ?: code;
    rc = render(job, doc);
    json_decref(doc);
    return rc ?: code;
}

int
rs__cli_show_job(const struct rs_cli_options *o, int argc, char **argv, const char *usage,
                 const char *method, const char *suffix, bool scoped,
                 int (*render)(const char *job, json_t *doc))
{
    char path[1024];
    int rc;

    if ((rc = rs__cli_job_arg(usage, argc, argv)) != 0)
        return rc;
    snprintf(path, sizeof path, "/v1/jobs/%s%s", argv[0], suffix);
    if (scoped)
        rs__cli_scope_query(o, path, sizeof path, false);
    return rs__cli_show(o, method, argv[0], path, render, NULL);
}

void
rs__cli_scope_query(const struct rs_cli_options *o, char *q, size_t len, bool compare)
{
    const struct {
        const char *key;
        int64_t v;
        bool only_compare;
    } opts[] = {
        {"rank", o->rank, false},
        {"since_ns", o->since_ns, false},
        {"until_ns", o->until_ns, false},
        {"limit", o->limit, false},
        {"with_rank", o->with_rank, true},
        {"with_since_ns", o->with_since_ns, true},
        {"with_until_ns", o->with_until_ns, true},
    };
    size_t n = strlen(q);

    for (size_t i = 0; i < sizeof opts / sizeof opts[0] && n < len; i++)
        if (opts[i].v >= 0 && (compare || !opts[i].only_compare))
            n += (size_t)snprintf(q + n, len - n, "%c%s=%lld", strchr(q, '?') ? '&' : '?',
                                  opts[i].key, (long long)opts[i].v);
}

int
rs__cli_api_error(long status, json_t *doc)
{
    json_t *message = json_object_get(json_object_get(doc, "error"), "message");

    rs__cli_escape_doc(message);
    fprintf(stderr, "rankscope: %s\n",
            json_string_value(message) ?: "the server answered with an error");
    if (status == 401 || status == 403)
        fprintf(stderr, "rankscope: the CLI sends the token in --token-file "
                        "(RANKSCOPE_CLI_TOKEN_FILE) or RANKSCOPE_CLI_TOKEN\n");
    return status == 404 ? 3 : status == 401 || status == 403 ? RS_CLI_EXIT_UNAUTHORIZED : 1;
}

int
rs__cli_print_json(json_t *doc)
{
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(9));

    if (text)
        puts(text);
    free(text);
    json_decref(doc);
    return text ? 0 : 1;
}

void
rs__cli_format_time(json_int_t ns, char *out, size_t len)
{
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;

    if (ns <= 0 || !gmtime_r(&s, &tm)) {
        snprintf(out, len, "-");
        return;
    }
    strftime(out, len, "%Y-%m-%d %H:%M:%SZ", &tm);
}

json_int_t
rs__cli_int(json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

double
rs__cli_real(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

bool
rs__cli_rounds_to_zero(double x, int decimals)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", decimals, fabs(x));
    for (const char *c = buf; *c; c++)
        if (*c >= '1' && *c <= '9')
            return false;
    return true;
}

const char *
rs__cli_signed(double x, int decimals, char *out, size_t len)
{
    if (rs__cli_rounds_to_zero(x, decimals))
        snprintf(out, len, "%.*f", decimals, 0.0);
    else
        snprintf(out, len, "%+.*f", decimals, x);
    return out;
}

/* Accepts only names the API accepts (rs_wire_job_valid), so the path needs no escaping. */
int
rs__cli_job_arg(const char *usage, int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "rankscope: usage: %s\n", usage);
        return 2;
    }
    if (!rs_wire_job_valid(argv[0])) {
        fprintf(stderr, "rankscope: '%s' is not a job name (1-%u of A-Z a-z 0-9 . _ : @ + = -)\n",
                rs__cli_escaped(argv[0]), RS_WIRE_MAX_JOB_LEN);
        return 2;
    }
    return 0;
}
