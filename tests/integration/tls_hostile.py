#!/usr/bin/env python3
"""Hostile TLS peers for tests/integration/220-tls.sh, written as an attacker would.

  tls_hostile.py stall PORT N HOLD_S   N connections that send the start of a ClientHello (a
                                       record header promising 512 bytes, then 40) and stop;
                                       waits up to HOLD_S and prints how many the server closed
                                       and when the last closed: "closed=N of=N last_s=1.02"
  tls_hostile.py garbage PORT N        N connections sending random bytes (half of them behind
                                       a handshake record header); prints "closed=N of=N"
                                       when the server hangs up on each within 5 s
"""
import os
import select
import socket
import sys
import time


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setblocking(False)
    return s


def wait_closed(socks, hold_s):
    start = time.monotonic()
    open_ = set(socks)
    last = 0.0
    while open_ and time.monotonic() - start < hold_s:
        ready, _, _ = select.select(list(open_), [], [], 0.2)
        for s in ready:
            try:
                data = s.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:  # the server hung up (an alert before it is fine)
                open_.discard(s)
                last = time.monotonic() - start
    for s in socks:
        s.close()
    return len(socks) - len(open_), last


def stall(port, n, hold_s):
    hello = bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03])
    hello += os.urandom(40 - len(hello))
    socks = []
    for _ in range(n):
        s = connect(port)
        s.send(hello)
        socks.append(s)
    closed, last = wait_closed(socks, hold_s)
    print(f"closed={closed} of={n} last_s={last:.2f}")


def garbage(port, n):
    socks = []
    for i in range(n):
        s = connect(port)
        junk = os.urandom(3000)
        if i % 2:
            junk = bytes([0x16, 0x03, 0x03, 0x0B, 0xB8]) + junk
        try:
            s.send(junk)
        except OSError:
            pass
        socks.append(s)
    closed, _ = wait_closed(socks, 5)
    print(f"closed={closed} of={n}")


if __name__ == "__main__":
    if sys.argv[1] == "stall":
        stall(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    else:
        garbage(int(sys.argv[2]), int(sys.argv[3]))
