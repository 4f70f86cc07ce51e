"""What the benchmark scripts of tests/bench share: a server and an agent on 127.0.0.1 (real
ports from their ready files), a JSON GET on the server's REST API, and stopping both."""
import json
import os
import subprocess
import tempfile
import time
import urllib.request


class Daemons:
    def __init__(self, bin_dir, server_args=(), prefix="rankscope-bench."):
        self.work = tempfile.mkdtemp(prefix=prefix)
        self.server, ready = self._start(
            [f"{bin_dir}/rankscope-server", "--data", f"{self.work}/data", "--http", "127.0.0.1:0",
             "--listen", "tcp://127.0.0.1:0", "--ready-file", f"{self.work}/server.ready",
             *server_args], f"{self.work}/server.ready")
        self.http = "http://" + ready["http"]
        self.agent, _ = self._start(
            [f"{bin_dir}/rankscope-agent", "--server", ready["listen"], "--socket",
             f"{self.work}/agent.sock", "--ready-file", f"{self.work}/agent.ready"],
            f"{self.work}/agent.ready")
        self.socket = f"{self.work}/agent.sock"

    @staticmethod
    def _start(args, ready):
        proc = subprocess.Popen(args, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(ready) and os.path.getsize(ready) > 0:
                return proc, dict(l.split("=", 1) for l in open(ready).read().split())
            time.sleep(0.05)
        raise SystemExit(f"{args[0]} did not start")

    def get(self, path):
        with urllib.request.urlopen(self.http + path) as r:
            return json.load(r)

    def stop(self):
        for p in (self.agent, self.server):
            p.terminate()
        for p in (self.agent, self.server):
            p.wait()
        subprocess.run(["rm", "-rf", self.work])
