"""The bot service against clients that pipeline without reading, send bodies a byte at a time,
send oversized headers in one segment, forge Host headers, or hold a shutdown: each bound is
tried on a live server (a real process where memory or a signal is what is measured)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import closing, contextmanager

import pytest
from helpers import free_port, running_server

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from fastapi.testclient import TestClient  # noqa: E402
from test_service_doors import HEALTH, answer, connect, health_ms, request  # noqa: E402

from cuatrola_serve.guard import LOOPBACK_HOSTS, ServiceLimits  # noqa: E402
from cuatrola_serve.serve import create_app, uvicorn_options  # noqa: E402

PIPELINED_HEALTH = b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n"


@contextmanager
def service_process(*args: str):
    """``cuatrola-serve --model none`` in a process of its own; yields (port, process)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cuatrola_serve.serve", "--model", "none", "--port", str(port), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(200):
            try:
                if request(port, HEALTH)[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise AssertionError("the service did not start")
        yield port, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        proc.stderr.close()


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def pipelining_client(port: int, source: str, request: bytes = PIPELINED_HEALTH, count: int = 6000) -> socket.socket:
    """A connection that sends ``count`` requests in one write and never reads an answer."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    data = request * count
    try:
        sock.send(data)
    except BlockingIOError:
        pass
    return sock


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads a process's memory from /proc")


# --------------------------------------------------------------------------- pipelining
@needs_proc
@pytest.mark.parametrize("sources", [[f"127.0.{k}.2" for k in range(20)], ["127.0.0.77"] * 40],
                         ids=["20 addresses", "40 connections of one address"])
def test_pipelined_requests_that_are_never_read_hold_no_memory(sources):
    """Thousands of requests in one write, never read: a connection has at most pipeline_depth of
    them parsed, the rest unread, so the service's memory barely moves and others are served."""
    with service_process() as (port, proc):
        before = rss_mb(proc.pid)
        clients = [pipelining_client(port, s) for s in sources]
        try:
            time.sleep(1.5)
            grown = rss_mb(proc.pid) - before
            assert grown < 40, f"the service grew by {grown:.0f} MB"
            assert health_ms(port, "127.0.99.1") < 1000
        finally:
            for c in clients:
                c.close()


def test_pipelined_requests_are_still_answered_in_order():
    limits = ServiceLimits(pipeline_depth=2)
    with running_server(create_app(None, limits), **uvicorn_options(limits)) as port:
        with closing(connect(port)) as s:
            paths = [b"/v1/health", b"/v1/games/nope", b"/v1/health"] * 5
            s.sendall(b"".join(b"GET " + p + b" HTTP/1.1\r\nHost: localhost\r\n\r\n" for p in paths))
            statuses, data = [], b""
            while len(statuses) < len(paths):
                head, sep, rest = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), None)
                if sep and length is not None and len(rest) >= length:
                    statuses.append(int(head.split()[1]))
                    data = rest[length:]
                    continue
                chunk = s.recv(65536)
                assert chunk, f"closed after {len(statuses)} answers"
                data += chunk
    assert statuses == [200, 404, 200] * 5


@pytest.mark.parametrize("path", [b"/v1/health", b"/static/app.js"])
def test_a_client_that_never_reads_has_only_a_bounded_number_of_answers_computed(path):
    """Answers a client has not read are bounded in bytes (the send buffer), so a connection that
    pipelines thousands of requests and reads none costs the service a few hundred answers, not all."""
    app = create_app(None)
    answered = []

    async def counting(scope, receive, send):
        answered.append(scope.get("path"))
        return await app(scope, receive, send)

    limits = ServiceLimits()
    with running_server(counting, **uvicorn_options(limits)) as port:
        sock = pipelining_client(port, "127.0.0.12", b"GET " + path + b" HTTP/1.1\r\nHost: localhost\r\n\r\n", 6000)
        try:
            time.sleep(2.0)
            assert len(answered) < 1500, f"{len(answered)} of 6,000 answered to a client that reads nothing"
        finally:
            sock.close()


@needs_proc
@pytest.mark.parametrize("client", ["pipelines 2,000 requests and never reads", "sends its body a byte at a time"])
def test_no_client_holds_a_shutdown(client):
    """SIGTERM stops the service within seconds (its shutdown time-out), whatever one client does."""
    with service_process() as (port, proc):
        if client.startswith("pipelines"):
            held = pipelining_client(port, "127.0.0.5", b"GET /static/app.js HTTP/1.1\r\nHost: localhost\r\n\r\n", 2000)
        else:
            held = slow_body(port, "127.0.0.6")
        try:
            time.sleep(0.5)
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=15)
            assert time.monotonic() - t0 < 7, "stopped within seconds of SIGTERM"
        finally:
            held.close()


# --------------------------------------------------------------------------- slow bodies
def slow_body(port: int, source: str) -> socket.socket:
    s = connect(port, source)
    s.sendall(b"POST /v1/act HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 16000\r\n\r\n{")
    return s


def slow_headers(port: int, source: str) -> socket.socket:
    s = connect(port, source)
    s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n")
    return s


@pytest.mark.parametrize("mix", ["bodies", "bodies and headers"])
def test_at_the_cap_slow_bodies_make_room_for_a_new_client(mix):
    """Slow bodies from many addresses fill every connection: a new client is still served, by
    closing a connection of the client with the most open, its oldest first."""
    limits = ServiceLimits(max_connections=24, connections_per_client=8, header_timeout=30.0, body_timeout=30.0)
    with running_server(create_app(None, limits), **uvicorn_options(limits)) as port:
        held = []
        for k in range(3):
            for j in range(8):
                opener = slow_headers if mix != "bodies" and j % 2 else slow_body
                held.append(opener(port, f"127.0.{k + 1}.3"))
        time.sleep(0.3)
        try:
            for k in range(4):
                assert request(port, HEALTH, f"127.0.{40 + k}.3")[0] == 200, "a new client is served at the cap"
            assert sum(is_closed(s) for s in held) >= 1
        finally:
            for s in held:
                s.close()


def test_the_busiest_client_loses_a_connection_first():
    limits = ServiceLimits(max_connections=9, connections_per_client=8, header_timeout=30.0, body_timeout=30.0)
    with running_server(create_app(None, limits), **uvicorn_options(limits)) as port:
        quiet = slow_body(port, "127.0.1.4")  # the oldest, of a client with one connection
        time.sleep(0.1)
        busy = [slow_body(port, "127.0.2.4") for _ in range(8)]
        time.sleep(0.3)
        try:
            assert request(port, HEALTH, "127.0.3.4")[0] == 200
            assert not is_closed(quiet), "the lone connection is kept"
            assert is_closed(busy[0]), "the busiest client's oldest made room"
        finally:
            for s in [quiet, *busy]:
                s.close()


def is_closed(sock: socket.socket) -> bool:
    sock.settimeout(0.3)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


# --------------------------------------------------------------------------- headers and Host
@pytest.mark.parametrize("headers", [b"X-Big: " + b"a" * 100_000 + b"\r\n",
                                     b"".join(b"X-H%d: %s\r\n" % (k, b"b" * 40) for k in range(2000))],
                         ids=["one long header", "many headers"])
def test_headers_over_the_cap_sent_in_one_segment_are_refused(headers):
    limits = ServiceLimits(header_bytes=4096)
    with running_server(create_app(None, limits), **uvicorn_options(limits)) as port:
        with closing(connect(port, "127.0.0.8")) as s:
            try:
                s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n" + headers + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            status, _, body = answer(s)
    assert status == 431 and "longer than 4096 bytes" in json.loads(body)["detail"]


@pytest.mark.parametrize("host", ["[::1]evil.com", "[::1]evil.com:80", "localhost evil.com", "localhost:80:80",
                                  "user@localhost", "[::1", "localhost/x", "[nothex]"])
def test_a_malformed_host_header_is_refused_not_guessed(host):
    client = TestClient(create_app(None, allowed_hosts=LOOPBACK_HOSTS))
    r = client.get("/v1/health", headers={"host": host})
    assert r.status_code == 400 and "Host header" in r.json()["detail"]
    assert client.get("/v1/health", headers={"host": "[0:0::1]:8000"}).status_code == 200, "an address in another form"
