#!/usr/bin/env bash
# Authentication and roles (issue 23 §1, docs/security.md), from the outside: a server exposed
# beyond loopback refuses to start without a token file (unless --insecure, which /healthz and
# the start log say); with a token file, REST needs a Bearer token (401 without or with a wrong
# one, 403 naming the role a read token lacks for DELETE), agents' batches need an ingest token
# (kept and resent until one is given), SIGHUP adds and revokes tokens and keeps the old file
# when the new one is bad, the CLI reads its token from a file or the environment (exit 5 when
# refused), imports and deletes leave audit lines, and a client that knows an agent's id can no
# longer pre-claim its sequence numbers (without tokens it still can: shown too).
. "$(dirname "$0")/common.sh"

: >"$WORK/tokens"
chmod 600 "$WORK/tokens"
new_token alice admin
new_token bob read
new_token agent1 ingest
new_token mallory ingest
check "--new-token prints a token and its line; the file keeps only the hash" sh -c "
    grep -qE '^rst_[0-9a-f]{64}$' '$WORK/alice.token' &&
    grep -qE '^alice admin sha256:[0-9a-f]{64}$' '$WORK/tokens' &&
    ! grep -qF \"\$(cat '$WORK/alice.token')\" '$WORK/tokens'"
"$BIN/rankscope-server" --new-token x --role root >"$WORK/role.out" 2>&1
rc=$?
check "--new-token refuses an unknown role (exit 2)" \
    sh -c "[ $rc = 2 ] && grep -q 'read, ingest or admin' '$WORK/role.out'"

# ---- safe default ----------------------------------------------------------------------------
"$BIN/rankscope-server" --data "$WORK/d0" --http 0.0.0.0:0 --listen tcp://127.0.0.1:0 \
    >"$WORK/exposed.log" 2>&1
rc=$?
check "REST on 0.0.0.0 without a token file: refused at start (exit 2), saying what to do" \
    sh -c "[ $rc = 2 ] && grep -q 'RS-AUTH-REQUIRED.*--token-file.*--insecure' '$WORK/exposed.log'"
"$BIN/rankscope-server" --data "$WORK/d0" --http 127.0.0.1:0 --listen tcp://0.0.0.0:0 \
    >"$WORK/exposed2.log" 2>&1
rc=$?
check "agents' listener on 0.0.0.0 without a token file: refused too, no store made" \
    sh -c "[ $rc = 2 ] && grep -q RS-AUTH-REQUIRED '$WORK/exposed2.log' && [ ! -e '$WORK/d0' ]"
start_server_at tcp://0.0.0.0:0 --insecure
check "--insecure: the start line says INSECURE" \
    grep -q 'RS-SERVER-START.*auth insecure (INSECURE' "$WORK/server.log"
check "--insecure: /healthz says so" sh -c "
    curl -sf '$HTTP/healthz' | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"insecure\"] is True and d[\"auth\"] == \"insecure\", d'"
stop "$PID_server"
start_server
check "loopback without a token file (make demo): no auth, /healthz says off" sh -c "
    curl -sf '$HTTP/v1/jobs' >/dev/null &&
    curl -sf '$HTTP/healthz' | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"insecure\"] is False and d[\"auth\"] == \"off\", d'"

# ---- the pre-claim attack without tokens: what remains (docs/security.md) ----------------------
start_agent
VICTIM=$(field "$WORK/agent.ready" agent_id)
for s in $(seq 1 60); do "$TOOLS/rs-nng-send" "$LISTEN" --valid decoy "$s" --agent-id "$VICTIM"; done \
    >"$WORK/preclaim0.out" 2>&1
"$BIN/rankscope-sim" --job open --ranks 2 --steps 30 --speed 0 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/open.json"
sleep 1.5
stop "$PID_agent"
check "without tokens, a client that knows the agent id still pre-claims its batches (all lost)" \
    sh -c "[ \"\$(grep -c '^status=1' '$WORK/preclaim0.out')\" = 60 ] &&
    ! curl -sf '$HTTP/v1/jobs/open/ranks' >/dev/null &&
    grep -qE 'RS-AGENT-EXIT.* acked 0 duplicate [1-9]' '$WORK/agent.log'"
mv "$WORK/agent.log" "$WORK/agent-open.log"
stop "$PID_server"
rm -rf "$WORK/spool"

# ---- the token file's own checks ---------------------------------------------------------------
cp "$WORK/tokens" "$WORK/tokens.loose"
chmod 666 "$WORK/tokens.loose"
"$BIN/rankscope-server" --data "$WORK/d1" --http 127.0.0.1:0 --listen tcp://127.0.0.1:0 \
    --token-file "$WORK/tokens.loose" >"$WORK/loose.log" 2>&1
rc=$?
check "a token file others may write is refused (like ssh), naming its mode" \
    sh -c "[ $rc = 2 ] && grep -q 'tokens.loose has mode 0666' '$WORK/loose.log'"
{ cat "$WORK/tokens"; echo "eve superuser sha256:00"; } >"$WORK/tokens.bad"
chmod 600 "$WORK/tokens.bad"
"$BIN/rankscope-server" --data "$WORK/d1" --http 127.0.0.1:0 --listen tcp://127.0.0.1:0 \
    --token-file "$WORK/tokens.bad" >"$WORK/bad.log" 2>&1
rc=$?
check "a bad line is refused with file:line" \
    sh -c "[ $rc = 2 ] && grep -q 'tokens.bad:5: unknown role' '$WORK/bad.log'"

# ---- REST with tokens --------------------------------------------------------------------------
rm -rf "$WORK/data"
start_server --token-file "$WORK/tokens"
A=$(cat "$WORK/alice.token") B=$(cat "$WORK/bob.token") G=$(cat "$WORK/agent1.token")
export RS_TEST_TOKEN=$A # common.sh's totals
code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
check "no token: 401 with WWW-Authenticate: Bearer and how to get one" sh -c "
    curl -si '$HTTP/v1/jobs' >'$WORK/r401' &&
    head -1 '$WORK/r401' | grep -q ' 401 ' && grep -qi '^WWW-Authenticate: Bearer' '$WORK/r401' &&
    grep -q 'carries none.*--new-token' '$WORK/r401'"
check "a wrong token: 401" \
    [ "$(code -H "Authorization: Bearer rst_${A:4:20}0000000000" "$HTTP/v1/jobs")" = 401 ]
check "another scheme (Basic): 401" \
    [ "$(code -H 'Authorization: Basic YWxpY2U6eA==' "$HTTP/v1/jobs")" = 401 ]
check "a read token reads: 200" [ "$(code -H "Authorization: Bearer $B" "$HTTP/v1/jobs")" = 200 ]
check "/metrics needs a token too" sh -c "
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/metrics')\" = 401 ] &&
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $B' '$HTTP/metrics')\" = 200 ]"
check "/healthz stays open and says auth tokens" sh -c "
    curl -sf '$HTTP/healthz' | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"auth\"] == \"tokens\" and d[\"insecure\"] is False, d'"
check "a read token on DELETE: 403 naming the admin role" sh -c "
    [ \"\$(curl -s -o '$WORK/r403' -w '%{http_code}' -X DELETE -H 'Authorization: Bearer $B' '$HTTP/v1/jobs/x')\" = 403 ] &&
    python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[\"error\"]; assert e[\"role_needed\"] == \"admin\" and e[\"role\"] == \"read\" and \"bob\" in e[\"message\"], e' '$WORK/r403'"
check "an ingest token cannot read" [ "$(code -H "Authorization: Bearer $G" "$HTTP/v1/jobs")" = 403 ]

# ---- agents ------------------------------------------------------------------------------------
start_agent
"$BIN/rankscope-sim" --job nokey --ranks 2 --steps 10 --speed 0 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/nokey.json"
logged "$WORK/agent.log" "RS-AGENT-UNAUTHORIZED.*carries none"
check "an agent without a token: nothing stored, refusals counted on both sides" sh -c "
    ! curl -sf -H 'Authorization: Bearer $B' '$HTTP/v1/jobs' | grep -q nokey &&
    curl -sf '$HTTP/healthz' | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"counters\"][\"batches_unauthorized\"] > 0' &&
    grep -q 'RS-AGENT-UNAUTHORIZED.*carries none' '$WORK/agent.log'"
stop "$PID_agent"
cp "$WORK/bob.token" "$WORK/wrongrole.token"
mv "$WORK/agent.log" "$WORK/agent-none.log"
start_agent --token-file "$WORK/wrongrole.token"
logged "$WORK/agent.log" "RS-AGENT-UNAUTHORIZED.*need the ingest role"
check "an agent with a read token: refused for its role, its spooled batches kept" sh -c "
    grep -q \"RS-AGENT-UNAUTHORIZED.*need the ingest role; 'bob' has the read role\" '$WORK/agent.log' &&
    ls '$WORK/spool' | grep -q ."
stop "$PID_agent"
chmod 644 "$WORK/agent1.token"
"$BIN/rankscope-agent" --server "$LISTEN" --socket "$WORK/x.sock" --token-file "$WORK/agent1.token" \
    >"$WORK/agent-loose.log" 2>&1
rc=$?
check "the agent refuses a token file others may read" \
    sh -c "[ $rc != 0 ] && grep -q 'mode 0644' '$WORK/agent-loose.log'"
chmod 600 "$WORK/agent1.token"
start_agent --token-file "$WORK/agent1.token"
wait_for_records nokey "$WORK/nokey.json"
check "given an ingest token, the agent delivers what it kept while refused (spool resent with the token)" \
    totals_match nokey "$WORK/nokey.json"
# the attack, on a fresh agent (its sequence numbers start at 1; a restarted agent skips to its
# next reserved block): mallory (a valid ingest token of her own) pre-claims the agent's next sequence
# numbers; the agent's batches authenticate as agent1, another principal, so they commit
stop "$PID_agent"
rm -rf "$WORK/spool"
start_agent --token-file "$WORK/agent1.token"
VICTIM=$(field "$WORK/agent.ready" agent_id)
M=$(cat "$WORK/mallory.token")
for s in $(seq 1 60); do
    "$TOOLS/rs-nng-send" "$LISTEN" --valid decoy "$s" --agent-id "$VICTIM" --token "$M"
done >"$WORK/preclaim.out" 2>&1
sim_job keyed 2 30
check "with tokens, the pre-claim attack fails: mallory's batches committed, the agent lost nothing" \
    sh -c "[ \"\$(grep -c '^status=1' '$WORK/preclaim.out')\" = 60 ]"
check "... every record of the agent's job stored" totals_match keyed "$WORK/keyed.json"
check "a batch without a token from the raw tool: status 5 (unauthorized)" \
    sh -c "'$TOOLS/rs-nng-send' '$LISTEN' --valid raw 1 | grep -q '^status=5 seq=1 error=unauthorized'"

# ---- CLI ---------------------------------------------------------------------------------------
"$BIN/rankscope" --server "$HTTP" jobs >"$WORK/cli0.out" 2>&1
rc=$?
check "CLI without a token: exit 5, the server's message and where the CLI reads tokens" sh -c "
    [ $rc = 5 ] && grep -q 'carries none' '$WORK/cli0.out' && grep -q RANKSCOPE_CLI_TOKEN_FILE '$WORK/cli0.out'"
check "CLI with --token-file" \
    sh -c "'$BIN/rankscope' --server '$HTTP' --token-file '$WORK/bob.token' jobs | grep -q keyed"
check "CLI with RANKSCOPE_CLI_TOKEN_FILE" sh -c "
    RANKSCOPE_CLI_TOKEN_FILE='$WORK/bob.token' '$BIN/rankscope' --server '$HTTP' jobs | grep -q keyed"
check "CLI with RANKSCOPE_CLI_TOKEN" \
    sh -c "RANKSCOPE_CLI_TOKEN='$B' '$BIN/rankscope' --server '$HTTP' jobs | grep -q keyed"
RANKSCOPE_CLI_TOKEN=$B "$BIN/rankscope" --server "$HTTP" delete keyed >"$WORK/cli403.out" 2>&1
rc=$?
check "CLI delete with a read token: exit 5 naming the role" \
    sh -c "[ $rc = 5 ] && grep -q 'needs the admin role' '$WORK/cli403.out'"
chmod 644 "$WORK/bob.token"
"$BIN/rankscope" --server "$HTTP" --token-file "$WORK/bob.token" jobs >"$WORK/cli-loose.out" 2>&1
rc=$?
check "CLI refuses a token file others may read (exit 2)" \
    sh -c "[ $rc = 2 ] && grep -q 'mode 0644' '$WORK/cli-loose.out'"
chmod 600 "$WORK/bob.token"
FIX=$ROOT/tests/fixtures/kineto-h200x2
RANKSCOPE_CLI_TOKEN=$B "$BIN/rankscope" --server "$HTTP" import "$FIX"/fixture_baseline_rank0.json.gz \
    --job imp >"$WORK/imp-read.out" 2>&1
rc=$?
check "import with a read token: exit 5" \
    sh -c "[ $rc = 5 ] && grep -q 'ingest role' '$WORK/imp-read.out'"
"$BIN/rankscope" --server "$HTTP" --token-file "$WORK/agent1.token" import \
    "$FIX"/fixture_baseline_rank0.json.gz --job imp >"$WORK/imp.out" 2>&1
check "import with an ingest token: committed, with an audit line (who, job, ranks, bytes, from)" sh -c "
    grep -q 'batches committed' '$WORK/imp.out' &&
    grep -qE 'RS-AUDIT who=agent1 role=ingest from=127.0.0.1:[0-9]+ action=import job=imp batch_seq=1 ranks=1 bytes=[0-9]+ result=committed' '$WORK/server.log'"
check "delete with an admin token: done, with an audit line" sh -c "
    RANKSCOPE_CLI_TOKEN='$A' '$BIN/rankscope' --server '$HTTP' delete imp >/dev/null &&
    grep -qE 'RS-AUDIT who=alice role=admin from=127.0.0.1:[0-9]+ action=delete job=imp entries=[1-9][0-9]* result=deleted' '$WORK/server.log'"

# ---- SIGHUP ------------------------------------------------------------------------------------
new_token carol read
C=$(cat "$WORK/carol.token")
grep -v '^bob ' "$WORK/tokens" >"$WORK/tokens.new" && cat "$WORK/tokens.new" >"$WORK/tokens"
check "before SIGHUP a token added to the file is unknown, a removed one still works" sh -c "
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $C' '$HTTP/v1/jobs')\" = 401 ] &&
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $B' '$HTTP/v1/jobs')\" = 200 ]"
kill -HUP "$PID_server"
sleep 0.3
check "SIGHUP adds carol" [ "$(code -H "Authorization: Bearer $C" "$HTTP/v1/jobs")" = 200 ]
check "SIGHUP revokes bob" [ "$(code -H "Authorization: Bearer $B" "$HTTP/v1/jobs")" = 401 ]
echo "broken line" >>"$WORK/tokens"
kill -HUP "$PID_server"
sleep 0.3
check "a bad file on SIGHUP keeps the tokens loaded before, and says why with file:line" sh -c "
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $C' '$HTTP/v1/jobs')\" = 200 ] &&
    grep -q 'RS-AUTH-RELOAD SIGHUP: .*tokens:[0-9]*: expected NAME ROLE sha256:HEX.*keeping the' '$WORK/server.log'"
check "the server still takes the agent's batches after the reloads" sh -c "
    '$BIN/rankscope-sim' --job after --ranks 1 --steps 5 --speed 0 --agent '$WORK/agent.sock' --log-level warn >'$WORK/after.json' &&
    for _ in \$(seq 50); do
        RANKSCOPE_CLI_TOKEN='$C' '$BIN/rankscope' --server '$HTTP' jobs | grep -q after && exit 0
        sleep 0.2
    done; exit 1"
stop "$PID_agent"
check "the agent's batches (sequence numbers 1..60 pre-claimed by mallory) were never duplicates" \
    grep -qE 'RS-AGENT-EXIT.* acked ([1-9]|[1-5][0-9]) duplicate 0 ' "$WORK/agent.log"
finish
