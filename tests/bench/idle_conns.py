#!/usr/bin/env python3
"""Idle connections against a running rankscope-server, for tests/bench/idle_conns.sh.

http HOST PORT N OUT STOP: opens N keep-alive HTTP connections, sends one GET /healthz on each and
reads its answer (so each connection is past its first request, as a browser's or a scraper's
is), then holds them idle; writes {"opened", "answered", "failed"} to OUT and holds them until the
file STOP exists. nng HOST PORT N OUT STOP: opens N TCP connections to the agents' port and sends
the 8-byte SP header of a req0 socket (what an NNG agent's dialer sends: the connection becomes
an agent pipe) and nothing more: idle agents; "answered" counts the server's own headers read
back. nng-silent: the same without the header (sockets that never finish their handshake). The caller raises the open-files
limit (each connection is a descriptor here)."""
import json
import os
import selectors
import socket
import sys
import time

def main():
    kind, host, port, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    out, stop = sys.argv[5], sys.argv[6]
    socks, failed = [], 0
    header = b"\x00SP\x00\x00\x30\x00\x00"  # SP over TCP, protocol req0 (48), version 0
    for _ in range(n):
        s = socket.socket()
        s.setblocking(True)
        try:
            s.connect((host, port))
            if kind == "nng":  # at once: NNG closes a connection without it after 10 s
                s.sendall(header)
        except OSError:
            failed += 1
            s.close()
            continue
        socks.append(s)
    answered = 0
    if kind == "nng":
        for s in socks:
            s.settimeout(0.05)
            try:
                if len(s.recv(8)) == 8:
                    answered += 1
            except OSError:
                pass
    if kind == "http":
        req = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        for s in socks:
            try:
                s.sendall(req)
            except OSError:
                pass
        sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        pending = len(socks)
        while pending:
            events = sel.select(timeout=30)
            if not events:
                break
            for key, _ in events:
                try:
                    data = key.fileobj.recv(65536)
                except OSError:
                    data = b""
                if data.startswith(b"HTTP/1.1 200"):
                    answered += 1
                sel.unregister(key.fileobj)
                pending -= 1
    json.dump({"opened": len(socks), "answered": answered, "failed": failed}, open(out, "w"))
    while not os.path.exists(stop):  # hold them until the caller says
        time.sleep(0.2)

main()
