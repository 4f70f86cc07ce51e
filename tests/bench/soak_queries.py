"""Query load for tests/bench/soak.sh: CLIENTS threads ask the REST API for a job's views in turn
(jobs list, ranks, stragglers, steps, top, skew, /healthz) back to back, each request on its own
connection, until STOP_FILE exists; then writes {"requests", "by_status", "p50_s", "p95_s",
"p99_s", "max_s", "per_endpoint_p99_s", "per_endpoint_status"} to OUT.json. usage: soak_queries.py URL JOB CLIENTS STOP_FILE OUT"""
import http.client
import json
import os
import sys
import threading
import time
from urllib.parse import urlparse

url, job, clients, stop_file, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
u = urlparse(url)
paths = ["/v1/jobs", "/v1/jobs/%s/ranks" % job, "/v1/jobs/%s/stragglers" % job,
         "/v1/jobs/%s/steps?last=30" % job, "/v1/jobs/%s/top?limit=10" % job,
         "/v1/jobs/%s/skew" % job, "/healthz"]
lat, statuses, lock = {p: [] for p in paths}, {}, threading.Lock()
by_path = {p: {} for p in paths}


def client(i):
    k = i
    while not os.path.exists(stop_file):
        p = paths[k % len(paths)]
        k += 1
        t0 = time.monotonic()
        try:
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
            c.request("GET", p)
            r = c.getresponse()
            r.read()
            st = r.status
            c.close()
        except Exception as e:
            st = type(e).__name__
        dt = time.monotonic() - t0
        with lock:
            lat[p].append(dt)
            statuses[str(st)] = statuses.get(str(st), 0) + 1
            by_path[p][str(st)] = by_path[p].get(str(st), 0) + 1
        time.sleep(0.05)


ts = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
[t.start() for t in ts]
[t.join() for t in ts]
every = sorted(x for v in lat.values() for x in v)


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


json.dump({"clients": clients, "requests": len(every), "by_status": statuses, "p50_s": pct(every, 0.5),
           "p95_s": pct(every, 0.95), "p99_s": pct(every, 0.99), "max_s": every[-1] if every else None,
           "per_endpoint_p99_s": {p: pct(v, 0.99) for p, v in lat.items()},
           "per_endpoint_status": by_path}, open(out, "w"), indent=1)
