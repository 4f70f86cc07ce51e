/* The captures behind a hang verdict (see hang_evidence.h). */
#include "server/hang_evidence.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CAPTURES 64 /* of one job since its hang began: a hang asks for two */

/* "never_arrived", "waiting", or NULL when `rank` is in neither list of hang `h`. */
static const char *
role_of(json_t *h, uint32_t rank)
{
    static const char *const lists[] = {"never_arrived", "waiting"};
    json_t *r;
    size_t i;

    for (size_t l = 0; l < 2; l++)
        json_array_foreach(json_object_get(h, lists[l]), i, r)
        {
            if (json_integer_value(json_object_get(r, "rank")) == (json_int_t)rank)
                return lists[l];
        }
    return NULL;
}

/* What capture `c` of a rank in `role` says about the hang. */
static void
reading(const struct rs_capture_info *c, const char *role, char *out, size_t len)
{
    bool absent = strcmp(role, "never_arrived") == 0;
    double s = c->ended_ns > c->started_ns ? (double)(c->ended_ns - c->started_ns) / 1e9 : 0;

    if (c->state != RS_CAPTURES_DONE)
        snprintf(out, len, "no evidence %s: the capture is %s%s%s",
                 c->state <= RS_CAPTURES_RUNNING ? "yet" : "from it",
                 rs_capture_state_name(c->state), c->message[0] ? ": " : "", c->message);
    else if (!(c->ran_kinds & RS_CAPTURE_KERNELS))
        snprintf(out, len, "no kernel evidence: kernel tracing did not run (%s)", c->message);
    else if (absent && c->kernels > 0)
        snprintf(out, len,
                 "ran %llu kernels in the %.1f s traced: its GPU works on something else — "
                 "late (a longer step, another code path), not stuck",
                 (unsigned long long)c->kernels, s);
    else if (absent)
        snprintf(out, len,
                 "no kernel in the %.1f s traced while its collector answered: the process is "
                 "alive but gives its GPU no work — stuck on the host (input pipeline, a lock, "
                 "Python) or in a kernel that never ends",
                 s);
    else if (c->kernels > 0)
        snprintf(out, len,
                 "ran %llu kernels in the %.1f s traced while waiting: work on its other streams "
                 "goes on",
                 (unsigned long long)c->kernels, s);
    else
        snprintf(out, len,
                 "no kernel finished in the %.1f s traced: it waits inside the collective",
                 s);
}

int
rs__server_hang_captures(rs_captures *cs, const char *job, json_t *doc)
{
    struct rs_capture_info *caps = NULL;
    json_t *h;
    size_t i;
    char text[320];
    int rc = 0;

    if (json_array_size(json_object_get(doc, "hangs")) && !(caps = malloc(MAX_CAPTURES * sizeof *caps)))
        return -ENOMEM;
    json_array_foreach(json_object_get(doc, "hangs"), i, h)
    {
        if (rc != 0)
            break;
        json_t *list = json_array();
        size_t n = cs ? rs_captures_list(cs, job,
                                         (uint64_t)json_integer_value(json_object_get(h, "since_ns")),
                                         caps, MAX_CAPTURES)
                      : 0;
        if (!list || json_object_set_new(h, "captures", list) != 0) {
            rc = -ENOMEM;
            break;
        }
        for (size_t k = 0; k < n && k < MAX_CAPTURES; k++) {
            const char *role = role_of(h, caps[k].rank);
            json_t *e;
            if (!role)
                continue;
            reading(&caps[k], role, text, sizeof text);
            if (!(e = rs_capture_info_json(&caps[k])) ||
                json_object_set_new(e, "role", json_string(role)) != 0 ||
                json_object_set_new(e, "reading", json_string(text)) != 0 ||
                json_array_append_new(list, e) != 0) {
                rc = -ENOMEM;
                break;
            }
        }
    }
    free(caps);
    return rc;
}
