/* rankscope-sim: emulates the ranks of a data-parallel training job through the same collector
 * API a real collector uses (node-agent/collector_client.h), paced in real time by default. Prints
 * a JSON summary of what it sent on stdout. */
#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/log.h"
#include "node-agent/capture_run.h"
#include "node-agent/collector_client.h"
#include "proto/in_flight.h"
#include "sim/model.h"
#include "sim/nvml_script.h"
#include "sim/profile.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_NS (10 * 1000000000ull) /* a progress line on stderr this often */

struct sim_config {
    char *job, *agent, *log_level, *nvml_script;
    int64_t ranks, steps, slow_rank, onset_step, recover_step, host_stall, seed, kernel_split;
    int64_t hang_rank;
    bool pc_sampling, no_step_markers, buckets_after, nccl_plugin, kernels_in_captures, hang_busy;
    double step_ms, slowdown, stall_ms, noise, speed, duration_s, max_rate, hang_s, launch_gap_us;
};

#define OPT(...) RS_CONFIG_OPT(struct sim_config, __VA_ARGS__)

static const struct rs_config_option options[] = {
    OPT("job", RS_CONFIG_STRING, "sim", job, "job name (letters, digits, ._:@+=-)", 0, 0),
    OPT("agent", RS_CONFIG_STRING, "/run/rankscope/agent.sock", agent,
        "rankscope-agent socket to send to", 0, 0),
    OPT("ranks", RS_CONFIG_INT, "16", ranks, "ranks (GPUs) in the job", 1, 65536),
    OPT("steps", RS_CONFIG_INT, "200", steps, "training steps to run (see --duration-s)", 1,
        100000000),
    OPT("duration-s", RS_CONFIG_DOUBLE, "0", duration_s,
        "run this long instead of --steps (0 = use --steps)", 0, 1e7),
    OPT("step-ms", RS_CONFIG_DOUBLE, "34", step_ms,
        "step time without faults (the traced H200 step is ~34 ms)", 0.1, 1e6),
    OPT("noise", RS_CONFIG_DOUBLE, "0.01", noise, "relative spread of kernel durations", 0, 1),
    OPT("kernel-split", RS_CONFIG_INT, "1", kernel_split,
        "launch each compute kernel as N back-to-back kernels of 1/N its time (the template has "
        "51 compute kernels per step; 20 gives 1,020)",
        1, 1000),
    OPT("launch-gap-us", RS_CONFIG_DOUBLE, "0", launch_gap_us,
        "GPU idle before each kernel, copy or memset: the host's launch pace (a launch-bound job; "
        "0 = the trace's median, 1.7 us)",
        0, 1e6),
    OPT("slow-rank", RS_CONFIG_INT, "-1", slow_rank, "rank whose GPU is slow (-1 = none)", -1,
        65535),
    OPT("slowdown", RS_CONFIG_DOUBLE, "0.1", slowdown,
        "how much slower the slow rank's kernels run (0.1 = 10%)", 0, 100),
    OPT("host-stall", RS_CONFIG_INT, "-1", host_stall,
        "rank whose host starts each step late (-1 = none)", -1, 65535),
    OPT("stall-ms", RS_CONFIG_DOUBLE, "5", stall_ms, "host stall per step, ms", 0, 1e6),
    OPT("onset-step", RS_CONFIG_INT, "0", onset_step, "first step with the fault", 0, 100000000),
    OPT("recover-step", RS_CONFIG_INT, "0", recover_step,
        "first step without the fault again (0 = it stays)", 0, 100000000),
    OPT("no-step-markers", RS_CONFIG_BOOL, "false", no_step_markers,
        "send no step records, as a job without NVTX step ranges (the server infers steps)", 0, 0),
    OPT("buckets-after", RS_CONFIG_BOOL, "false", buckets_after,
        "launch the AllReduce buckets back to back after the backward pass (default: each as its "
        "layer's gradients are ready)",
        0, 0),
    OPT("pc-sampling", RS_CONFIG_BOOL, "false", pc_sampling,
        "also send synthetic PC-sampling stall counts (see sim/stalls.h)", 0, 0),
    OPT("nccl-plugin", RS_CONFIG_BOOL, "false", nccl_plugin,
        "send collectives as the NCCL profiler plugin does: NCCL's exact sequence numbers", 0, 0),
    OPT("kernels-in-captures", RS_CONFIG_BOOL, "false", kernels_in_captures,
        "send kernel and copy records only while a capture runs on the rank (as a collector "
        "tracing kernels in rare windows); steps and collectives always",
        0, 0),
    OPT("hang-rank", RS_CONFIG_INT, "-1", hang_rank,
        "rank that never arrives at the first AllReduce of --onset-step: the job hangs there, "
        "the other ranks report it in flight for --hang-s wall seconds, then it completes and the "
        "run ends (-1 = none)",
        -1, 65535),
    OPT("hang-s", RS_CONFIG_DOUBLE, "10", hang_s, "how long the hang lasts, wall seconds", 0.5,
        86400),
    OPT("hang-busy", RS_CONFIG_BOOL, "false", hang_busy,
        "the --hang-rank keeps its GPU busy meanwhile (a kernel of 5 ms after another on its "
        "compute stream: late with other work, not stuck); without it, its GPU runs nothing",
        0, 0),
    OPT("seed", RS_CONFIG_INT, "1", seed, "random seed (runs are deterministic per seed)", 0,
        (double)INT64_MAX),
    OPT("speed", RS_CONFIG_DOUBLE, "1", speed,
        "simulated seconds per wall second (0 = as fast as possible)", 0, 1e6),
    OPT("max-rate", RS_CONFIG_DOUBLE, "0", max_rate,
        "send at most this many records per wall second (0 = no limit; the agent's socket drops "
        "what it cannot take)",
        0, 1e9),
    OPT("log-level", RS_CONFIG_STRING, "info", log_level, "error, warn, info or debug", 0, 0),
    OPT("nvml-script", RS_CONFIG_STRING, "", nvml_script,
        "write this job's GPUs (the slow rank's power-capped) as a script for the stand-in NVML "
        "(tests/tools/fake_nvml.c) to this file and exit; an agent loading that NVML then sends "
        "their telemetry",
        0, 0),
};

static const struct rs_config_spec spec = {
    "rankscope-sim",
    "rankscope-sim --job NAME --ranks N --steps S [--step-ms T] [--slow-rank R --slowdown F "
    "--onset-step K] [--recover-step K] [--host-stall R --stall-ms X] [--seed N] --agent PATH",
    "Simulates the ranks of a data-parallel PyTorch job (kernel names and durations from real\n"
    "H200 traces; AllReduce kernels wait for the slowest rank) and sends their records to a\n"
    "rankscope-agent, one collector connection per rank. Prints a JSON summary on stdout.\n"
    "Exits 3 when records were dropped (no agent listening, or it could not keep up): the\n"
    "summary's dropped_records says how many, the log says why.",
    options,
    sizeof options / sizeof options[0],
    false,
    "RANKSCOPE_SIM_",
};

/* One rank's capture (node-agent/capture_run.h): what runs now. */
struct sim_capture {
    struct rs_capture_run run;
    struct sim_run *sim;
    bool kernels, stalls;
};

struct sim_run {
    rs_collector **collectors;
    struct sim_capture *captures; /* per rank */
    bool kernels_in_captures, pc_sampling;
    sim_model *model;
    uint32_t *name_ids; /* template op index -> collector name id, per rank */
    bool no_step_markers;
};

static uint32_t
name_id(rs_collector *c, const char *name)
{
    return rs_collector_name(c, name);
}

static void
sink_kernel(void *arg, uint32_t rank, const char *name, const struct rs_kernel_record *k)
{
    struct sim_run *run = arg;
    struct rs_kernel_record rec = *k;

    if (run->kernels_in_captures && !run->captures[rank].kernels)
        return; /* not traced now */
    rec.name_id = name_id(run->collectors[rank], name);
    rs_collector_add_kernel(run->collectors[rank], &rec);
}

static void
sink_memcpy(void *arg, uint32_t rank, const struct rs_memcpy_record *m)
{
    struct sim_run *run = arg;
    if (!run->kernels_in_captures || run->captures[rank].kernels)
        rs_collector_add_memcpy(run->collectors[rank], m);
}

static void
sink_collective(void *arg, uint32_t rank, const char *name, const struct rs_collective_record *c)
{
    struct sim_run *run = arg;
    struct rs_collective_record rec = *c;

    rec.name_id = name_id(run->collectors[rank], name);
    rs_collector_add_collective(run->collectors[rank], &rec);
}

static void
emit_stall(void *arg, uint32_t rank, const char *kernel, const char *reason, uint64_t pc,
           uint64_t count)
{
    struct sim_run *run = arg;
    struct rs_stall_record rec = {pc, count, name_id(run->collectors[rank], kernel),
                                  name_id(run->collectors[rank], reason), 0x5133c0deu};
    rs_collector_add_stall(run->collectors[rank], &rec);
}

static void
drop_stall(void *arg, uint32_t rank, const char *kernel, const char *reason, uint64_t pc,
           uint64_t count)
{
}

/* A capture starts on a rank: kernels are always there to trace; stall counts when the model
 * samples (--pc-sampling, or turned on now for the captured ranks). */
static int
capture_start(void *arg, uint32_t kinds, uint32_t seconds, uint32_t *ran, char *why, size_t len)
{
    struct sim_capture *c = arg;

    *ran = 0;
    if (kinds & RS_CAPTURE_KERNELS) {
        c->kernels = true;
        *ran |= RS_CAPTURE_KERNELS;
    }
    if (kinds & RS_CAPTURE_PC_SAMPLING) {
        if (sim_model_enable_stalls(c->sim->model) == 0) {
            c->stalls = true;
            *ran |= RS_CAPTURE_PC_SAMPLING;
        } else
            snprintf(why, len, "out of memory for stall counts");
    }
    return *ran ? 0 : -1;
}

static void
capture_stop(void *arg, uint32_t ran)
{
    struct sim_capture *c = arg;
    c->kernels = c->stalls = false;
}

/* Before rank r's flush: its capture moves on, and its stall counts go when it samples. */
static void
rank_before_flush(struct sim_run *run, uint32_t r)
{
    struct sim_capture *c = &run->captures[r];

    rs_capture_run_tick(&c->run, run->collectors[r], rs_clock_mono_ns(), rs_clock_realtime_ns());
    sim_model_emit_stalls(run->model, r, run->pc_sampling || c->stalls ? emit_stall : drop_stall,
                          run);
}

static void
sink_step(void *arg, uint32_t rank, const struct rs_step_record *s)
{
    struct sim_run *run = arg;
    if (!run->no_step_markers)
        rs_collector_add_step(run->collectors[rank], s);
}

/* --hang-busy: the hung rank's GPU ran kernels back to back over [from_ns, to_ns). */
static void
hang_busy_kernels(struct sim_run *run, uint32_t rank, uint64_t from_ns, uint64_t to_ns)
{
    for (uint64_t t = from_ns; t + 5000000u <= to_ns; t += 5000000u) {
        struct rs_kernel_record k = {t, t + 5000000u - 2000u, 0, 7, rank, 0};
        sink_kernel(run, rank, "hang_busy_elementwise_kernel", &k);
    }
}

/* --hang-rank: every other rank waits in the AllReduce the hung rank never reaches, and says so
 * as the collector's NCCL profiler plugin does (the in-flight condition, convert.h) at each flush
 * for `hang_s` wall seconds; then the operation completes (the conditions clear). */
static void
simulate_hang(const struct sim_config *cfg, struct sim_run *run, sim_model *m, uint64_t comm_hash)
{
    uint64_t since = rs_clock_realtime_ns(),
             until = rs_clock_mono_ns() + (uint64_t)(cfg->hang_s * 1e9);
    uint32_t n = (uint32_t)cfg->ranks;
    char text[200];

    rs_log(RS_LOG_INFO, "RS-SIM-HANG", "rank %lld never arrives: the others wait for %.1f s",
           (long long)cfg->hang_rank, cfg->hang_s);
    uint64_t busy_from = since;
    while (rs_clock_mono_ns() < until) {
        uint64_t now = rs_clock_realtime_ns();
        struct rs_clock_pair clock = {now, now};
        if (cfg->hang_busy) {
            hang_busy_kernels(run, (uint32_t)cfg->hang_rank, busy_from, now);
            busy_from = now;
        }
        for (uint32_t r = 0; r < n; r++) {
            if ((int64_t)r != cfg->hang_rank) {
                struct rs_in_flight f = {comm_hash,
                                         sim_model_next_seq(m, r),
                                         since / 1000000u,
                                         (now - since) / 1000000u,
                                         r,
                                         n,
                                         "AllReduce",
                                         true};
                rs_in_flight_format(&f, text, sizeof text);
                rs_collector_set_status(run->collectors[r], RS_COLLECTOR_IN_FLIGHT, text);
            }
            rank_before_flush(run, r);
            rs_collector_flush(run->collectors[r], &clock);
        }
        rs_clock_sleep_ns(250000000ull);
    }
    uint64_t now = rs_clock_realtime_ns();
    struct rs_clock_pair clock = {now, now};
    for (uint32_t r = 0; r < n; r++) {
        rs_collector_set_status(run->collectors[r], 0, "");
        rs_collector_flush(run->collectors[r], &clock);
    }
    rs_log(RS_LOG_INFO, "RS-SIM-HANG", "the AllReduce completed");
}

static int
run_sim(const struct sim_config *cfg)
{
    struct sim_params p = {.ranks = (uint32_t)cfg->ranks,
                           .step_ms = cfg->step_ms,
                           .noise = cfg->noise,
                           .slow_rank = cfg->slow_rank,
                           .slowdown = cfg->slowdown,
                           .stall_rank = cfg->host_stall,
                           .stall_ms = cfg->stall_ms,
                           .onset_step = (uint64_t)cfg->onset_step,
                           .seed = (uint64_t)cfg->seed,
                           .recover_step = (uint64_t)cfg->recover_step,
                           .kernel_split = (uint32_t)cfg->kernel_split,
                           .launch_gap_us = cfg->launch_gap_us,
                           .buckets_after = cfg->buckets_after,
                           .nccl_plugin = cfg->nccl_plugin};
    struct sim_run run = {0};
    struct sim_sink sink = {&run, sink_kernel, sink_memcpy, sink_collective, sink_step};
    struct rs_collector_options copts = {cfg->agent, 0};
    struct rs_collector_stats total = {0};
    uint64_t start_ns = rs_clock_realtime_ns(), wall0 = rs_clock_mono_ns(), end_ns = start_ns;
    uint64_t onset_ns = 0;
    uint64_t last_progress = wall0;
    uint64_t steps = (uint64_t)cfg->steps;
    uint64_t flush_every = cfg->step_ms >= 250 ? 1 : (uint64_t)(250.0 / cfg->step_ms);
    char comm[256], host[64], uuid[64];
    sim_model *m = NULL;
    int rc;

    if (cfg->duration_s > 0)
        steps = (uint64_t)(cfg->duration_s * 1000.0 / cfg->step_ms) + 1;
    snprintf(comm, sizeof comm, "%s:default_pg", cfg->job);
    p.comm_hash = rs_hash_fnv1a64(comm, strlen(comm));
    run.no_step_markers = cfg->no_step_markers;
    run.kernels_in_captures = cfg->kernels_in_captures;
    run.pc_sampling = cfg->pc_sampling;
    if (!(run.collectors = calloc(p.ranks, sizeof *run.collectors)) ||
        !(run.captures = calloc(p.ranks, sizeof *run.captures))) {
        free(run.collectors);
        return 1;
    }
    for (uint32_t r = 0; r < p.ranks; r++) {
        snprintf(host, sizeof host, "sim-node-%03u", r / 8);
        rs_sim_gpu_uuid(uuid, sizeof uuid, (uint64_t)cfg->seed, r);
        struct rs_rank_identity id = {cfg->job, r, r % 8, p.ranks, host, uuid, (uint32_t)getpid()};
        struct rs_capture_ops ops = {capture_start, capture_stop, &run.captures[r], NULL};
        run.captures[r].sim = &run;
        rs_capture_run_init(&run.captures[r].run, cfg->job, r, &ops);
        if ((rc = rs_collector_open(&copts, &id, &run.collectors[r])) != 0) {
            rs_log(RS_LOG_ERROR, "RS-SIM-OPEN", "cannot create collector for rank %u: %s", r,
                   rs_strerror(rc));
            goto out;
        }
    }
    if ((rc = sim_model_new(&p, start_ns, &m)) != 0 ||
        (cfg->pc_sampling && (rc = sim_model_enable_stalls(m)) != 0))
        goto out;
    run.model = m;
    rs_log(RS_LOG_INFO, "RS-SIM-START", "job %s: %u ranks, %llu steps of ~%.1f ms -> %s", cfg->job,
           p.ranks, (unsigned long long)steps, cfg->step_ms, cfg->agent);
    for (uint64_t s = 0; s < steps; s++) {
        if (s == (uint64_t)cfg->onset_step)
            onset_ns = end_ns; /* the fault's step starts where the previous one ended */
        if (cfg->hang_rank >= 0 && s == (uint64_t)cfg->onset_step) {
            simulate_hang(cfg, &run, m, p.comm_hash);
            steps = s;
            break;
        }
        end_ns = sim_model_step(m, s, &sink);
        if ((s + 1) % flush_every != 0 && s + 1 != steps)
            continue;
        if (cfg->max_rate > 0) { /* the rate an agent can take, for big jobs simulated fast */
            struct rs_collector_stats st;
            uint64_t sent = 0;
            for (uint32_t r = 0; r < p.ranks; r++) {
                rs_collector_get_stats(run.collectors[r], &st);
                sent += st.kernels + st.memcpys + st.syncs + st.collectives + st.steps + st.stalls;
            }
            uint64_t due = wall0 + (uint64_t)((double)sent / cfg->max_rate * 1e9);
            uint64_t now = rs_clock_mono_ns();
            if (due > now)
                rs_clock_sleep_ns(due - now);
        }
        if (cfg->speed > 0) { /* pace: records leave when their step has happened */
            uint64_t due = wall0 + (uint64_t)((double)(end_ns - start_ns) / cfg->speed);
            uint64_t now = rs_clock_mono_ns();
            if (due > now)
                rs_clock_sleep_ns(due - now);
        }
        struct rs_clock_pair clock = {rs_clock_realtime_ns(), rs_clock_realtime_ns()};
        for (uint32_t r = 0; r < p.ranks; r++) {
            rank_before_flush(&run, r);
            rs_collector_flush(run.collectors[r], &clock);
        }
        if (rs_clock_mono_ns() - last_progress >= PROGRESS_NS) {
            last_progress = rs_clock_mono_ns();
            rs_log(RS_LOG_INFO, "RS-SIM-PROGRESS", "step %llu of %llu (%.0f%%)",
                   (unsigned long long)s + 1, (unsigned long long)steps,
                   100.0 * (double)(s + 1) / (double)steps);
        }
    }
    uint64_t cap_started = 0, cap_done = 0, cap_failed = 0;
    for (uint32_t r = 0; r < p.ranks; r++) { /* captures still running end with the run */
        struct rs_clock_pair clock = {rs_clock_realtime_ns(), rs_clock_realtime_ns()};
        rs_capture_run_finish(&run.captures[r].run, run.collectors[r], clock.realtime_ns);
        rs_collector_flush(run.collectors[r], &clock);
        cap_started += run.captures[r].run.started;
        cap_done += run.captures[r].run.done;
        cap_failed += run.captures[r].run.failed;
    }
    for (uint32_t r = 0; r < p.ranks; r++) {
        struct rs_collector_stats st;
        rs_collector_get_stats(run.collectors[r], &st);
        total.kernels += st.kernels;
        total.memcpys += st.memcpys;
        total.syncs += st.syncs;
        total.collectives += st.collectives;
        total.steps += st.steps;
        total.stalls += st.stalls;
        total.dropped += st.dropped;
        total.frames_sent += st.frames_sent;
        total.frames_dropped += st.frames_dropped;
        total.connects += st.connects;
    }
    printf("{\"job\":\"%s\",\"ranks\":%u,\"steps\":%llu,\"sim_seconds\":%.3f,\"start_ns\":%llu,"
           "\"onset_ns\":%llu,"
           "\"sent\":{\"kernels\":%llu,\"memcpys\":%llu,\"syncs\":%llu,\"collectives\":%llu,"
           "\"steps\":%llu,\"stalls\":%llu},"
           "\"dropped_records\":%llu,\"frames_sent\":%llu,\"frames_dropped\":%llu,"
           "\"captures\":{\"started\":%llu,\"done\":%llu,\"failed\":%llu}}\n",
           cfg->job, p.ranks, (unsigned long long)steps, (double)(end_ns - start_ns) / 1e9,
           (unsigned long long)start_ns, (unsigned long long)onset_ns,
           (unsigned long long)total.kernels, (unsigned long long)total.memcpys,
           (unsigned long long)total.syncs, (unsigned long long)total.collectives,
           (unsigned long long)total.steps, (unsigned long long)total.stalls,
           (unsigned long long)total.dropped, (unsigned long long)total.frames_sent,
           (unsigned long long)total.frames_dropped, (unsigned long long)cap_started,
           (unsigned long long)cap_done, (unsigned long long)cap_failed);
    fflush(stdout);
    if (total.dropped) {
        /* nothing, or not all, reached the agent: a run to check against a server is void, and a
         * script must not go on as if it were not (exit 3, after the summary above) */
        uint64_t sent = total.kernels + total.memcpys + total.syncs + total.collectives +
                        total.steps + total.stalls;
        const char *why =
            total.connects == 0    ? "no rankscope-agent was listening there (never connected)"
            : total.frames_dropped ? "the agent's socket was full or closed (is the agent running? "
                                     "--max-rate slows the simulator down)"
                                   : "the collector's buffer overflowed between flushes";
        rs_log(RS_LOG_ERROR, "RS-SIM-DROPPED",
               "%llu of %llu records dropped (%llu of %llu frames not delivered to %s): %s",
               (unsigned long long)total.dropped, (unsigned long long)(sent + total.dropped),
               (unsigned long long)total.frames_dropped,
               (unsigned long long)(total.frames_sent + total.frames_dropped), cfg->agent, why);
        rc = 3;
        goto out;
    }
    rc = 0;
out:
    sim_model_free(m);
    for (uint32_t r = 0; r < p.ranks; r++)
        rs_collector_free(run.collectors[r]);
    free(run.collectors);
    free(run.captures);
    return rc == 0 || rc == 3 ? rc : 1;
}

/* Checks that the options make sense together; prints why not. */
static bool
options_consistent(const struct sim_config *cfg)
{
    if (!rs_wire_job_valid(cfg->job)) {
        fprintf(stderr,
                "rankscope-sim: --job: '%s' is not a valid job name (letters, digits, "
                "._:@+=-)\n",
                cfg->job);
        return false;
    }
    if (cfg->slow_rank >= cfg->ranks || cfg->host_stall >= cfg->ranks ||
        cfg->hang_rank >= cfg->ranks) {
        fprintf(
            stderr,
            "rankscope-sim: --slow-rank/--host-stall/--hang-rank must be below --ranks (%lld)\n",
            (long long)cfg->ranks);
        return false;
    }
    if (cfg->recover_step && cfg->recover_step <= cfg->onset_step) {
        fprintf(stderr, "rankscope-sim: --recover-step must be after --onset-step (%lld)\n",
                (long long)cfg->onset_step);
        return false;
    }
    return true;
}

static int
run(void *arg)
{
    struct sim_config *cfg = arg;

    if (!options_consistent(cfg))
        return 2;
    if (cfg->nvml_script[0]) {
        int rc = rs_sim_nvml_script_write(cfg->nvml_script, (uint32_t)cfg->ranks,
                                          (uint64_t)cfg->seed, cfg->slow_rank, cfg->slowdown);
        if (rc != 0)
            fprintf(stderr, "rankscope-sim: cannot write %s: %s\n", cfg->nvml_script,
                    rs_strerror(rc));
        return rc == 0 ? 0 : 1;
    }
    return run_sim(cfg);
}

int
main(int argc, char **argv)
{
    struct sim_config cfg = {0};

    return rs_config_run(&spec, &cfg, argc, argv, run);
}
