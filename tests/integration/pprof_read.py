#!/usr/bin/env python3
"""An independent reader of gzip-compressed pprof profiles for the integration tests: decodes the
protobuf wire format by hand (no generated code, nothing shared with the C encoder), checks the
format's rules, and prints JSON: {"sample_types": [[type, unit]...], "default": type,
"samples": [{"stack": [root, ..., leaf], "values": [...], "labels": {key: value}, "addresses":
[...], "mappings": [file or None, ...]}] (addresses and mappings per frame, root first),
"mappings": [...], "comments": [...], "time_nanos", "duration_nanos"}.

usage: pprof_read.py FILE   (or - for stdin)"""
import gzip
import json
import sys


def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def fields(buf):
    """(field number, wire type, value) for each field of one message."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            n, i = varint(buf, i)
            v = buf[i:i + n]
            i += n
        elif wt == 1:
            v = int.from_bytes(buf[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(buf[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def ints(wt, v):
    """A repeated integer field: packed (length-delimited) or one value."""
    if wt != 2:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def message(buf, repeated=()):
    """A message as {field: value or [values]}; `repeated` fields are always lists."""
    m = {}
    for num, wt, v in fields(buf):
        if num in repeated:
            m.setdefault(num, []).append((wt, v))
        else:
            m[num] = v
    return m


def read(data):
    top = message(gzip.decompress(data), repeated=(1, 2, 3, 4, 5, 6, 13))
    strings = [s.decode("utf-8") for _, s in top.get(6, [])]
    assert strings and strings[0] == "", "string_table[0] must be empty"
    S = lambda i: strings[i]
    types = [message(v) for _, v in top.get(1, [])]
    types = [[S(t.get(1, 0)), S(t.get(2, 0))] for t in types]
    assert types, "no sample types"
    functions, locations, mappings = {}, {}, {}
    for _, v in top.get(5, []):
        f = message(v)
        assert f.get(1) and f[1] not in functions, "function ids must be unique and nonzero"
        functions[f[1]] = S(f.get(2, 0))
    for _, v in top.get(3, []):
        m = message(v)
        assert m.get(1) and m[1] not in mappings, "mapping ids must be unique and nonzero"
        mappings[m[1]] = {"file": S(m.get(5, 0)), "build_id": S(m.get(6, 0)),
                          "start": m.get(2, 0), "limit": m.get(3, 0),
                          "has_functions": bool(m.get(7, 0))}
    for _, v in top.get(4, []):
        loc = message(v, repeated=(4,))
        assert loc.get(1) and loc[1] not in locations, "location ids must be unique and nonzero"
        mid, addr = loc.get(2, 0), loc.get(3, 0)
        if mid:
            m = mappings[mid]
            assert m["start"] <= addr < m["limit"], "address outside its mapping"
        lines = [message(lv) for _, lv in loc.get(4, [])]
        assert lines, "a location without a line has no name"
        locations[loc[1]] = {"function": functions[lines[0][1]], "address": addr,
                             "mapping": mappings[mid]["file"] if mid else None}
    samples = []
    for _, v in top.get(2, []):
        s = message(v, repeated=(1, 2, 3))
        ids = [x for wt, val in s.get(1, []) for x in ints(wt, val)]
        values = [signed(x) for wt, val in s.get(2, []) for x in ints(wt, val)]
        assert len(values) == len(types), "one value per sample type"
        labels = {}
        for _, lv in s.get(3, []):
            lab = message(lv)
            labels[S(lab.get(1, 0))] = S(lab[2]) if lab.get(2) else signed(lab.get(3, 0))
        stack = [locations[i]["function"] for i in ids]
        samples.append({"stack": stack[::-1], "values": values, "labels": labels,
                        "addresses": [locations[i]["address"] for i in ids][::-1],
                        "mappings": [locations[i]["mapping"] for i in ids][::-1]})
    return {"sample_types": types, "default": S(top.get(14, 0)), "samples": samples,
            "mappings": list(mappings.values()),
            "comments": [S(i) for wt, v in top.get(13, []) for i in ints(wt, v)],
            "time_nanos": top.get(9, 0), "duration_nanos": top.get(10, 0)}


if __name__ == "__main__":
    data = sys.stdin.buffer.read() if sys.argv[1] == "-" else open(sys.argv[1], "rb").read()
    json.dump(read(data), sys.stdout)
