#!/usr/bin/env python3
"""Writes a large Kineto trace by repeating a real one's events, shifted in time, until the output
reaches SIZE_MB: the import-speed benchmark's input. usage: make_big_trace.py FIXTURE OUT SIZE_MB"""
import gzip
import json
import sys

src, out, size_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
opener = gzip.open if src.endswith(".gz") else open
with opener(src, "rt") as f:
    doc = json.load(f)
events = doc.pop("traceEvents")
timed = [e for e in events if isinstance(e.get("ts"), (int, float))]
t0 = min(e["ts"] for e in timed)
span = max(e["ts"] + e.get("dur", 0) for e in timed) - t0 + 1000.0
templates = []
for e in events:
    if isinstance(e.get("ts"), (int, float)):
        templates.append((json.dumps(dict(e, ts="@TS@")), e["ts"]))
    else:
        templates.append((json.dumps(e), None))
limit = int(size_mb * 1e6)
with open(out, "w") as f:
    header = json.dumps(doc)[:-1]  # the header keys, without the closing brace
    f.write(header + ', "traceEvents": [\n')
    written, rep, first = len(header), 0, True
    while written < limit:
        shift = rep * span
        chunk = []
        for text, ts in templates:
            if ts is not None:
                text = text.replace('"@TS@"', "%.3f" % (ts + shift))
            chunk.append(text)
        body = (",\n" if not first else "") + ",\n".join(chunk)
        f.write(body)
        written += len(body)
        first = False
        rep += 1
    f.write("\n]}\n")
print("%s: %d copies of %d events, %.0f MB" % (out, rep, len(events), written / 1e6))
