"""Query flood against a running server while it ingests (280-adversarial-query-flood.sh).

usage: query_flood.py HTTP_URL JOB CLIENTS SECONDS OUT.json
Three phases of SECONDS each: no queries, then CLIENTS threads asking GET /v1/jobs/JOB/pprof
back to back (each request its own connection), then no queries again — the unloaded rate is
the mean of the two quiet phases, so that a machine whose other load changes meanwhile (it is
shared) skews the comparison less. In every phase /healthz is probed every 100 ms on a
fresh connection and its latency kept, and the server's batches_committed counter (in each
probe's answer) gives the ingest rate and the longest time it stood still ("stall_max_s").
Writes {"unloaded": {...}, "loaded": {...}, "ratio": loaded/unloaded, "statuses": {...}} to
OUT.json."""
import http.client
import json
import sys
import threading
import time
from urllib.parse import urlparse

url, job, clients, seconds, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
u = urlparse(url)
host, port = u.hostname, u.port
statuses = {}
retry_after_seen = [0]
lock = threading.Lock()


def get(path, timeout=60):
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    t0 = time.monotonic()
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    dt = time.monotonic() - t0
    ra = r.getheader("Retry-After")
    c.close()
    return r.status, body, dt, ra


def committed():
    st, body, _, _ = get("/healthz")
    return json.loads(body)["counters"]["batches_committed"]


def phase(loaded):
    stop = threading.Event()
    health = []

    def flood():
        while not stop.is_set():
            try:
                st, body, _, ra = get("/v1/jobs/%s/pprof" % job)
            except Exception as e:  # a refused or reset connection counts too
                st, ra = type(e).__name__, None
            with lock:
                statuses[str(st)] = statuses.get(str(st), 0) + 1
                if ra:
                    retry_after_seen[0] += 1
            if st in (429, 503):
                time.sleep(0.05)

    threads = [threading.Thread(target=flood) for _ in range(clients if loaded else 0)]
    for t in threads:
        t.start()
    time.sleep(0.5 if loaded else 0)  # the flood is on before the measurement starts
    c0, t0 = committed(), time.monotonic()
    last, moved, stall = c0, t0, 0.0
    while time.monotonic() - t0 < seconds:
        st, body, dt, _ = get("/healthz", timeout=30)
        health.append(dt if st == 200 else 99.0)
        now = time.monotonic()
        if st == 200:
            c = json.loads(body)["counters"]["batches_committed"]
            if c != last:
                last, moved = c, now
        stall = max(stall, now - moved)
        time.sleep(0.1)
    c1, t1 = committed(), time.monotonic()
    stop.set()
    for t in threads:
        t.join()
    health.sort()
    return {"batches_per_s": (c1 - c0) / (t1 - t0), "healthz_max_s": health[-1],
            "healthz_p50_s": health[len(health) // 2], "healthz_probes": len(health),
            "stall_max_s": stall}


before = phase(False)
loaded = phase(True)
after = phase(False)
unloaded = {"batches_per_s": (before["batches_per_s"] + after["batches_per_s"]) / 2,
            "before": before, "after": after}
res = {"unloaded": unloaded, "loaded": loaded,
       "ratio": loaded["batches_per_s"] / max(unloaded["batches_per_s"], 1e-9)}
res["statuses"] = statuses
res["retry_after"] = retry_after_seen[0]
json.dump(res, open(out, "w"), indent=1)
print(json.dumps(res))
