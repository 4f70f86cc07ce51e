#!/usr/bin/env bash
# The tools people point at rankscope accept it: promtool check metrics (Prometheus's linter) the
# live /metrics of a server holding a straggler verdict, Redocly CLI's recommended rules
# (redocly.yaml) docs/openapi.yaml; then what they leave out: families' grouping, seconds' scale,
# docs/operations.md's table. A missing linter fails: make test installs both (promtool: Debian's
# prometheus; Redocly CLI: tests/tools/lint-tools.sh).
. "$(dirname "$0")/common.sh"
LINT=$ROOT/tests/tools/lint
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true

redocly_installed() {
    if [ ! -x "$LINT/node_modules/.bin/redocly" ]; then
        echo "Redocly CLI is not installed in tests/tools/lint: make test installs it" \
             "(tests/tools/lint-tools.sh: npm ci, needs Node.js and npm)"
        return 1
    fi
    if ! cmp -s "$LINT/package-lock.json" "$LINT/node_modules/.rankscope-lock.json"; then
        echo "tests/tools/lint/node_modules is not what package-lock.json pins: make test" \
             "installs it again (tests/tools/lint-tools.sh)"
        return 1
    fi
}

# redocly_clean FILE: Redocly's recommended rules, with redocly.yaml, find no error and no
# warning (warnings, such as a missing operationId, would not fail redocly lint itself).
redocly_clean() {
    HOME="$WORK" "$LINT/node_modules/.bin/redocly" lint --config redocly.yaml --lint-config error \
        --format json "$1" >"$WORK/redocly.json" 2>"$WORK/redocly.err" || true
    python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit("redocly lint gave no report: " + open(sys.argv[2]).read()[-2000:])
for p in d["problems"]:
    where = ", ".join(l.get("pointer", "?") for l in p.get("location", []))
    print("%s %s: %s (%s)" % (p["severity"], p["ruleId"], p["message"], where))
t = d["totals"]
assert t["errors"] == 0 and t["warnings"] == 0, t' "$WORK/redocly.json" "$WORK/redocly.err"
}

check "Redocly CLI is installed, the version package-lock.json pins" redocly_installed
if [ -x "$LINT/node_modules/.bin/redocly" ]; then
    check "Redocly CLI: docs/openapi.yaml passes the recommended rules (redocly.yaml)" \
        redocly_clean docs/openapi.yaml
fi

# /metrics with data in it: a job whose rank 3 is slow, so the straggler families have series
start_server
start_agent --metrics-file "$WORK/agent.prom" --metrics-s 1
"$BIN/rankscope-sim" --job lint --ranks 4 --steps 100 --step-ms 10 --slow-rank 3 --slowdown 0.15 \
    --onset-step 10 --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json"
curl -s -o /dev/null "$HTTP/v1/jobs/nope/ranks" # one HTTP error counted
for i in $(seq 100); do
    curl -s "$HTTP/metrics" >"$WORK/metrics.txt"
    grep -q '^rankscope_straggler_slowdown{job="lint",rank="3"}' "$WORK/metrics.txt" && break
    sleep 0.1
done
curl -s "$HTTP/healthz" >"$WORK/healthz.json"

check "/metrics holds data: stored kernels and a straggler series" sh -c "
grep -Eq '^rankscope_kernels_stored [1-9]' '$WORK/metrics.txt' &&
grep -q '^rankscope_straggler_slowdown{job=\"lint\",rank=\"3\"}' '$WORK/metrics.txt'"

PATH=$PATH:$ROOT/tests/tools/lint/bin # where lint-tools.sh puts promtool when none is on PATH
promtool_clean() {
    if ! command -v promtool >/dev/null; then
        echo "promtool not found: make test installs it (tests/tools/lint-tools.sh takes it out of"\
             "Debian 12's prometheus package, 2.42)"
        return 1
    fi
    # it prints one line per problem and exits non-zero; any output at all is a problem
    promtool check metrics <"$1" >"$WORK/promtool.out" 2>&1
    local rc=$?
    cat "$WORK/promtool.out"
    [ "$rc" = 0 ] && [ ! -s "$WORK/promtool.out" ]
}
check "promtool check metrics: the live /metrics follows Prometheus's conventions" \
    promtool_clean "$WORK/metrics.txt"

stop "$PID_agent" # its last write, at exit
check "promtool check metrics: the agent's --metrics-file too, with the frames it took" sh -c "
    grep -Eq '^rankscope_agent_frames_total [1-9]' '$WORK/agent.prom' &&
    grep -Eq '^rankscope_agent_batches_acked_total [1-9]' '$WORK/agent.prom'"
check "promtool check metrics: the agent's metrics file follows the conventions" \
    promtool_clean "$WORK/agent.prom"

check "/metrics: each family's lines together, HELP and TYPE before its samples" python3 -c '
import re, sys
seen, current, typed, helped = set(), None, set(), set()
for line in open(sys.argv[1]).read().splitlines():
    m = re.match(r"# (HELP|TYPE) (\w+) ", line) or re.match(r"()(\w+)[{ ]", line)
    assert m, line
    kind, name = m.groups()
    if name != current:
        assert name not in seen, "family %s is split: %s" % (name, line)
        seen.add(name)
        current = name
    if kind == "HELP":
        helped.add(name)
    elif kind == "TYPE":
        typed.add(name)
    else:
        assert name in helped and name in typed, "sample before HELP and TYPE: " + line
assert seen, "no metrics"' "$WORK/metrics.txt"

check "every /metrics family is named in docs/operations.md" python3 -c '
import re, sys
names = set(re.findall(r"^# TYPE (\w+) ", open(sys.argv[1]).read(), re.M))
doc = open("docs/operations.md").read()
missing = sorted(n for n in names if not re.search(r"`%s`" % n, doc))
assert names and not missing, missing' "$WORK/metrics.txt"

check "/metrics: the writer's busy time in seconds, /healthz's in ns" python3 -c '
import json, re, sys
text = open(sys.argv[1]).read()
counters = json.load(open(sys.argv[2]))["counters"]
for what in ("batches", "tasks"):
    s = float(re.search(r"^rankscope_writer_%s_seconds_total (\S+)$" % what, text, re.M).group(1))
    ns = counters["writer_%s_ns" % what]
    print(what, s, "s;", ns, "ns later")
    assert 0 <= s <= ns / 1e9 < 60 and (s > 0 or what == "tasks"), (s, ns)' \
    "$WORK/metrics.txt" "$WORK/healthz.json"
finish
