/* What a 404 means to a person (see output.h): which job or rank is missing, the near name, and the
 * command that lists what exists — found by asking the server, not by reading its message. */
#include "cli/output.h"

#include "common/suggest.h"
#include "cli/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_JOBS 4096

/* The value of `key` in the path's query ("rank=5"), or NULL; copied into out. */
static const char *
query_value(const char *path, const char *key, char *out, size_t len)
{
    size_t n = strlen(key);

    for (const char *p = strchr(path, '?'); p && *p; p = strchr(p + 1, '&')) {
        if (strncmp(p + 1, key, n) == 0 && p[1 + n] == '=') {
            snprintf(out, len, "%.*s", (int)strcspn(p + 2 + n, "&"), p + 2 + n);
            return out;
        }
    }
    return NULL;
}

static json_t *
get(const struct rs_cli_options *o, const char *path)
{
    char err[512];
    long status = 0;
    json_t *doc = NULL;

    if (rs_cli_http("GET", o->server, path, &status, &doc, err, sizeof err) != 0)
        return NULL;
    if (status != 200) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* Says so when `job` is not among the server's jobs. Returns true when it said something. */
static bool
explain_job(const struct rs_cli_options *o, const char *job)
{
    const char *names[MAX_JOBS];
    json_t *doc = get(o, "/v1/jobs"), *j;
    size_t i, n = 0;
    bool known = false;

    if (!doc)
        return false;
    json_array_foreach(json_object_get(doc, "jobs"), i, j)
    {
        const char *name = json_string_value(json_object_get(j, "job"));
        if (!name || n == MAX_JOBS)
            continue;
        known |= strcmp(name, job) == 0;
        names[n++] = name;
    }
    if (!known) {
        const char *near = rs_suggest(job, names, n);
        fprintf(stderr, "rankscope: no job '%s' on %s", job, o->server);
        if (near)
            fprintf(stderr, " — did you mean '%s'?", near);
        fprintf(stderr, " (%s)\n",
                n ? "rankscope jobs lists the jobs"
                  : "it has no jobs yet; rankscope jobs lists them");
    }
    json_decref(doc);
    return !known;
}

/* Says so when `job` has no rank `rank`. Returns true when it said something. */
static bool
explain_rank(const struct rs_cli_options *o, const char *job, const char *rank)
{
    char path[512];
    json_t *doc, *r;
    size_t i;
    long long lo = -1, hi = -1, want = atoll(rank);
    bool known = false;

    snprintf(path, sizeof path, "/v1/jobs/%s/ranks", job);
    if (!(doc = get(o, path)))
        return false;
    json_array_foreach(json_object_get(doc, "ranks"), i, r)
    {
        long long k = rs__cli_int(r, "rank");
        known |= k == want;
        lo = lo < 0 || k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    json_decref(doc);
    if (known)
        return false;
    fprintf(stderr, "rankscope: job '%s' has no rank %lld", job, want);
    if (lo >= 0)
        fprintf(stderr, " (its ranks: %lld to %lld; rankscope ranks %s lists them)\n", lo, hi, job);
    else
        fprintf(stderr, " (rankscope ranks %s lists its ranks)\n", job);
    return true;
}

bool
rs__cli_explain_not_found(const struct rs_cli_options *o, const char *path)
{
    char job[160], with[160], rank[32], with_rank[32];
    const char *p = path;

    if (strncmp(p, "/v1/jobs/", 9) != 0)
        return false;
    p += 9;
    snprintf(job, sizeof job, "%.*s", (int)strcspn(p, "/?"), p);
    if (!*job)
        return false;
    const char *b = query_value(path, "with", with, sizeof with) ?: job;
    if (explain_job(o, job) || (strcmp(b, job) != 0 && explain_job(o, b)))
        return true;
    const char *ra = query_value(path, "rank", rank, sizeof rank);
    const char *rb = query_value(path, "with_rank", with_rank, sizeof with_rank) ?: ra;
    return (ra && explain_rank(o, job, ra)) || (rb && explain_rank(o, b, rb));
}
