#!/usr/bin/env python3
"""A hostile NNG peer that makes the server close its connections mid-message, written as an
attacker would (tests/integration/238-nng-pipe-race.sh).

  nng_pipe_race.py trickle[-tls] PORT N SECONDS OUT.json
      N raw TCP connections that pass the SP handshake as a req0 peer, announce a message of
      1 MiB (an 8-byte length) and then trickle its body one byte at a time, round-robin, as
      fast as they go, so that every connection always has a read completing in the server. A
      server that closes such connections (agent-idle-timeout-s, or eviction at
      agent-max-connections) closes them while NNG is between two reads of the message: NNG
      1.5.2's TCP transport then starts the next read on a stopped aio, it never completes, and
      NNG's reaper waits for it for good. Each connection the server closes is replaced by a
      new one. Runs SECONDS, then closes every connection and writes
      {"opened": n, "closed_by_server": n, "bytes": n} to OUT.json. trickle-tls does the same
      inside TLS (tls+tcp://; the server's certificate is not checked: an attacker's client),
      one TLS record per byte.

Nothing here knows the server's code: it speaks the SP-over-TCP framing (an 8-byte header
"\\0SP\\0" + protocol + "\\0\\0", then messages as an 8-byte big-endian length and the body).
"""
import json
import select
import socket
import ssl
import struct
import sys
import time

REQ0 = 0x30
HEADER = bytes([0, ord("S"), ord("P"), 0]) + struct.pack(">H", REQ0) + b"\0\0"
BODY = 1 << 20


def opened(port, tls):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if tls:
        s = tls.wrap_socket(s, server_hostname="localhost")
    s.sendall(HEADER + struct.pack(">Q", BODY))
    s.setblocking(False)
    return s


def trickle(port, n, seconds, out, tls=None):
    socks, stats = [], {"opened": 0, "closed_by_server": 0, "bytes": 0}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        while len(socks) < n:
            try:
                socks.append(opened(port, tls))
                stats["opened"] += 1
            except OSError:
                time.sleep(0.01)  # refused (a bound): try again
                break
        # EOF or reset: the server closed it
        ready, _, _ = select.select(socks, [], [], 0)
        gone = set()
        for s in ready:
            try:
                if not s.recv(4096):  # the server's SP header, then nothing: EOF
                    gone.add(s)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                pass
            except OSError:
                gone.add(s)
        for s in socks:
            if s in gone:
                continue
            try:
                stats["bytes"] += s.send(b"x")
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                pass
            except OSError:
                gone.add(s)
        for s in gone:
            s.close()
            stats["closed_by_server"] += 1
        socks = [s for s in socks if s not in gone]
    for s in socks:
        s.close()
    with open(out, "w") as f:
        json.dump(stats, f)


if __name__ == "__main__":
    if sys.argv[1] in ("trickle", "trickle-tls"):
        tls = None
        if sys.argv[1] == "trickle-tls":
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            tls.check_hostname = False
            tls.verify_mode = ssl.CERT_NONE
        trickle(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], tls)
    else:
        sys.exit(__doc__)
