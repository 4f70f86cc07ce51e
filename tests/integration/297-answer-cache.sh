#!/usr/bin/env bash
# Queries at scale (issue 23, the soak): identical REST reads share one scan and a kept answer
# until the data changes; cheap reads have their own lane. From the outside, with
# --fault-query-delay-ms (tests only: every query spends that long after its scans) standing in
# for a scan of 10,000 ranks and one query thread:
# - 4 clients asking the same view at once: one scan (the answer cache's counters), the same
#   body and ETag for all, in about one scan's time, not four;
# - asked again with nothing changed: answered from the cache at once, and If-None-Match still
#   gives 304; new data of another job leaves it kept (answers are kept per job); once the job's
#   own new data is committed the next answer is a new scan that shows it;
# - /v1/jobs and one rank's view answer while the query thread is taken by 3 queued scans (the
#   light lane); with --query-light-threads 0 they wait behind them (the check can fail);
# The evaluator is off (--evaluate-ms 0): its summaries would be commits, i.e. new data. A kept
# answer's age limit (10 s from its scan by default) is set to a minute: the steps from the first
# scan to the "still kept" check take about 9 s of delayed queries and process starts.
# - with tokens, a kept answer never reaches a caller without a valid read token (401), and an
#   answer kept for one role is not served under another role's key.
. "$(dirname "$0")/common.sh"
start_server
start_agent
sim_job cache 4 30
stop "$PID_server"

DELAY=1500
start_server --query-threads 1 --fault-query-delay-ms $DELAY --query-timeout-ms 20000 --evaluate-ms 0 \
    --answer-cache-max-age-ms 60000 --retention-s 0 --raw-retention-s 0
# answers computed within RS_STEP_SETTLE_NS (2 s) of a commit are keyed apart from later ones
# (steps settle); maintenance, whose first pass commits at the start, is off (retention 0), and
# the wait stays for any other commit at the start
sleep 2.5
cat >"$WORK/par.py" <<'PY'
"""par.py URL TOKEN PATH...: GETs each PATH at once (one thread each); prints one JSON line per
request {path, status, ms, etag, body_hash} in the order given."""
import hashlib, http.client, json, sys, threading, time
from urllib.parse import urlparse
u = urlparse(sys.argv[1]); tok = sys.argv[2]; paths = sys.argv[3:]; out = [None] * len(paths)
def get(i, p):
    t0 = time.monotonic()
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    c.request("GET", p, headers={"Authorization": "Bearer " + tok} if tok else {})
    r = c.getresponse(); b = r.read()
    out[i] = {"path": p, "status": r.status, "ms": int((time.monotonic() - t0) * 1000),
              "etag": r.getheader("ETag"), "body": hashlib.sha256(b).hexdigest()[:16]}
ts = [threading.Thread(target=get, args=(i, p)) for i, p in enumerate(paths)]
for i, t in enumerate(ts):
    t.start(); time.sleep(0.02 if i == 0 else 0)
[t.join() for t in ts]
for o in out: print(json.dumps(o))
PY
par() { python3 "$WORK/par.py" "$HTTP" "${TOK:-}" "$@"; }
lookups() { # "hit joined miss" from /metrics
    curl -s "$HTTP/metrics" | python3 -c '
import re, sys
t = sys.stdin.read()
print(*[int(float(re.search(r"answer_cache_lookups_total\{outcome=\"%s\"\} (\S+)" % o, t).group(1))) for o in ("hit", "joined", "miss")])'
}

par /v1/jobs/cache/skew /v1/jobs/cache/skew /v1/jobs/cache/skew /v1/jobs/cache/skew >"$WORK/same.out"
cat "$WORK/same.out"
check "4 clients asking the same view at once: one scan, three joined it" \
    [ "$(lookups)" = "0 3 1" ]
check "... all 200, the same body and the same ETag" python3 -c "
import json
r = [json.loads(l) for l in open('$WORK/same.out')]
assert all(x['status'] == 200 for x in r), r
assert len({x['body'] for x in r}) == 1 and len({x['etag'] for x in r}) == 1, r"
check "... in about one scan's time (< 3 x $DELAY ms each), not four in a row" python3 -c "
import json
r = [json.loads(l) for l in open('$WORK/same.out')]
assert max(x['ms'] for x in r) < 3 * $DELAY, [x['ms'] for x in r]"
par /v1/jobs/cache/skew >"$WORK/again.out"
check "asked again with nothing changed: kept answer, at once (< $DELAY ms), same ETag" python3 -c "
import json
a = json.loads(open('$WORK/again.out').read()); s = json.loads(open('$WORK/same.out').readline())
assert a['status'] == 200 and a['ms'] < $DELAY and a['etag'] == s['etag'] and a['body'] == s['body'], (a, s)"
check "... counted as a hit" [ "$(lookups)" = "1 3 1" ]
etag=$(python3 -c "import json; print(json.loads(open('$WORK/again.out').read())['etag'])")
check "... If-None-Match with its ETag: 304" \
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$HTTP/v1/jobs/cache/skew")" = 304 ]

# a scan's answer compressed on the query's thread (rs_http_json_prepare): the same document
check "gzip asked: the worker's compressed answer is the plain one, ETag -gz, 304 on either tag" sh -c "
    curl -s -D '$WORK/gz.h' -H 'Accept-Encoding: gzip' -o '$WORK/steps.gz' '$HTTP/v1/jobs/cache/steps?last=29' &&
    curl -s -D '$WORK/plain.h' -o '$WORK/steps.json' '$HTTP/v1/jobs/cache/steps?last=29' &&
    grep -qi '^Content-Encoding: gzip' '$WORK/gz.h' && grep -qi '^ETag: \"[0-9a-f]*-gz\"' '$WORK/gz.h' &&
    gzip -dc '$WORK/steps.gz' | cmp - '$WORK/steps.json' &&
    tag=\$(sed -n 's/^[Ee][Tt]ag: *//p' '$WORK/gz.h' | tr -d '\r') &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: gzip' -H \"If-None-Match: \$tag\" '$HTTP/v1/jobs/cache/steps?last=29') = 304 ]"

# new data: the next answer is a new scan that shows it
curl -s "$HTTP/v1/jobs" >/dev/null # the jobs' list kept
stop "$PID_agent"
start_agent # the server's agent port changed with its restart
sim_job cache2 2 5
check "after new data: /v1/jobs answers what the store holds now (no stale answer)" python3 -c "
import json, urllib.request
jobs = json.load(urllib.request.urlopen('$HTTP/v1/jobs'))['jobs']
assert any('cache2' in json.dumps(j) for j in jobs), jobs"
par /v1/jobs/cache/skew >"$WORK/other.out"
check "... another job's data leaves job cache's kept view valid (a hit: answers are kept per job)" python3 -c "
import json
a = json.loads(open('$WORK/other.out').read())
assert a['status'] == 200 and a['ms'] < $DELAY, a"
# new data of job cache itself (ranks 4 and 5 are new), seen once its ranks' steps grew
steps_of() { curl -s "$HTTP/v1/jobs/cache/ranks" | python3 -c 'import json,sys; print(sum(r["steps"] for r in json.load(sys.stdin)["ranks"]))'; }
before=$(steps_of)
"$BIN/rankscope-sim" --job cache --ranks 6 --steps 5 --speed 0 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/cache.more.json"
for _ in $(seq 100); do [ "$(steps_of)" -gt "$before" ] && break; sleep 0.2; done
par /v1/jobs/cache/skew >"$WORK/after.out"
check "... and once job cache's own data changed, its view is scanned again (a miss, not the kept answer)" python3 -c "
import json
a = json.loads(open('$WORK/after.out').read())
assert a['status'] == 200 and a['ms'] >= $DELAY, a"

# the light lane: cheap reads do not queue behind scans of every rank
light_ms() {
    par /v1/jobs/cache/steps /v1/jobs/cache/stragglers /v1/jobs/cache/top /v1/jobs \
        '/v1/jobs/cache/top?rank=1' >"$WORK/lane.out"
    python3 -c "
import json
r = [json.loads(l) for l in open('$WORK/lane.out')]
print(max(r[3]['ms'], r[4]['ms']), min(x['ms'] for x in r[:3]), [x['status'] for x in r])"
}
read -r lane_ms heavy_ms statuses < <(light_ms)
echo "light lane: /v1/jobs and top?rank=1 within $lane_ms ms; the heavy scans took at least $heavy_ms ms; $statuses"
# in the lane: each takes its own delay, one after the other (1 light thread): 2 x DELAY; behind
# the 3 scans they would end at 4 and 5 x DELAY
check "/v1/jobs and one rank's top answer while 3 scans hold the query thread (< 4 x $DELAY ms)" \
    [ "$lane_ms" -lt $((4 * DELAY)) ]
stop "$PID_server"
start_server --query-threads 1 --fault-query-delay-ms $DELAY --query-timeout-ms 20000 \
    --query-light-threads 0 --answer-cache-mb 0
read -r lane_ms heavy_ms statuses < <(light_ms)
echo "without the light lane: /v1/jobs and top?rank=1 within $lane_ms ms"
check "... without the lane (--query-light-threads 0) they wait behind the scans (>= 4.5 x $DELAY ms)" \
    [ "$lane_ms" -ge $((45 * DELAY / 10)) ]
check "--answer-cache-mb 0: nothing kept, no cache metrics" sh -c "
    ! curl -s '$HTTP/metrics' | grep -q answer_cache_lookups_total"
stop "$PID_server"

# tokens: a kept answer is served only to a caller the route admits, keyed by role
: >"$WORK/tokens"
chmod 600 "$WORK/tokens"
new_token reader read
new_token boss admin
start_server --token-file "$WORK/tokens" --query-threads 1 --fault-query-delay-ms 300 --evaluate-ms 0 \
    --answer-cache-max-age-ms 60000 --retention-s 0 --raw-retention-s 0
sleep 2.5
TOK=$(cat "$WORK/reader.token") par /v1/jobs/cache/skew >"$WORK/r1.out"
TOK=$(cat "$WORK/reader.token") par /v1/jobs/cache/skew >"$WORK/r2.out"
check "with tokens: a reader's repeat is a hit" python3 -c "
import json
a = json.loads(open('$WORK/r2.out').read()); assert a['status'] == 200 and a['ms'] < 300, a"
check "... no token, or a wrong one, after the answer is kept: 401, not the kept answer" sh -c "
    [ \$(curl -s -o '$WORK/n.body' -w '%{http_code}' '$HTTP/v1/jobs/cache/skew') = 401 ] &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer rst_00' '$HTTP/v1/jobs/cache/skew') = 401 ] &&
    ! grep -q skew '$WORK/n.body'"
TOK=$(cat "$WORK/boss.token") par /v1/jobs/cache/skew >"$WORK/b1.out"
check "... another role asking the same view is scanned under its own key (a miss)" python3 -c "
import json
a = json.loads(open('$WORK/b1.out').read()); r = json.loads(open('$WORK/r1.out').read())
assert a['status'] == 200 and a['ms'] >= 300 and a['body'] == r['body'], (a, r)"
finish
