#!/usr/bin/env bash
# The CLI as a new user meets it: each command has its own --help; a mistyped command or job gets
# "did you mean"; a missing job or rank is named with the command that lists what exists (exit 3);
# times are accepted as people write them (--since 10m, ISO dates, --last) and refused clearly.
. "$(dirname "$0")/common.sh"
RS=("$BIN/rankscope")

# ---- help ----
for c in jobs ranks stragglers steps skew top stalls compare watch analyze import export delete; do
    mkdir -p "$WORK/rc"
    "${RS[@]}" "$c" --help >"$WORK/help.$c" 2>&1
    echo "$?" >"$WORK/rc/$c"
done
check "every command has its own --help (exit 0, usage line, exit codes)" sh -c "
    cd '$WORK' && for f in help.*; do
        c=\${f#help.}
        test \"\$(cat rc/\$c)\" = 0 && head -1 \$f | grep -q \"^usage: rankscope \$c\" &&
        grep -q 'Exit status' \$f || { echo \$c; exit 1; }
    done"
check "top --help lists top's options and not watch's" sh -c "
    grep -q -- '--since TEXT' '$WORK/help.top' && grep -q -- '--rank N' '$WORK/help.top' &&
    ! grep -q -- '--interval-s' '$WORK/help.top' && ! grep -q '^Commands' '$WORK/help.top'"
check "rankscope help top is rankscope top --help" sh -c "
    '$BIN/rankscope' help top | cmp - '$WORK/help.top'"
check "the global help lists every command from the table" sh -c "
    '$BIN/rankscope' --help > '$WORK/global' &&
    for c in jobs ranks stragglers steps skew top stalls compare watch analyze import export delete; do
        grep -q \"^  \$c \" '$WORK/global' || { echo \$c; exit 1; }; done"
check "a mistyped command: exit 2 and did you mean" sh -c "
    '$BIN/rankscope' stragglr x 2>'$WORK/e'; test \$? = 2 && grep -q \"did you mean 'stragglers'\" '$WORK/e'"
check "a command far from any: exit 2, no suggestion, where the list is" sh -c "
    '$BIN/rankscope' frobnicate 2>'$WORK/e'; test \$? = 2 && ! grep -q 'did you mean' '$WORK/e' &&
    grep -q 'rankscope --help lists the commands' '$WORK/e'"
check "--help with an option missing its value at the end is the global help (it crashed)" sh -c "
    '$BIN/rankscope' --help --server | grep -q '^Commands'"
check "help for an unknown command: exit 2 with did you mean" sh -c "
    '$BIN/rankscope' help anlayze 2>'$WORK/e'; test \$? = 2 && grep -q \"did you mean 'analyze'\" '$WORK/e'"

# ---- against a server with one job ----
start_server
start_agent
"$BIN/rankscope-sim" --job llama-7b --ranks 4 --steps 40 --speed 0 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/sim.json"
wait_for_records llama-7b "$WORK/sim.json"
RS=("$BIN/rankscope" --server "$HTTP")

check "an unknown job: exit 3, did you mean, the command that lists jobs" sh -c "
    '$BIN/rankscope' --server '$HTTP' ranks llama-7c 2>'$WORK/e'; test \$? = 3 &&
    grep -q \"no job 'llama-7c'\" '$WORK/e' && grep -q \"did you mean 'llama-7b'\" '$WORK/e' &&
    grep -q 'rankscope jobs lists the jobs' '$WORK/e' && ! grep -q '/v1/' '$WORK/e'"
check "compare --with-rank 99 names the rank, not the job, and how to list ranks" sh -c "
    '$BIN/rankscope' --server '$HTTP' compare llama-7b --rank 0 --with-rank 99 2>'$WORK/e';
    test \$? = 3 && grep -q \"job 'llama-7b' has no rank 99 (its ranks: 0 to 3; rankscope ranks llama-7b lists them)\" '$WORK/e'"
check "compare with an unknown second job names that job" sh -c "
    '$BIN/rankscope' --server '$HTTP' compare llama-7b nope 2>'$WORK/e'; test \$? = 3 &&
    grep -q \"no job 'nope'\" '$WORK/e'"
check "the API's own message tells a missing rank from a missing job" sh -c "
    curl -s '$HTTP/v1/jobs/llama-7b/top?rank=99' | grep -q \"job 'llama-7b' has no rank 99\" &&
    curl -s '$HTTP/v1/jobs/nope/top?rank=1' | grep -q \"job 'nope' not found\""

check "--since 10m and --last 1h keep the job's records (it ran just now)" sh -c "
    '$BIN/rankscope' --server '$HTTP' top llama-7b --since 10m | grep -q 'ms' &&
    '$BIN/rankscope' --server '$HTTP' top llama-7b --last 1h --json | grep -q '\"kernels\"'"
check "--since 2000-01-01 --until 2000-01-02 finds nothing in that window" sh -c "
    '$BIN/rankscope' --server '$HTTP' top llama-7b --json --since 2000-01-01 \
        --until 2000-01-02T00:00Z | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"kernels\"] == []'"
check "--since with an ISO time is the same as --since-ns" sh -c "
    a=\$('$BIN/rankscope' --server '$HTTP' top llama-7b --json --since 2020-01-01T00:00Z | md5sum)
    b=\$('$BIN/rankscope' --server '$HTTP' top llama-7b --json --since-ns 1577836800000000000 | md5sum)
    test \"\$a\" = \"\$b\""
check "a bad time is refused with the forms it takes (exit 2)" sh -c "
    '$BIN/rankscope' --server '$HTTP' top llama-7b --since soon 2>'$WORK/e'; test \$? = 2 &&
    grep -q \"'soon' is not a time\" '$WORK/e' && grep -q '2026-11-24T08:00Z' '$WORK/e'"
check "--since and --since-ns together are refused (exit 2)" sh -c "
    '$BIN/rankscope' --server '$HTTP' top llama-7b --since 10m --since-ns 5 2>'$WORK/e'
    test \$? = 2 && grep -q 'give one' '$WORK/e'"
check "--last and --since together are refused (exit 2)" sh -c "
    '$BIN/rankscope' --server '$HTTP' top llama-7b --since 10m --last 5m 2>'$WORK/e'
    test \$? = 2 && grep -q 'give one' '$WORK/e'"
check "an option the command does not use is refused, not ignored (exit 2)" sh -c "
    '$BIN/rankscope' --server '$HTTP' skew llama-7b --last 1s 2>'$WORK/e'; test \$? = 2 &&
    grep -q \"does not apply to 'skew'\" '$WORK/e' &&
    '$BIN/rankscope' --server '$HTTP' stragglers llama-7b --until 5 2>/dev/null; test \$? = 2"
check "options for other commands in the environment are left alone" sh -c "
    RANKSCOPE_CLI_SINCE=10m '$BIN/rankscope' --server '$HTTP' jobs >/dev/null"
check "an empty time range and --limit 0 are usage errors (exit 2)" sh -c "
    '$BIN/rankscope' --server '$HTTP' top llama-7b --since 1h --until 2h 2>'$WORK/e'; test \$? = 2 &&
    grep -q 'time range is empty' '$WORK/e' &&
    '$BIN/rankscope' --server '$HTTP' top llama-7b --limit 0 2>/dev/null; test \$? = 2"
check "a name the API refuses is not a job name, said before asking the server (exit 2)" sh -c "
    '$BIN/rankscope' --server http://127.0.0.1:1 ranks \$(printf 'a\\033b') 2>'$WORK/e'; test \$? = 2 &&
    grep -q 'is not a job name' '$WORK/e' && ! grep -q \$(printf '\\033') '$WORK/e'"
finish
