/* The CLI's command table and the help built from it (see command_table.h). */
#include "cli/command_table.h"

#include "common/suggest.h"

#include <stdio.h>
#include <string.h>

#define TIME_OPTIONS "since until last since-ns until-ns"

const struct rs_cli_command rs_cli_commands[] = {
    {"jobs", rs_cli_jobs, "", "", "list the jobs the server knows",
     "One line per job: ranks seen, world size, first and last record, span."},
    {"ranks", rs_cli_ranks, "JOB", "", "per-rank summary: host, GPU, steps, kernel and NCCL time",
     "One line per rank: host, GPU UUID, steps, step time, kernel and NCCL time per step, and "
     "records the collector dropped.\nThe straggler is the rank with the least NCCL time per "
     "step: the others wait for it inside the collectives."},
    {"stragglers", rs_cli_stragglers, "JOB", "window until-step",
     "which rank slows the job, by how much, since when, and why",
     "The straggler verdicts of the newest window (or as of --until-step): per slow rank its "
     "slowdown against the median rank,\nhow often it arrives last at collectives, the job time "
     "lost, since when, the cause with its evidence, and the\nrecommended action. The rule and "
     "its defaults are in docs/analysis.md."},
    {"hangs", rs_cli_hangs, "JOB", "",
     "NCCL operations in flight past their limit: who waits, who never came",
     "Hang verdicts: per communicator with a rank whose collector (NCCL profiler plugin) reports "
     "an "
     "operation in flight\npast RANKSCOPE_HANG_MS, the op and sequence, since when, the ranks that "
     "wait and those that never arrived (host, GPU).\nThe rule is in docs/analysis.md (Hangs)."},
    {"steps", rs_cli_steps, "JOB", "",
     "per-rank step time, compute, NCCL, exposed NCCL, idle, host gap",
     "Medians over each rank's last 30 steps. Steps come from step markers (ProfilerStep, NVTX) "
     "or are inferred from the\nrepeating pattern of NCCL collectives."},
    {"skew", rs_cli_skew, "JOB", "", "NCCL wait skew: who arrives last, how long the others wait",
     "Collective instances matched across ranks; per instance the wait skew (clock-free: "
     "kernel durations) and the arrival\nspread (needs aligned clocks); per rank the time spent "
     "waiting and how often it arrived last."},
    {"top", rs_cli_top, "JOB", "rank limit " TIME_OPTIONS,
     "kernels and NCCL ops by GPU time per step (or per second)",
     "Kernels and NCCL operations ranked by GPU time per step (per second when the ranks mark no "
     "steps), host\nsynchronizations, over all ranks or one (--rank), over the whole job or a "
     "time range."},
    {"stalls", rs_cli_stalls, "JOB", "rank limit " TIME_OPTIONS,
     "PC-sampling stall reasons per kernel; the straggler against its peers",
     "Needs PC sampling (RANKSCOPE_PC_SAMPLING=1 in the training job's environment). Stall "
     "reasons per kernel, and the\nstraggler's (or --rank's) stall mix against its peers."},
    {"compare", rs_cli_compare, "JOB [JOB_B]",
     "rank with-rank limit " TIME_OPTIONS " with-since with-until with-since-ns with-until-ns",
     "what changed, per kernel and NCCL op, per step",
     "Side A against side B, per kernel and NCCL operation: time per step, counts, stall mix, "
     "host synchronizations.\nTwo jobs (JOB JOB_B), two ranks (--rank R --with-rank R2) or two "
     "windows (--since/--until and\n--with-since/--with-until); totals add up."},
    {"watch", rs_cli_watch, "JOB", "interval-s iterations",
     "live view: verdict, NCCL skew, top kernels, refreshed",
     "Refreshes the straggler verdict with its history, the NCCL wait skew and the top kernels "
     "every --interval-s\nuntil Ctrl-C (or --iterations times)."},
    {"advise", rs_cli_advise, "JOB", "rank",
     "ranked findings: what costs each step, by how much at most, what to change",
     "Per finding (launch-bound, host synchronizations, input pipeline, pageable copies, fp32 "
     "GEMMs, unfused elementwise\nchains, exposed NCCL, memory stalls, load imbalance, batch "
     "size from GPU memory telemetry): the numbers\nseen, the step time it costs at most and how "
     "that was estimated, and what to change in PyTorch terms.\nOver each rank's last 50 steps "
     "(markers, the NCCL pattern, or the kernel-name period); findings below 5%\nof the step "
     "are noise. --rank R: that rank's findings only. docs/analysis.md \"Advice\"."},
    {"analyze", rs_cli_analyze, "FILE...", "job data rank",
     "PyTorch profiler traces, no server: ranks, steps, top, skew, stragglers, advice",
     "Imports PyTorch profiler traces (one per rank; .json or .json.gz; files, directories, "
     "globs) into an embedded store\n(a temporary one in TMPDIR, unlinked as soon as it is open so "
     "that nothing stays behind, or --data DIR\nto keep it) and prints "
     "ranks, steps, top kernels, NCCL skew, stragglers and advice.\nA trace without distributedInfo is "
     "rank 0 of a one-rank job (or --rank R). In a directory, JSON files that are\nnot traces "
     "are skipped with a warning."},
    {"import", rs_cli_import, "FILE...", "job rank",
     "the same traces into the server, next to live jobs",
     "Imports PyTorch profiler traces into the server (POST /v1/import), so that imported and "
     "live jobs can be compared.\nImporting the same files again changes nothing."},
    {"export", rs_cli_export, "JOB", "format out data rank " TIME_OPTIONS,
     "a window as Perfetto/Chrome trace files, or a pprof profile",
     "--format perfetto (default): one Chrome/Perfetto trace file per rank, aligned, with "
     "distributedInfo (HTA reads\nthe directory), into --out DIR.\n--format pprof: a pprof "
     "profile (go tool pprof): stall reasons, rank -> kernel -> pc -> reason, or GPU time per\n"
     "kernel without PC samples, into --out FILE (or JOB.pb.gz in the current directory; the "
     "path is printed).\nFrom the server, or from a store directory with --data."},
    {"gpus", rs_cli_gpus, "JOB", "", "each rank's GPU: clocks, throttling, power, errors, links",
     "NVML telemetry the agents sampled, per rank over the job's newest 5 minutes: SM clock "
     "against its maximum, the share\nof the time each throttle reason held the clocks, power "
     "against its limit, temperature, utilisation, ECC\nerrors and XIDs, PCIe and NVLink state "
     "(docs/telemetry.md)."},
    {"fleet", rs_cli_fleet, "[gpus|hosts]", "",
     "GPUs or hosts ranked by how often they were the straggler",
     "Across jobs, from the straggler verdicts the server stored (kept across restarts): per GPU "
     "(or host) the jobs it was in,\nthose where it was the straggler, the mean slowdown, and the "
     "GPU's newest NVML reading. \"The straggler in 4 of\nits 5 jobs\" points at the hardware; "
     "in 1 of 5, at the job (docs/telemetry.md)."},
    {"delete", rs_cli_delete, "JOB", "", "delete everything stored about a job",
     "Deletes the job's records, steps, collectives and verdicts from the server."},
};
const size_t rs_cli_n_commands = sizeof rs_cli_commands / sizeof rs_cli_commands[0];

const struct rs_cli_command *
rs_cli_command_find(const char *name)
{
    for (size_t i = 0; i < rs_cli_n_commands; i++)
        if (strcmp(rs_cli_commands[i].name, name) == 0)
            return &rs_cli_commands[i];
    return NULL;
}

void
rs_cli_command_unknown(const char *name)
{
    const char *names[sizeof rs_cli_commands / sizeof rs_cli_commands[0] + 1];

    for (size_t i = 0; i < rs_cli_n_commands; i++)
        names[i] = rs_cli_commands[i].name;
    names[rs_cli_n_commands] = "help";
    const char *near = rs_suggest(name, names, rs_cli_n_commands + 1);
    if (near)
        fprintf(stderr,
                "rankscope: unknown command '%.64s' — did you mean '%s'? (rankscope "
                "--help lists the commands)\n",
                name, near);
    else
        fprintf(stderr,
                "rankscope: unknown command '%.64s' (rankscope --help lists the commands)\n", name);
}

void
rs_cli_command_list(char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "Commands (rankscope COMMAND --help for each):\n");

    for (size_t i = 0; i < rs_cli_n_commands && n < len; i++) {
        char head[64];
        snprintf(head, sizeof head, "%s %s", rs_cli_commands[i].name, rs_cli_commands[i].args);
        n += (size_t)snprintf(out + n, len - n, "  %-22s %s\n", head, rs_cli_commands[i].summary);
    }
    if (n < len)
        snprintf(out + n, len - n, "\n%s", RS_CLI_EXIT_CODES);
}

void
rs_cli_command_help(const struct rs_cli_command *c, const struct rs_config_spec *spec)
{
    printf("usage: rankscope %s%s%s [options]\n\n%s\n", c->name, *c->args ? " " : "", c->args,
           c->details);
    if (*c->options) {
        printf("\noptions (flag, environment variable, default):\n");
        rs_config_print_options(spec, c->options);
    }
    printf("\nglobal options:\n");
    rs_config_print_options(spec, "server json");
    printf("  %-26s read 'key = value' lines (see rankscope --help)\n\n%s\n", "--config FILE",
           RS_CLI_EXIT_CODES);
}
