"""Attacks on a running server's ports, written from the outside (docs/security.md "Resources"):
what a hostile or broken peer does to HTTP and to the agents' NNG port. Each prints one JSON line
of what it measured; the calling test (285-adversarial-connections.sh) judges it.

usage: adversary.py ATTACK HOST PORT [args]
  slow-crowd N SOURCES SECONDS   N connections from 127.0.0.2.. (SOURCES addresses) that trickle
                                 a request's headers one byte per second; meanwhile a client on
                                 127.0.0.1 sends GET /healthz every 50 ms: how many of its
                                 requests failed, and what the crowd was answered
  refused-burst PID HELD N       with the server stopped (SIGSTOP to PID): HELD slow connections
                                 from 127.0.0.2, N more from there, then GET /healthz from
                                 127.0.0.1; then SIGCONT, so that the server accepts them all in
                                 one turn of its loop (the crowd's refusals not yet answered):
                                 what the client and the crowd were answered
  trickle-timeout                one connection trickling headers: what it gets, and when
  body-hog N BYTES               N connections each announcing a body of BYTES and sending most of
                                 it, then stalling: what each is answered
  fd-flood N                     N connections that send nothing (to exhaust descriptors), then
                                 GET /healthz while they are open and after they closed
  nng-idle N SOURCE              N NNG connections (SP handshake as a req0 peer) from SOURCE that
                                 never send: how many the server closed within 3 s
  nng-stall SIZE WAIT            one NNG connection that sends a message header announcing SIZE
                                 bytes, 1 KiB of it, then stalls: seconds until the server closed
                                 it (WAIT at most)
"""
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import threading
import time

attack, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
args = sys.argv[4:]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def connect(source=None, timeout=5):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if source:
        s.bind((source, 0))
    s.connect((host, port))
    return s


def status_of(data):
    try:
        return int(data.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def get(path, timeout=5):
    s = connect(timeout=timeout)
    s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return status_of(data)


def closed_by_peer(s, wait):
    """Seconds until the peer closed s (EOF or reset), None if it did not within wait."""
    t0 = time.monotonic()
    s.setblocking(False)
    while time.monotonic() - t0 < wait:
        r, _, _ = select.select([s], [], [], 0.1)
        if r:
            try:
                if not s.recv(65536):
                    return time.monotonic() - t0
            except (ConnectionResetError, BrokenPipeError):
                return time.monotonic() - t0
            except BlockingIOError:
                pass
    return None


def slow_crowd(n, sources, seconds):
    crowd, refused_at_connect = [], 0
    for i in range(n):
        src = "127.0.0.%d" % (2 + i % sources)
        try:
            s = connect(src)
            s.sendall(b"G")
            crowd.append(s)
        except OSError:
            refused_at_connect += 1
    stop = threading.Event()
    answers = {}

    def trickle():
        while not stop.is_set():
            for s in crowd:
                try:
                    s.send(b"E")
                except OSError:
                    pass
            stop.wait(1.0)

    t = threading.Thread(target=trickle)
    t.start()
    ok = failed = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        try:
            st = get("/healthz")
        except OSError:
            st = None
        if st == 200:
            ok += 1
        else:
            failed += 1
        time.sleep(0.05)
    stop.set()
    t.join()
    for s in crowd:
        s.setblocking(False)
        try:
            data = s.recv(4096)
            key = str(status_of(data)) if data else "closed"
        except BlockingIOError:
            key = "open"
        except OSError:
            key = "reset"
        answers[key] = answers.get(key, 0) + 1
        s.close()
    return {"legit_ok": ok, "legit_failed": failed, "crowd": answers,
            "refused_at_connect": refused_at_connect}


def answer_of(s, wait=5):
    """What s was answered: its status, "closed" (hung up silently), "open" or "reset"."""
    s.settimeout(wait)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        return str(status_of(data)) if data else "open"
    except OSError:
        return str(status_of(data)) if data else "reset"
    return str(status_of(data)) if data else "closed"


def refused_burst(pid, held, n):
    os.kill(pid, signal.SIGSTOP)
    try:
        crowd = []
        for _ in range(held + n):
            s = connect("127.0.0.2")
            s.sendall(b"G")
            crowd.append(s)
        client = connect("127.0.0.1")
        client.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    finally:
        os.kill(pid, signal.SIGCONT)
    status = answer_of(client)
    answers = {}
    for s in crowd:
        key = answer_of(s, 0.5)
        answers[key] = answers.get(key, 0) + 1
        s.close()
    return {"client": status, "crowd": answers}


def trickle_timeout():
    s = connect()
    t0 = time.monotonic()
    data = b""
    s.settimeout(0.3)
    for ch in b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 100:
        try:
            s.send(bytes([ch]))
        except OSError:
            break
        try:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        except socket.timeout:
            pass
        except OSError:
            break
        if time.monotonic() - t0 > 20:
            break
    return {"status": status_of(data), "after_s": time.monotonic() - t0,
            "body": data.split(b"\r\n\r\n", 1)[-1].decode(errors="replace")}


def body_hog(n, size):
    conns, answers = [], {}
    for _ in range(n):
        s = connect()
        s.sendall(b"POST /v1/import HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Content-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n" % size)
        try:
            s.sendall(b"\0" * (size - 1024))
        except OSError:
            pass
        conns.append(s)
        time.sleep(0.05)
    time.sleep(0.5)
    for s in conns:
        s.settimeout(0.5)
        try:
            data = s.recv(4096)
            key = str(status_of(data)) if data else "closed"
        except socket.timeout:
            key = "waiting"
        except OSError:
            key = "reset"
        answers[key] = answers.get(key, 0) + 1
    healthz = get("/healthz")
    for s in conns:
        s.close()
    return {"answers": answers, "healthz": healthz}


def fd_flood(n):
    conns, failed = [], 0
    for _ in range(n):
        try:
            conns.append(connect())
        except OSError:
            failed += 1
    time.sleep(0.5)
    try:
        during = get("/healthz", timeout=3)
    except OSError as e:
        during = type(e).__name__
    for s in conns:
        s.close()
    time.sleep(1.0)
    after = get("/healthz")
    return {"opened": len(conns), "connect_failed": failed, "healthz_during": during,
            "healthz_after": after}


SP_REQ0 = b"\x00SP\x00\x00\x30\x00\x00"  # SP header of a req0 peer (protocol 48)


def nng_connect(source):
    s = connect(source)
    s.sendall(SP_REQ0)
    hdr = b""
    while len(hdr) < 8:
        chunk = s.recv(8 - len(hdr))
        if not chunk:
            return None
        hdr += chunk
    return s


def nng_idle(n, source):
    conns, failed = [], 0
    for _ in range(n):
        try:
            s = nng_connect(source)
            if s:
                conns.append(s)
            else:
                failed += 1
        except OSError:
            failed += 1
    time.sleep(3.0)
    closed = 0
    for s in conns:
        s.setblocking(False)
        try:
            if not s.recv(4096):
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    return {"handshaken": len(conns), "handshake_failed": failed, "closed_by_server": closed}


def nng_stall(size, wait):
    s = nng_connect(None)
    s.sendall(struct.pack(">Q", size) + b"\0" * 1024)
    return {"closed_after_s": closed_by_peer(s, wait)}


if attack == "slow-crowd":
    out = slow_crowd(int(args[0]), int(args[1]), float(args[2]))
elif attack == "refused-burst":
    out = refused_burst(int(args[0]), int(args[1]), int(args[2]))
elif attack == "trickle-timeout":
    out = trickle_timeout()
elif attack == "body-hog":
    out = body_hog(int(args[0]), int(args[1]))
elif attack == "fd-flood":
    out = fd_flood(int(args[0]))
elif attack == "nng-idle":
    out = nng_idle(int(args[0]), args[1])
elif attack == "nng-stall":
    out = nng_stall(int(args[0]), float(args[1]))
else:
    sys.exit("unknown attack " + attack)
print(json.dumps(out))
