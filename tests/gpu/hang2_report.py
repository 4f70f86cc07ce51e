"""Checks tests/gpu/hang2.sh's run: hang verdicts raised within the limit and cleared when the
AllReduce completes, who waits and who never arrived, and the plugin's records of both ranks.
usage: hang2_report.py HANG2_JSON RESULT_DIR --hang-s S --hang-ms MS
Prints each check and `hang2: N passed, N failed`; exits 1 when one failed."""
import argparse
import json
import os
import sys

RAISE_SLACK_S = 3.0  # after the limit: the collector's flush (250 ms), the agent, the watch (1 s)
CLEAR_SLACK_S = 3.0  # after completion: the next flush and the watch
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {detail}" if detail else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("json")
    ap.add_argument("dir")
    ap.add_argument("--hang-s", type=float, required=True)
    ap.add_argument("--hang-ms", type=float, required=True)
    a = ap.parse_args()
    try:
        run = json.loads(open(a.json).read().strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001
        check("rank 0 printed its line", False, str(e))
        print(open(os.path.join(a.dir, "job.log"), errors="replace").read()[-3000:])
        return
    print(f"NCCL {run['nccl']}, GPU sleep {run['cycles_per_s'] / 1e9:.2f} Gcycles/s, data ok {run['data_ok']}")
    check("the job ran to its end", open(os.path.join(a.dir, "exit.txt")).read().split()[-1] == "0"
          and run["data_ok"])
    limit = a.hang_ms / 1000
    for phase, p in run["phases"].items():
        called, done = p["called_at"], p["completed_at"]
        polls = [q for q in p["polls"] if isinstance(q[1], list)]
        errors = [q for q in p["polls"] if not isinstance(q[1], list)]
        print(f"\n== {phase}: AllReduce held {done - called:.2f} s; {len(polls)} polls, "
              f"{len(errors)} failed")
        raised = [q for q in polls if q[1] and q[0] < done]
        first = raised[0] if raised else None
        last = None
        for q in polls:  # the changes, for the reader
            if (q[1], q[2]) != last:
                print(f"  +{q[0] - called:6.2f} s  {json.dumps(q[1])}  {' '.join(q[2])}")
            last = (q[1], q[2])
        check(f"{phase}: a hang verdict while the AllReduce was held", first is not None)
        if not first:
            continue
        since = first[0] - called
        check(f"{phase}: raised within the limit ({limit:.1f} s) + {RAISE_SLACK_S:.0f} s, not "
              "before the limit", limit - 0.3 <= since <= limit + RAISE_SLACK_S, f"{since:.2f} s")
        h = first[1][0]
        check(f"{phase}: one verdict, AllReduce", len(first[1]) == 1 and "AllReduce" in str(h["op"]),
              json.dumps(h))
        waiting = {r: g for r, g in h["waiting"]}
        absent = {r[0]: r for r in h["never_arrived"]}
        check(f"{phase}: rank 0 waits with its kernel started on the GPU", waiting.get(0) is True)
        if phase == "gpu_held":
            check(f"{phase}: rank 1 arrived with its kernel queued behind other work",
                  waiting.get(1) is False, json.dumps(h["waiting"]))
        else:
            r1 = absent.get(1)
            check(f"{phase}: rank 1 never arrived, with its host and GPU",
                  r1 is not None and bool(r1[1]) and bool(r1[2]), json.dumps(h["never_arrived"]))
        check(f"{phase}: since = the call on the waiting rank (within 0.5 s)",
              h.get("since_ns") is not None and abs(h["since_ns"] / 1e9 - called) < 0.5,
              f"{h.get('since_ns', 0) / 1e9 - called:+.3f} s")
        check(f"{phase}: rankscope_hangs_active 1 while raised",
              any(l.split()[-1] == "1" for q in raised for l in q[2]))
        after = [q for q in polls if q[0] > done]
        clear = next((q for q in after if not q[1]), None)
        check(f"{phase}: cleared within {CLEAR_SLACK_S:.0f} s of completion, and stays clear",
              clear is not None and clear[0] - done <= CLEAR_SLACK_S
              and all(not q[1] for q in after if q[0] >= clear[0]),
              f"{clear[0] - done:.2f} s" if clear else "never")
    colls = [json.loads(l) for l in open(os.path.join(a.dir, "collectives.jsonl")) if l.startswith("{")]
    by_rank = {r: [c for c in colls if c["rank"] == r] for r in (0, 1)}
    print(f"\nstored collectives: rank 0 {len(by_rank[0])}, rank 1 {len(by_rank[1])}")
    for r, cs in by_rank.items():
        exact = [c for c in cs if c["seq_exact"]]
        timed = [c for c in exact if c["dur_ns"] > 0]
        check(f"rank {r}: plugin records with exact sequence and GPU times",
              len(exact) >= 400 and len(timed) >= 0.95 * len(exact),
              f"{len(exact)} exact, {len(timed)} with GPU duration")
    keys0 = {(c["comm"], c["op"], c["seq"]) for c in by_rank[0] if c["seq_exact"]}
    keys1 = {(c["comm"], c["op"], c["seq"]) for c in by_rank[1] if c["seq_exact"]}
    both = keys0 & keys1
    check("instances matched by (comm, op, seq) on both ranks",
          len(both) >= 0.99 * max(len(keys0), len(keys1), 1),
          f"{len(both)} of {len(keys0)} / {len(keys1)}")
    longest = sorted((c["dur_ns"] / 1e9, c["rank"]) for c in colls if c["seq_exact"])[-4:]
    print(f"longest GPU durations (s, rank): {longest}")
    check("rank 0's held AllReduces ran on its GPU about as long as the hold",
          sum(1 for d, r in longest if r == 0 and d > 0.8 * a.hang_s) >= 1)
    log = open(os.path.join(a.dir, "server.log"), errors="replace").read().splitlines()
    hang_lines = [l for l in log if "RS-HANG" in l]
    print("\n".join(hang_lines[:10]))
    check("server log: RS-HANG-RAISED and RS-HANG-CLEARED for each hold",
          sum("RS-HANG-RAISED" in l for l in hang_lines) == 2
          and sum("RS-HANG-CLEARED" in l for l in hang_lines) == 2)
    cli = open(os.path.join(a.dir, "cli-hangs.txt"), errors="replace").read()
    print("--- rankscope hangs:\n" + cli[:1500])
    print("--- collector lines:")
    for l in open(os.path.join(a.dir, "job.log"), errors="replace"):
        if "rankscope[" in l and ("flight" in l or "plugin" in l or "NCCL" in l):
            print("  " + l.rstrip()[:300])
    print(f"\nhang2: {results.count(True)} passed, {results.count(False)} failed")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
