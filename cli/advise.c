/* `rankscope advise JOB`: the advisor's ranked findings (query/advice.h) — what costs each step,
 * by how much at most, and what to change in PyTorch terms — from the server's
 * /v1/jobs/{job}/advice; `analyze` prints the same table for traces. */
#include "cli/commands.h"
#include "cli/output.h"

#include <stdio.h>
#include <string.h>

/* One finding's numbers: "key value" pairs as the server sent them. */
static void
print_seen(json_t *seen)
{
    const char *key;
    json_t *v;
    int first = 1;

    printf("    seen:");
    json_object_foreach(seen, key, v)
    {
        double x = json_number_value(v);
        /* whole numbers in full (12000 MiB, not 1.2e+04); others to 3 significant digits */
        if (x == (double)(long long)x && x < 1e15 && x > -1e15)
            printf("%s %s %lld", first ? "" : ",", key, (long long)x);
        else
            printf("%s %s %.3g", first ? "" : ",", key, x);
        first = 0;
    }
    printf("\n");
}

int
rs__cli_render_advice(const char *job, json_t *doc)
{
    json_t *findings = json_object_get(doc, "findings"), *f, *skipped, *s;
    const char *src = json_string_value(json_object_get(doc, "steps_source"));
    size_t i, k;

    json_t *rank = json_object_get(doc, "rank");
    if (json_is_integer(rank))
        printf("rank %lld's findings: ", (long long)json_integer_value(rank));
    printf("job %s: advice over %lld steps of %lld rank(s) (steps from %s), median step %.2f ms\n",
           job, (long long)rs__cli_int(doc, "steps_analysed"),
           (long long)rs__cli_int(doc, "ranks_with_steps"),
           !src                                ? "?"
           : strcmp(src, "kernel_period") == 0 ? "the kernel-name period"
           : strcmp(src, "inferred") == 0      ? "the NCCL pattern"
                                               : src,
           rs__cli_real(doc, "median_step_ms"));
    if (src && strcmp(src, "none") == 0) {
        printf("no steps: no markers, no NCCL pattern and no kernel period were found, so no "
               "advice.\n");
        return 0;
    }
    if (json_array_size(findings) == 0)
        printf("nothing to fix above the noise threshold (%.0f%% of the step).\n",
               100.0 * rs__cli_real(doc, "min_share"));
    json_array_foreach(findings, i, f)
    {
        printf("\n%zu. %s: %s\n", i + 1, json_string_value(json_object_get(f, "kind")),
               json_string_value(json_object_get(f, "title")));
        printf("    costs up to %.3f ms of a %.3f ms step (%.0f%%) on rank %lld",
               rs__cli_real(f, "cost_ms"), rs__cli_real(f, "step_ms"),
               100.0 * rs__cli_real(f, "cost_share"), (long long)rs__cli_int(f, "rank"));
        if (rs__cli_int(f, "ranks") > 1)
            printf(" (seen on %lld ranks)", (long long)rs__cli_int(f, "ranks"));
        printf("\n");
        print_seen(json_object_get(f, "seen"));
        json_t *names = json_object_get(f, "kernels"), *nm;
        if (json_array_size(names) > 0) {
            printf("    kernels:");
            json_array_foreach(names, k, nm) printf("%s %s", k ? " ->" : "", json_string_value(nm));
            printf("\n");
        }
        printf("    estimate: %s\n", json_string_value(json_object_get(f, "how")));
        printf("    change: %s\n", json_string_value(json_object_get(f, "fix")));
    }
    skipped = json_object_get(doc, "skipped");
    if (json_array_size(skipped) > 0) {
        printf("\nnot checked:");
        json_array_foreach(skipped, k, s)
            printf("%s %s (%s)", k ? ";" : "", json_string_value(json_object_get(s, "kind")),
                   json_string_value(json_object_get(s, "why")));
        printf("\n");
    }
    return 0;
}

int
rs_cli_advise(const struct rs_cli_options *o, int argc, char **argv)
{
    return rs__cli_show_job(o, argc, argv, "rankscope advise JOB [--rank R]", "GET", "/advice",
                            true, rs__cli_render_advice);
}
