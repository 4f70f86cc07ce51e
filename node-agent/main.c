/* rankscope-agent: parses configuration and runs the node agent (node-agent/agent.h). */
#include "common/config.h"
#include "node-agent/agent.h"

#include <nng/nng.h>
#include <stddef.h>

#define OPT(...) RS_CONFIG_OPT(struct rs_agent_config, __VA_ARGS__)

static const struct rs_config_option options[] = {
    OPT("server", RS_CONFIG_STRING, "tcp://127.0.0.1:7071", server, "NNG URL of rankscope-server",
        0, 0),
    OPT("token-file", RS_CONFIG_STRING, "", token_file,
        "file whose first line is the token sent with every batch (a token with the ingest role; "
        "mode 0600 or 0640). Needed when the server has a --token-file",
        0, 0),
    OPT("socket", RS_CONFIG_STRING, RS_AGENT_DEFAULT_SOCKET, socket,
        "Unix socket collectors connect to (its directory is created 0755 when missing and must "
        "not be writable by others without the sticky bit)",
        0, 0),
    OPT("allow-uids", RS_CONFIG_STRING, "", allow_uids,
        "accept collectors of these uids only, comma-separated (\"\" = any uid; the kernel "
        "says who connects)",
        0, 0),
    OPT("spool", RS_CONFIG_STRING, "", spool,
        "directory keeping unacknowledged batches across restarts (\"\" = memory only)", 0, 0),
    OPT("ready-file", RS_CONFIG_STRING, "", ready_file,
        "write pid and socket here once accepting collectors", 0, 0),
    OPT("metrics-file", RS_CONFIG_STRING, "", metrics_file,
        "keep the agent's counters in this file, Prometheus text format, rewritten atomically "
        "every --metrics-s and at exit (point node_exporter's textfile collector at its "
        "directory; \"\" = none)",
        0, 0),
    OPT("metrics-s", RS_CONFIG_INT, "5", metrics_s, "how often --metrics-file is rewritten", 1,
        3600),
    OPT("log-level", RS_CONFIG_STRING, "info", log_level, "error, warn, info or debug", 0, 0),
    OPT("flush-ms", RS_CONFIG_INT, "250", flush_ms, "send pending records at least this often", 10,
        60000),
    OPT("window", RS_CONFIG_INT, "4", window, "batches in flight to the server", 1, 64),
    OPT("max-queue-mb", RS_CONFIG_INT, "512", max_queue_mb,
        "unacknowledged batches kept (memory and spool); oldest dropped beyond", 1, 1 << 20),
    OPT("reply-timeout-ms", RS_CONFIG_INT, "10000", reply_timeout_ms,
        "resend a batch whose acknowledgement takes longer", 100, 600000),
    OPT("drain-timeout-ms", RS_CONFIG_INT, "5000", drain_timeout_ms,
        "on SIGTERM, keep delivering for this long", 0, 600000),
    OPT("max-collectors", RS_CONFIG_INT, "4096", max_collectors, "concurrent collector connections",
        1, 1000000),
    OPT("summarize", RS_CONFIG_BOOL, "false", summarize,
        "send per-window totals per kernel name and steps with metrics measured here, not each "
        "launch (large clusters; no per-launch timelines)",
        0, 0),
    OPT("summary-window-s", RS_CONFIG_INT, "5", summary_window_s,
        "window of the totals with --summarize (windows start at multiples of it)", 1, 3600),
    OPT("tls-ca", RS_CONFIG_STRING, "", tls_ca,
        "PEM CA file that signed the server's certificate (needed for a tls+tcp:// --server)", 0,
        0),
    OPT("tls-server-name", RS_CONFIG_STRING, "", tls_server_name,
        "name the server's certificate must carry (\"\" = the host of --server)", 0, 0),
    OPT("tls-cert", RS_CONFIG_STRING, "", tls_cert,
        "PEM certificate this agent presents to a server that asks for one (with --tls-key)", 0,
        0),
    OPT("tls-key", RS_CONFIG_STRING, "", tls_key, "PEM private key of --tls-cert", 0, 0),
    OPT("demangle", RS_CONFIG_BOOL, "true", demangle,
        "make C++ kernel names readable (the collector sends them as CUDA reports them)", 0, 0),
    OPT("gpu-telemetry", RS_CONFIG_BOOL, "true", gpu_telemetry,
        "sample the node's GPUs through NVML (clocks, throttle reasons, power, temperature, "
        "errors, links) and send them to the server; without NVML the agent says so once and goes "
        "on",
        0, 0),
    OPT("nvml-library", RS_CONFIG_STRING, "libnvidia-ml.so.1", nvml_library,
        "the NVML library to load (a name for the dynamic loader, or a path)", 0, 0),
    OPT("gpu-interval-ms", RS_CONFIG_INT, "1000", gpu_interval_ms,
        "read each GPU this often", 10, 3600000),
    OPT("gpu-send-s", RS_CONFIG_INT, "5", gpu_send_s,
        "send the GPU readings held this often (one telemetry batch)", 1, 3600),
    /* captures on demand (issue 25 item 4): orders come in the server's replies */
    OPT("control-poll-ms", RS_CONFIG_INT, "1000", control_poll_ms,
        "with collectors connected and nothing sent this long, send an empty batch so that the "
        "server's reply can carry capture orders (0 = never)",
        0, 600000),
};

static const struct rs_config_spec spec = {
    "rankscope-agent",
    "rankscope-agent [--server tcp://HOST:7071] [--socket PATH] [--spool DIR] [options]",
    "Node agent: accepts rankscope collectors (one per training process) on a Unix socket,\n"
    "merges their records per rank and forwards them to rankscope-server; resends until the\n"
    "server acknowledges; with --spool nothing unacknowledged is lost across restarts.",
    options,
    sizeof options / sizeof options[0],
    false,
    "RANKSCOPE_AGENT_",
};

static int
run(void *cfg)
{
    return rs_agent_run(cfg);
}

int
main(int argc, char **argv)
{
    struct rs_agent_config cfg = {0};
    int rc = rs_config_run(&spec, &cfg, argc, argv, run);

    /* NNG frees closed sockets' contexts on its reaper thread; without this, the request an
     * agent had in flight at exit could still be held there when the process ends, and leak
     * checkers (make asan) report it (seen now and then in tests/integration/030 and 210). */
    nng_fini();
    return rc;
}
