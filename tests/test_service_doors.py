"""The bot service against an attacker at the connection level: forged client addresses, too many
connections from one client, endless header lines, malformed framing, foreign Host names, the
page's security headers, and deals no seat can guess. Real sockets against a live server."""

from __future__ import annotations

import json
import socket
import time
from contextlib import closing

import pytest
from helpers import free_port, running_server

pytest.importorskip("fastapi")
pytest.importorskip("onnxruntime")

from fastapi.testclient import TestClient  # noqa: E402

from cuatrola_serve import serve  # noqa: E402
from cuatrola_serve.guard import LOOPBACK_HOSTS, ClientAddresses, ServiceLimits  # noqa: E402
from cuatrola_serve.serve import create_app, default_hosts, table_seeds, uvicorn_options  # noqa: E402
from cuatrola_serve.table import Table  # noqa: E402

LIMITS = ServiceLimits(games_per_client=2, max_games=6, connections_per_client=4, header_bytes=4096,
                       header_timeout=2.0, body_timeout=2.0)


@pytest.fixture(scope="module")
def live():
    """The service (baseline bots only) as ``cuatrola-serve`` runs it, on a loopback port."""
    app = create_app(None, LIMITS)
    with running_server(app, **uvicorn_options(LIMITS)) as port:
        yield port, app


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    """A connection from ``source`` (any 127.x address reaches the loopback server: another client)."""
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.settimeout(5.0)
    return sock


def answer(sock: socket.socket) -> tuple[int, dict, bytes]:
    """Status, headers and body of one answer (read until the body's length is in, or the close)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)
    while len(body) < int(headers.get("content-length", 0)):
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), headers, body


def request(port: int, raw: bytes, source: str = "127.0.0.1") -> tuple[int, dict, bytes]:
    with closing(connect(port, source)) as s:
        s.sendall(raw)
        return answer(s)


def post_game(port: int, forwarded: str | None = None, source: str = "127.0.0.1") -> int:
    body = json.dumps({"bots": ["random", "random", "random"]}).encode()
    extra = f"X-Forwarded-For: {forwarded}\r\n" if forwarded else ""
    raw = (f"POST /v1/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}"
           f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    return request(port, raw, source)[0]


HEALTH = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def health_ms(port: int, source: str = "127.0.0.9") -> float:
    t0 = time.perf_counter()
    status, _, _ = request(port, HEALTH, source)
    assert status == 200
    return (time.perf_counter() - t0) * 1000


# --------------------------------------------------------------------------- who a client is
def test_forged_forwarded_headers_do_not_make_one_client_many(live):
    """Each POST claims another X-Forwarded-For; all are the one peer, so it holds 2 games (its own
    oldest give way) and a second client still gets one."""
    port, app = live
    for k in range(12):
        assert post_game(port, forwarded=f"198.51.100.{k}") == 200  # from 127.0.0.1, which uvicorn alone would trust
    owners = {held.owner for held in app.state.games._games.values()}
    assert owners <= {"127.0.0.1", "127.0.0.3"} and len(app.state.games) <= LIMITS.games_per_client
    assert post_game(port, source="127.0.0.3") == 200


def test_a_trusted_proxy_names_the_client_right_most_untrusted_first():
    clients = ClientAddresses(("10.0.0.0/8",))
    scope = lambda peer, xff: {"client": (peer, 1), "headers": [(b"x-forwarded-for", xff.encode())]}  # noqa: E731
    assert clients.of(scope("10.1.2.3", "203.0.113.9, 10.0.0.7")) == "203.0.113.9"
    assert clients.of(scope("10.1.2.3", "forged, 198.51.100.4")) == "198.51.100.4", "what the client wrote is left of it"
    assert clients.of(scope("192.0.2.1", "203.0.113.9")) == "192.0.2.1", "an untrusted peer's header is ignored"
    assert ClientAddresses().of(scope("127.0.0.1", "203.0.113.9")) == "127.0.0.1", "no proxy trusted by default"
    with pytest.raises(ValueError, match="trusted proxy"):
        ClientAddresses(("10.0.0.0/33",))


def test_one_client_cannot_hold_every_connection(live):
    """Past connections_per_client, a JSON 503 with Retry-After; others are served meanwhile."""
    port, _ = live
    held = [connect(port, "127.0.0.4") for _ in range(LIMITS.connections_per_client)]
    try:
        for s in held:
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        time.sleep(0.2)
        status, headers, body = request(port, HEALTH, "127.0.0.4")
        assert status == 503 and headers["retry-after"] == "1" and headers["content-type"] == "application/json"
        assert "connections open" in json.loads(body)["detail"]
        assert health_ms(port) < 1000
    finally:
        for s in held:
            s.close()
    time.sleep(0.2)
    assert request(port, HEALTH, "127.0.0.4")[0] == 200, "its connections closed, the client is served again"


def test_an_endless_header_line_is_cut_at_the_header_limit(live):
    port, _ = live
    with closing(connect(port, "127.0.0.5")) as s:
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: ")
        status = None
        try:
            for _ in range(64):
                s.sendall(b"a" * 1024)
                assert health_ms(port) < 1000, "the service answers others meanwhile"
        except (BrokenPipeError, ConnectionResetError):
            pass
        status, headers, body = answer(s)
    assert status == 431 and "headers are longer than 4096 bytes" in json.loads(body)["detail"]


@pytest.mark.parametrize("raw", [
    b"POST /v1/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n{}",
    b"POST /v1/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
    b"POST /v1/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    b"\x16\x03\x01 garbage request line\r\n\r\n",
    b"GET /v1/health HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /v1/health\x00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: rebound.example\r\n\r\n",
    b"POST /v1/act HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
])
def test_malformed_framing_gets_a_json_4xx_or_a_closed_connection(live, raw):
    port, _ = live
    with closing(connect(port, "127.0.0.6")) as s:
        s.sendall(raw)
        try:
            got = s.recv(65536)
        except ConnectionResetError:
            got = b""
    if got:
        status, headers, body = answer_from(got)
        assert 400 <= status < 500 and headers["content-type"] == "application/json", got
        json.loads(body)
    assert health_ms(port) < 1000


def test_a_websocket_upgrade_is_answered_as_plain_http(live):
    """The service has no WebSocket endpoint: an upgrade request is served as the HTTP request it is
    (JSON, security headers), never handed to a WebSocket handler's plain-text refusal."""
    port, _ = live
    raw = (b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    status, headers, body = request(port, raw)
    assert status == 200 and headers["content-type"] == "application/json" and json.loads(body)["status"] == "ok"


def answer_from(data: bytes) -> tuple[int, dict, bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    return int(lines[0].split()[1]), dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line), body


# --------------------------------------------------------------------------- host, page, docs
def test_a_foreign_host_name_is_refused_where_names_are_listed():
    client = TestClient(create_app(None, allowed_hosts=LOOPBACK_HOSTS))
    assert client.get("/v1/health", headers={"host": "localhost:8000"}).status_code == 200
    assert client.get("/v1/health", headers={"host": "[::1]:8000"}).status_code == 200
    r = client.get("/v1/health", headers={"host": "rebound.example:8000"})
    assert r.status_code == 421 and "not served here" in r.json()["detail"]
    assert default_hosts("127.0.0.1") == LOOPBACK_HOSTS and default_hosts("::1") == LOOPBACK_HOSTS
    assert default_hosts("0.0.0.0") is None, "listening on every interface: any name unless --allowed-host"


def test_the_page_has_no_inline_script_and_every_answer_security_headers():
    client = TestClient(create_app(None))
    page = client.get("/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert page.headers["x-content-type-options"] == "nosniff" and page.headers["referrer-policy"] == "no-referrer"
    assert "<script>" not in page.text and "<style>" not in page.text and 'src="/static/app.js"' in page.text
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    for r in (client.get("/v1/health"), client.get("/v1/games/nope"), client.post("/v1/act", json={})):
        assert r.headers["x-content-type-options"] == "nosniff" and "frame-ancestors" in r.headers["content-security-policy"]
    assert client.get("/docs").status_code == 404, "no page that loads scripts from a CDN, unless asked"
    assert TestClient(create_app(None, docs=True)).get("/docs").status_code == 200


# --------------------------------------------------------------------------- deals
def test_deals_and_bots_draw_128_bit_independent_seeds(monkeypatch):
    """A table's deal seed and each bot's are 128 bits from the OS, none derived from another (a
    seat that knows its hand cannot search the seeds); with a debugging seed, spawned streams."""
    seeds = [table_seeds() for _ in range(20)]
    assert all(len(set(t)) == 5 for t in seeds)
    assert max(s for t in seeds for s in t) >= 2**100 and all(s < 2**128 for t in seeds for s in t)
    debug = table_seeds(7)
    assert debug == table_seeds(7) and all(b - debug[0] not in range(1, 5) for b in debug[1:])
    drawn, dealt = [], []
    monkeypatch.setattr(serve, "table_seeds", lambda seed=None: drawn.append(table_seeds(seed)) or drawn[-1])
    monkeypatch.setattr(serve, "Table", lambda *args: dealt.append(args[-1]) or Table(*args))
    r = TestClient(create_app(None)).post("/v1/games", json={"bots": ["random", "heuristic", "random"]})
    assert r.status_code == 200 and dealt == [drawn[0][0]], "the table deals from the 128-bit seed"


def test_at_the_connection_cap_the_slowest_connection_makes_room():
    """Slow connections from many addresses fill the service: a new request still gets in, by
    closing the connection that has waited longest for its headers."""
    limits = ServiceLimits(max_connections=8, connections_per_client=8, header_timeout=30.0)
    with running_server(create_app(None, limits), **uvicorn_options(limits)) as port:
        slow = [connect(port, f"127.0.{k}.1") for k in range(1, 9)]
        for s in slow:
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(0.3)
        for k in range(3):
            status, _, _ = request(port, HEALTH, f"127.0.{20 + k}.1")
            assert status == 200, "a new client is served at the cap"
        closed = 0
        for s in slow:
            s.settimeout(0.5)
            try:
                closed += s.recv(1) == b""
            except ConnectionResetError:
                closed += 1
            except TimeoutError:
                pass
            s.close()
        assert closed >= 1, "the oldest slow connections were closed for them"


def test_the_open_file_limit_is_raised_to_fit_the_connection_cap():
    resource = pytest.importorskip("resource")
    from cuatrola_serve.serve import allow_open_files

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        allow_open_files(1256)
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 1256, "else accepting fails for everyone at 256"
        if hard != resource.RLIM_INFINITY:
            with pytest.raises(ValueError, match="open files"):
                allow_open_files(hard + 1)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_browser_asks_for_a_favicon_and_gets_one():
    client = TestClient(create_app(None))
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.content.startswith(b"<svg") and icon.headers["x-content-type-options"] == "nosniff"


def test_the_service_says_its_address_when_it_starts(monkeypatch, capsys):
    from cuatrola_serve import serve

    bound = []
    monkeypatch.setattr(serve, "serve_on", lambda sock, *args: bound.append(sock.getsockname()) or sock.close())
    port = free_port()
    assert serve.main(["--model", "none", "--port", str(port)]) == 0
    assert f"serving on http://127.0.0.1:{port}/" in capsys.readouterr().err and bound == [("127.0.0.1", port)]


def test_a_busy_port_is_one_line_before_anything_is_said(capsys):
    from cuatrola_serve import serve

    with closing(socket.socket()) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert serve.main(["--model", "none", "--port", str(port)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Address already in use" in err[0] and "serving on" not in err[0], err
