/* `rankscope hangs JOB`: the job's hang verdicts (GET /v1/jobs/{job}/hangs, query/hangs.h). */
#include "cli/commands.h"
#include "cli/output.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static void
print_ranks(const char *label, json_t *ranks, bool gpu_started)
{
    size_t i;
    json_t *r;

    printf("  %s:\n", label);
    json_array_foreach(ranks, i, r)
    {
        printf("    rank %5lld  host %-20s  GPU %s%s\n", (long long)rs__cli_int(r, "rank"),
               json_string_value(json_object_get(r, "host")),
               json_string_value(json_object_get(r, "gpu_uuid")),
               !gpu_started ? ""
               : json_is_true(json_object_get(r, "gpu_started"))
                   ? "  (its GPU started the operation)"
                   : "  (not started on its GPU)");
    }
}

/* The captures of the hang's ranks (server/hang_evidence.h): what each rank did meanwhile. */
static void
print_captures(json_t *caps)
{
    size_t i;
    json_t *c;

    json_array_foreach(caps, i, c) /* (the document's strings are escaped already) */
    {
        const char *role = json_string_value(json_object_get(c, "role")),
                   *state = json_string_value(json_object_get(c, "state")),
                   *text = json_string_value(json_object_get(c, "reading"));
        printf("  capture %lld of rank %lld (%s), %s: %s\n", (long long)rs__cli_int(c, "id"),
               (long long)rs__cli_int(c, "rank"),
               role && strcmp(role, "waiting") == 0 ? "waiting" : "never arrived",
               state ? state : "?", text ? text : "");
    }
}

static int
render_hangs(const char *job, json_t *doc)
{
    json_t *hangs = json_object_get(doc, "hangs"), *h;
    size_t i;
    char since[32];

    if (json_array_size(hangs) == 0) {
        printf("job %s: no NCCL operation in flight past its limit\n", job);
        return 0;
    }
    json_array_foreach(hangs, i, h)
    {
        rs__cli_format_time(rs__cli_int(h, "since_ns"), since, sizeof since);
        printf("job %s: HANG  %s seq %lld on communicator %s (%lld ranks), in flight since %s\n",
               job, json_string_value(json_object_get(h, "op")), (long long)rs__cli_int(h, "seq"),
               json_string_value(json_object_get(h, "comm")),
               (long long)rs__cli_int(h, "comm_size"), since);
        print_ranks("waiting (NCCL started it)", json_object_get(h, "waiting"), true);
        json_t *absent = json_object_get(h, "never_arrived");
        if (json_array_size(absent))
            print_ranks("never arrived", absent, false);
        if (rs__cli_int(h, "never_arrived_unknown"))
            printf("  never arrived: %lld more members of this communicator (ranks not known)\n",
                   (long long)rs__cli_int(h, "never_arrived_unknown"));
        print_captures(json_object_get(h, "captures"));
    }
    return 0;
}

int
rs_cli_hangs(const struct rs_cli_options *o, int argc, char **argv)
{
    return rs__cli_show_job(o, argc, argv, "rankscope hangs JOB", "GET", "/hangs", false,
                            render_hangs);
}
