#!/usr/bin/env bash
# docs/openapi.yaml is the REST contract: it must parse, and every endpoint the server routes must
# be in it (and the other way round), so the document cannot drift from the code unnoticed.
. "$(dirname "$0")/common.sh"
check "docs/openapi.yaml parses as YAML with paths" python3 -c '
import yaml
d = yaml.safe_load(open("docs/openapi.yaml"))
assert d["openapi"].startswith("3.") and d["paths"], d.keys()'
check "the server's routes and the documented paths are the same" python3 -c '
import re, yaml
doc = set(yaml.safe_load(open("docs/openapi.yaml"))["paths"])
src = open("server/routes.c").read()
code = {"/healthz", "/v1/jobs", "/v1/jobs/{job}"}
code |= set(re.findall(r"strcmp\(path, \"(/[a-z/0-9]+)\"\) == 0", src))
table = src[src.index("job_endpoints[] = {"):]
table = table[:table.index("};")]
code |= {"/v1/jobs/{job}" + s for s in re.findall(r"\{\"(/[a-z/]+)\"", table)}
assert doc == code, ("documented only:", doc - code, "routed only:", code - doc)'
finish
