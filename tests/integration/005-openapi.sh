#!/usr/bin/env bash
# docs/openapi.yaml is the REST contract: it must parse, and every endpoint the server routes must
# be in it (and the other way round), so the document cannot drift from the code unnoticed.
. "$(dirname "$0")/common.sh"
check "docs/openapi.yaml parses as YAML with paths" python3 -c '
import yaml
d = yaml.safe_load(open("docs/openapi.yaml"))
assert d["openapi"].startswith("3.") and d["paths"], d.keys()'
# In a flow mapping an unquoted ", " ends a description and makes the rest a key; where a key
# is a name (properties), no schema rule can tell. Names, media types and paths hold no space.
check "no key holds a space (text that an unquoted comma made a key)" python3 -c '
import yaml
def keys(x, at):
    if isinstance(x, dict):
        for k, v in x.items():
            assert " " not in str(k), "%s: key %r" % (at, k)
            keys(v, at + "/" + str(k))
    elif isinstance(x, list):
        for v in x:
            keys(v, at)
keys(yaml.safe_load(open("docs/openapi.yaml")), "")'
check "the server's routes and the documented paths are the same" python3 -c '
import re, yaml
doc = set(yaml.safe_load(open("docs/openapi.yaml"))["paths"])
src = open("server/routes.c").read()
code = {"/healthz", "/v1/jobs", "/v1/jobs/{job}"}
code |= set(re.findall(r"strcmp\(path, \"(/[a-z/0-9]+)\"\) == 0", src))
table = src[src.index("job_endpoints[] = {"):]
table = table[:table.index("};")]
code |= {"/v1/jobs/{job}" + s for s in re.findall(r"\{\"(/[a-z/]+)\"", table)}
# endpoints routed before the table (POST /v1/jobs/{job}/capture)
code |= {"/v1/jobs/{job}" + s for s in re.findall(r"job_in_path\(c, path, \"(/[a-z/]+)\"", src)}
# the dashboard (server/dashboard.c): / and /assets/{file}
if "rs__server_dashboard(c, req)" in src:
    code |= {"/", "/assets/{file}"}
assert doc == code, ("documented only:", doc - code, "routed only:", code - doc)'
# Every operation but /healthz needs a token when the server has a token file (401/403), and every
# REST read runs in the bounded query pool (429 over a client's share, 503 when full, 504 past the
# query timeout): a new endpoint that forgets to say so is caught here.
check "every operation declares 401/403, every GET under /v1 declares 429/503/504" python3 -c '
import yaml
d = yaml.safe_load(open("docs/openapi.yaml"))
missing = []
for path, ops in d["paths"].items():
    for method, op in ops.items():
        # open operations (security: [], e.g. /healthz and the dashboard files) answer no 401/403
        if not isinstance(op, dict) or path == "/healthz" or op.get("security") == []:
            continue
        want = {"401", "403"} | ({"429", "503", "504"} if method == "get" and path.startswith("/v1/") else set())
        lack = want - set(map(str, op["responses"]))
        if lack:
            missing.append((method, path, sorted(lack)))
assert not missing, missing'
finish
