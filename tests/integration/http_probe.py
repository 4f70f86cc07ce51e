"""Raw-socket HTTP probes the curl-based checks cannot express (050-http.sh)."""
import socket
import sys
import time

host, port, probe = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def connect():
    s = socket.create_connection((host, port), timeout=5)
    return s


def read_all(s):
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
    return data


if probe == "garbage":
    s = connect()
    s.sendall(b"\x00\x01NOT HTTP AT ALL\r\n\r\n")
    r = read_all(s)
    assert r.startswith(b"HTTP/1.1 400"), r[:80]
elif probe == "slowloris":
    s = connect()
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    time.sleep(0.3)
    s.sendall(b"X-Slow: 1\r\n")  # still not finished; the 500 ms request timeout fires
    t0 = time.time()
    r = read_all(s)
    assert r.startswith(b"HTTP/1.1 408"), r[:80]
    assert time.time() - t0 < 3, "connection held too long"
elif probe == "idle":
    s = connect()
    t0 = time.time()
    r = read_all(s)  # nothing sent: closed after the 2 s idle timeout
    assert r == b"" and 1.5 < time.time() - t0 < 4.5, (r, time.time() - t0)
elif probe == "keepalive":
    s = connect()
    req = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    s.sendall(req + req)  # pipelined
    time.sleep(0.3)
    s.settimeout(0.5)
    r = read_all(s)
    assert r.count(b"HTTP/1.1 200") == 2, r
elif probe == "bigheader":
    s = connect()
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
    r = read_all(s)
    assert r.startswith(b"HTTP/1.1 431"), r[:80]
elif probe == "bigbody":
    s = connect()
    s.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2000000\r\n\r\n")
    try:
        for _ in range(40):
            s.sendall(b"{" * 50000)
    except OSError:
        pass  # the server answered and closed before we finished: expected
    r = read_all(s)
    assert r.startswith(b"HTTP/1.1 413"), r[:80]
else:
    sys.exit("unknown probe " + probe)
