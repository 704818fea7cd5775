"""What keeps the bot service up under load and abuse: every limit of :mod:`cuatrola_serve.serve`.

==========================  ==========================================================  =========
piece                       what it bounds                                              default
==========================  ==========================================================  =========
:class:`ServiceLimits`      every limit below, one documented option each               -
:class:`RequestGuard`       a request body's size (413) and how long it may take to     16 KiB,
                            arrive (408)                                                10 s
:func:`guarded_protocol`    each connection before the app sees it: open connections    1,000,
                            in all and from one address (JSON 503, ``Retry-After``),    64 a client,
                            request line and header bytes (JSON 431), the time to       16 KiB,
                            send them (then closed), malformed framing (JSON 400),      10 s,
                            requests sent ahead of their answers (per connection) and   8,
                            their bytes (per client); at shutdown, clients that do      1 MiB,
                            not read are dropped, the rest answered within              5 s
:class:`ClientAddresses`    who a client is: the peer's address; ``X-Forwarded-For``    no proxy
                            only from a trusted proxy (the right-most untrusted hop)
:class:`HostAndHeaders`     security headers on every answer (CSP, nosniff, no          any Host
                            framing, no referrer); with an allow-list, 421 for another
                            ``Host``
:class:`SearchPool`         level ``master`` runs in worker processes: at most          1 + 4,
                            ``workers`` at once and ``queue`` more waiting, at most     2 a client
                            ``per_client`` of them from one client; beyond, 503 with
                            ``Retry-After``
:class:`GameStore`          browser games: at most ``per_client`` live games a client   8, 1,000,
                            (its own oldest is dropped for a new one), ``max_games``    30 min
                            in all (then 503), each forgotten after ``idle`` seconds
                            unused; no client can drop another's game
==========================  ==========================================================  =========

The search runs in other processes so that a search never holds the interpreter lock of the
process that answers ``/v1/health`` and the cheap levels: those never wait behind a search.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import multiprocessing
import os
import re
import secrets
import socket
import threading
import time
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field, fields

from .bot import Bot


@dataclass(frozen=True)
class ServiceLimits:
    """The service's limits; each is a ``cuatrola-serve`` option of the same name."""

    max_body: int = field(default=16 * 1024, metadata={"help": "largest request body, in bytes (413 beyond)"})
    body_timeout: float = field(default=10.0, metadata={"help": "seconds a request body may take to arrive (408 beyond)"})
    header_timeout: float = field(default=10.0, metadata={"help": "seconds a connection may take to send its headers"})
    header_bytes: int = field(default=16 * 1024, metadata={
        "help": "largest request line and headers, in bytes (431 beyond, and the connection closed)"})
    pipeline_depth: int = field(default=8, metadata={
        "help": "requests one connection may have sent and not yet been answered (the rest is read once they are)"})
    read_ahead: int = field(default=1024 * 1024, metadata={
        "help": "bytes one client may have sent ahead of its answers, over all its connections (closed beyond)"})
    shutdown_timeout: float = field(default=5.0, metadata={
        "help": "seconds a shutdown waits for the requests being answered before it cancels them"})
    max_connections: int = field(default=1000, metadata={"help": "open connections in all (503 beyond)"})
    connections_per_client: int = field(default=64, metadata={
        "help": "open connections from one address (503 beyond; a trusted proxy is not capped)"})
    search_workers: int = field(default=1, metadata={"help": "processes running level master (one core each)"})
    search_queue: int = field(default=4, metadata={"help": "master requests that may wait for a worker (503 beyond)"})
    search_per_client: int = field(default=2, metadata={"help": "master requests one client may have running or waiting"})
    max_games: int = field(default=1000, metadata={"help": "browser games held in all (503 beyond)"})
    games_per_client: int = field(default=8, metadata={"help": "live browser games one client may hold"})
    game_idle: float = field(default=1800.0, metadata={"help": "seconds after which an unused browser game is forgotten"})
    allow_seed: bool = field(default=False, metadata={
        "help": "debugging only: accept a client-chosen deal seed in POST /v1/games (whoever knows the seed knows every hand)"})

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.type != "bool" and (isinstance(v, bool) or not v > 0):
                raise ValueError(f"{f.name} must be positive, got {v!r}")


class Busy(Exception):
    """The service cannot take this request now; ``retry_after`` seconds is a fair wait."""

    def __init__(self, message: str, retry_after: int = 1):
        super().__init__(message)
        self.retry_after = retry_after


# --------------------------------------------------------------------------- answers below the app
#: headers on every answer: no sniffing, no framing, no referrer; the page's scripts and styles
#: come from the service itself (no inline script, no CDN)
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
)

REASONS = {400: "Bad Request", 408: "Request Timeout", 413: "Content Too Large", 421: "Misdirected Request",
           431: "Request Header Fields Too Large", 503: "Service Unavailable"}


def _json_answer(status: int, detail: str, retry_after: int | None = None) -> tuple[dict, dict]:
    """The ASGI messages of a JSON error answer."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    return {"type": "http.response.start", "status": status, "headers": headers}, {"type": "http.response.body", "body": body}


async def send_json_answer(send, status: int, detail: str) -> None:
    """Answer a request with a JSON error from ASGI middleware (before the app sees it)."""
    for message in _json_answer(status, detail):
        await send(message)


def raw_json_answer(status: int, detail: str, retry_after: int | None = None) -> bytes:
    """The same answer as HTTP/1.1 bytes, closing the connection: for a refusal made before any
    request is parsed (too many connections, headers too long, malformed framing)."""
    start, body = _json_answer(status, detail, retry_after)
    head = [f"HTTP/1.1 {status} {REASONS[status]}".encode(), *(k + b": " + v for k, v in start["headers"]),
            b"connection: close"]
    return b"\r\n".join(head) + b"\r\n\r\n" + body["body"]


# --------------------------------------------------------------------------- who a client is
class ClientAddresses:
    """A request's client: its peer's address, or, when the peer is a trusted proxy (``--trusted-proxy
    CIDR``), the right-most address of ``X-Forwarded-For`` that is not a trusted proxy. Forwarded
    headers from anyone else are ignored, so that no client can pose as many."""

    def __init__(self, trusted: tuple[str, ...] = ()):
        try:
            self.trusted = tuple(ipaddress.ip_network(c, strict=False) for c in trusted)
        except ValueError as e:
            raise ValueError(f"trusted proxy: {e}") from None

    def is_trusted(self, address: str | None) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self.trusted)

    def of(self, scope) -> str:
        peer = scope["client"][0] if scope.get("client") else "unknown"
        if not self.trusted or not self.is_trusted(peer):
            return peer
        hops = [h.strip() for v in _header_values(scope, b"x-forwarded-for") for h in v.split(",")]
        for hop in reversed(hops):
            if not self.is_trusted(hop):
                return _address(hop)
        return peer


def _header_values(scope, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope["headers"] if k == name]


def _address(hop: str) -> str:
    """A forwarded hop as an address (an unparsable one kept as text: it still keys its own limits)."""
    try:
        return str(ipaddress.ip_address(hop))
    except ValueError:
        return hop[:64]


# --------------------------------------------------------------------------- host and headers
class HostAndHeaders:
    """ASGI middleware: the security headers on every answer, and, with ``allowed_hosts``, a request
    whose ``Host`` is not one of them answered 421 (a page on another name cannot reach the service
    through DNS rebinding)."""

    def __init__(self, app, allowed_hosts: tuple[str, ...] | None = None):
        self.app = app
        self.allowed = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if len(_header_values(scope, b"host")) > 1:
            return await send_json_answer(send, 400, "a request has one Host header")
        host = _host_name(scope)
        if host is None:
            return await send_json_answer(send, 400, "the Host header is not a host name or address with an optional port")
        if self.allowed is not None and host not in self.allowed:
            return await send_json_answer(send, 421, f"host {host[:80]!r} is not served here")

        async def with_headers(message):
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                message = {**message, "headers": [*message.get("headers", []),
                                                  *(h for h in SECURITY_HEADERS if h[0] not in have)]}
            await send(message)

        return await self.app(scope, receive, with_headers)


#: a Host header: a bracketed IPv6 address or a name (letters, digits, dots, hyphens), then an optional port
HOST_PATTERN = re.compile(r"(?:\[(?P<ip6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_.-]*))(?::[0-9]{1,5})?")


def _host_name(scope) -> str | None:
    """The request's Host header without its port (``[::1]:8000`` -> ``::1``), or ``None`` when it is
    not one (``[::1]evil.com``, spaces, a userinfo part...): nothing is guessed from a malformed one."""
    host = next(iter(_header_values(scope, b"host")), "").strip().lower()
    found = HOST_PATTERN.fullmatch(host)
    if found is None:
        return None
    if found["ip6"] is not None:
        try:
            return str(ipaddress.IPv6Address(found["ip6"]))
        except ValueError:
            return None
    return found["name"]


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


# --------------------------------------------------------------------------- request bodies


class RequestGuard:
    """ASGI middleware: a request body over ``max_body`` bytes gets 413 (whether or not it declares
    its length), one that has not fully arrived ``body_timeout`` seconds after the headers 408;
    either before anything parses it."""

    def __init__(self, app, max_body: int, body_timeout: float):
        self.app, self.max_body, self.body_timeout = app, max_body, body_timeout

    async def _read_body(self, receive) -> bytes | None:
        """The whole body, or its first bytes past ``max_body``; ``None`` if the client disconnects."""
        parts, size, more = [], 0, True
        while more and size <= self.max_body:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return None
            parts.append(msg.get("body", b""))
            size += len(parts[-1])
            more = msg.get("more_body", False)
        return b"".join(parts)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return await send_json_answer(send, 413, f"request body larger than {self.max_body} bytes")
        try:  # one deadline for the whole body (not a timer per message: a slow body sends many)
            body = await asyncio.wait_for(self._read_body(receive), self.body_timeout)
        except asyncio.TimeoutError:
            return await send_json_answer(send, 408, f"the request body did not arrive within {self.body_timeout:g} s")
        if body is None:  # the client left
            return None
        if len(body) > self.max_body:
            return await send_json_answer(send, 413, f"request body larger than {self.max_body} bytes")
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


#: bytes handed to the HTTP parser at a time: a read holding thousands of pipelined requests is
#: parsed a slice at a time, so no more than ``pipeline_depth`` (plus one slice's worth) are queued
FEED_SLICE = 512


#: bytes of answers the service keeps for a client that has not read them (the kernel's send buffer
#: and the transport's own); beyond, answering that connection waits until the client reads
ANSWERS_AHEAD = 64 * 1024


def _bound_answers_ahead(transport) -> None:
    """Cap what one connection's unread answers may hold: the socket's send buffer (which loopback
    and fast links would otherwise grow to megabytes, letting a client that never reads have
    thousands of pipelined requests answered) and the transport's write buffer."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, ANSWERS_AHEAD)
        except OSError:
            pass
    transport.set_write_buffer_limits(high=ANSWERS_AHEAD)


def guarded_protocol(protocol: type, limits: ServiceLimits, clients: ClientAddresses | None = None) -> type:
    """A subclass of uvicorn's HTTP ``protocol`` that guards each connection before the app sees it:

    - at most ``limits.connections_per_client`` open connections from one address (a trusted
      proxy's aside), and ``limits.max_connections`` in all: at that cap one connection the service
      is waiting on (for a request's headers or its body) is closed to make room, the oldest of the
      client with the most connections open; only when every connection is being answered is the
      new one refused; a refusal is a JSON 503 with ``Retry-After``, closed;
    - at most ``limits.pipeline_depth`` requests of one connection parsed and not yet answered: the
      rest of what it sent stays unparsed and the connection is not read until they are answered;
      such unparsed bytes of one client, over all its connections, at most ``limits.read_ahead``
      (beyond, the connection is closed);
    - a request line and headers of at most ``limits.header_bytes`` bytes, however they arrive (a
      JSON 431, closed: no header line grows without end, whatever the parser);
    - whole headers within ``limits.header_timeout`` seconds of the connection opening or of its
      last answer (else closed: slow or stalled clients);
    - malformed framing answered with a JSON 400, closed;
    - at shutdown, requests queued behind the one being answered are dropped, and a client that
      does not read its answers is disconnected at once.
    """
    clients = clients or ClientAddresses()
    open_by_peer: dict[str, int] = {}  # shared by every connection of this server
    held_by_peer: dict[str, int] = {}  # bytes read ahead of their answers (unparsed, or queued bodies), by client
    waiting: OrderedDict = OrderedDict()  # connections waiting for a request's headers or body, longest first

    class Guarded(protocol):
        _header_timer = None
        _waiting_cycle = None
        _peer = None
        _header_bytes = 0  # bytes received since the service began waiting for headers
        _parsed_header_bytes = 0  # the request line and headers of the request being parsed
        _held = b""  # read, not yet parsed (the connection has pipeline_depth requests unanswered)
        _ahead = 0  # this connection's share of held_by_peer
        _refusal = None  # the answer to give when the parser is stopped from a callback

        def connection_made(self, transport):
            super().connection_made(transport)
            _bound_answers_ahead(transport)
            self._peer = self.client[0] if self.client else "unknown"
            open_by_peer[self._peer] = open_by_peer.get(self._peer, 0) + 1
            if open_by_peer[self._peer] > limits.connections_per_client and not clients.is_trusted(self._peer):
                return self._refuse(503, f"this client already has {limits.connections_per_client} connections open",
                                    retry_after=1)
            if len(self.connections) > limits.max_connections and not self._evict_one():
                return self._refuse(503, f"the service has its maximum of {limits.max_connections} connections open; "
                                         "retry shortly", retry_after=1)
            self._arm_header_timer()

        def _evict_one(self) -> bool:
            """At the cap, close a connection the service is waiting on (slow headers or body, idle
            keep-alive) or whose client is not reading its answers, to make room: the longest-waiting
            one of the client with the most connections open; False if every connection is being
            answered to a client that reads."""
            stalled = [c for c in self.connections if c not in waiting and getattr(c, "flow", None) and c.flow.write_paused]
            live = [c for c in [*waiting, *stalled] if c is not self and not c.transport.is_closing()]
            if not live:
                return False
            victim = max(live, key=lambda c: open_by_peer.get(c._peer, 0))  # the first of the busiest: its oldest
            victim._cancel_header_timer()
            waiting.pop(victim, None)
            victim.transport.close()
            return True

        def _start_asgi_task(self, cycle, app) -> None:  # httptools: the request being answered, remembered
            self._answering = cycle
            super()._start_asgi_task(cycle, app)

        def connection_lost(self, exc):
            answering = getattr(self, "_answering", None)
            if answering is not None and not answering.response_complete:
                answering.disconnected = True  # uvicorn marks only the newest parsed request (wrong when pipelined)
            self._cancel_header_timer()
            waiting.pop(self, None)
            self._held = b""
            self._account(gone=True)
            if self._peer is not None:
                open_by_peer[self._peer] -= 1
                if not open_by_peer[self._peer]:
                    del open_by_peer[self._peer]
                self._peer = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.transport.is_closing():
                return
            in_headers = self._header_timer is not None
            if in_headers:
                self._header_bytes += len(data)
            self._hold(self._held + data)
            if held_by_peer.get(self._peer, 0) > limits.read_ahead and not clients.is_trusted(self._peer):
                self._hold(b"")
                self.transport.close()  # far more sent ahead of its answers than any client needs
                return
            self._feed()
            if self.cycle is not self._waiting_cycle:  # a new request's headers are in
                self._cancel_header_timer()
                if not self.cycle.more_body:  # and its body: the service's turn
                    waiting.pop(self, None)
            elif in_headers and self._header_bytes > limits.header_bytes and not self.transport.is_closing():
                self._refuse(431, f"the request line and headers are longer than {limits.header_bytes} bytes")

        def _feed(self) -> None:
            """Parse what is held, a slice at a time, while fewer than ``pipeline_depth`` requests are
            unanswered; what is left waits (the connection unread) for answers to make room."""
            while (self._held and not self.transport.is_closing() and self._unanswered() < limits.pipeline_depth
                   and not self._queued_body_full()):
                chunk = self._held[:FEED_SLICE]
                self._held = self._held[FEED_SLICE:]
                super().data_received(chunk)
            self._account()
            if self._held and not self.transport.is_closing():
                self.flow.pause_reading()

        def _queued_body_full(self) -> bool:
            """Whether the newest request, still queued behind another, has a body past ``max_body``
            (it will be refused when its turn comes; nothing more of it is read before)."""
            return bool(getattr(self, "pipeline", None)) and len(self.cycle.body) > limits.max_body

        def _unanswered(self) -> int:
            """Requests of this connection parsed and not yet answered."""
            current = self.cycle is not None and not self.cycle.response_complete
            return len(getattr(self, "pipeline", ())) + current

        def _hold(self, data: bytes) -> None:
            self._held = data
            self._account()

        def _account(self, gone: bool = False) -> None:
            """This connection's bytes read ahead of their answers (unparsed, and the bodies of queued
            requests), in its client's total."""
            now = 0 if gone else len(self._held) + sum(len(c.body) for c, _ in getattr(self, "pipeline", ()))
            if self._peer is not None and now != self._ahead:
                held_by_peer[self._peer] = held_by_peer.get(self._peer, 0) + now - self._ahead
                if not held_by_peer[self._peer]:
                    del held_by_peer[self._peer]
            self._ahead = now

        # the parser's callbacks (httptools): the request line and headers counted as they are parsed,
        # so that headers arriving in one segment are capped too
        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._parsed_header_bytes = 0

        def on_url(self, url: bytes) -> None:
            self._count_header_bytes(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count_header_bytes(len(name) + len(value) + 4)
            super().on_header(name, value)

        def _count_header_bytes(self, n: int) -> None:
            self._parsed_header_bytes += n
            if self._parsed_header_bytes > limits.header_bytes:
                self._refusal = (431, f"the request line and headers are longer than {limits.header_bytes} bytes")
                raise ValueError(self._refusal[1])  # stops the parser: answered by send_400_response

        def on_message_complete(self) -> None:
            super().on_message_complete()
            waiting.pop(self, None)  # the whole request is in: the service's turn

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.transport.is_closing():
                return
            self._feed()
            if not self._unanswered():
                self._arm_header_timer()

        def send_400_response(self, msg: str) -> None:  # uvicorn's answer to malformed framing, in JSON
            status, detail = self._refusal or (400, "malformed HTTP request (its request line, headers or framing)")
            self._refuse(status, detail)

        def shutdown(self) -> None:
            """Stop taking requests: those queued behind the one being answered are dropped, and a
            client that is not reading its answers is disconnected now (else it holds the shutdown)."""
            getattr(self, "pipeline", []).clear()
            self._hold(b"")
            if self.flow is not None and self.flow.write_paused:
                self.transport.abort()
                return
            super().shutdown()

        def _refuse(self, status: int, detail: str, retry_after: int | None = None) -> None:
            self._cancel_header_timer()
            waiting.pop(self, None)
            if not self._unanswered():  # never in the middle of another answer
                self.transport.write(raw_json_answer(status, detail, retry_after))
            self.transport.close()

        def _arm_header_timer(self) -> None:
            self._cancel_header_timer()
            self._waiting_cycle, self._header_bytes = self.cycle, 0
            self._header_timer = self.loop.call_later(limits.header_timeout, self._headers_too_slow)
            waiting.pop(self, None)
            waiting[self] = None  # the newest waiter last

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self.cycle is self._waiting_cycle and not self.transport.is_closing():
                waiting.pop(self, None)
                self.transport.close()

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{protocol.__name__}"
    return Guarded


# --------------------------------------------------------------------------- search
_worker_bot: Bot | None = None  # the model of a search worker process

#: how much lower the search workers' CPU priority is than the service's (Unix niceness)
SEARCH_NICENESS = 10


def _start_worker(model: str) -> None:
    """Load the model in a search worker process and compile the solver there; the worker ends
    itself if the service dies (a killed server leaves no searching orphan behind)."""
    global _worker_bot
    from agents.solver import warm_up

    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    os.nice(SEARCH_NICENESS)  # when cores are short, the service's own process (health, cheap levels) goes first
    _worker_bot = Bot.load(model, level="master")
    warm_up()


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _ready() -> bool:
    return _worker_bot is not None


def _search(state: dict) -> dict:
    """Level master's decision for ``state``, in a worker process (a fresh search seed each call)."""
    return _worker_bot.with_level("master", secrets.randbits(31)).decide(state)


class SearchPool:
    """Level-master decisions in ``workers`` processes, with a bounded queue in front of them.

    A request first takes a :meth:`slot` (from the event loop, before it changes anything), which
    raises :class:`Busy` when ``workers + queue`` requests are already running or waiting, or
    ``per_client`` of them are the same client's; then it asks :meth:`decide` (or, from a worker
    thread, :meth:`decide_blocking`: a browser game's bots). A worker process that dies is replaced
    and its request answered with :class:`Busy`, never left hanging.
    """

    def __init__(self, model: str, workers: int, queue: int, per_client: int):
        self.model, self.workers, self.capacity, self.per_client = model, workers, workers + queue, per_client
        self._lock = threading.Lock()
        self._taken: dict[str, int] = {}
        self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a threaded server
        self._executor = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker,
                                             initargs=(self.model,))
        self._warm = [self._executor.submit(_ready) for _ in range(self.workers)]

    @property
    def ready(self) -> bool:
        """Whether the workers have loaded the model and compiled the solver."""
        return all(f.done() for f in self._warm)

    @property
    def in_use(self) -> int:
        return sum(self._taken.values())

    @contextmanager
    def slot(self, client: str):
        """A place in the pool for one request of ``client``, or :class:`Busy`."""
        with self._lock:
            if sum(self._taken.values()) >= self.capacity:
                raise Busy(f"the search is busy ({self.capacity} master requests running or waiting); retry shortly")
            if self._taken.get(client, 0) >= self.per_client:
                raise Busy(f"this client already has {self.per_client} master requests running or waiting")
            self._taken[client] = self._taken.get(client, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._taken[client] -= 1
                if not self._taken[client]:
                    del self._taken[client]

    @contextmanager
    def _restart_if_broken(self):
        try:
            yield
        except BrokenProcessPool:
            with self._lock:
                old = self._executor
                self._start()
            old.shutdown(wait=False, cancel_futures=True)
            raise Busy("a search worker stopped; it is being restarted") from None

    async def decide(self, state: dict) -> dict:
        with self._restart_if_broken():
            return await asyncio.wrap_future(self._executor.submit(_search, state))

    def decide_blocking(self, state: dict) -> dict:
        with self._restart_if_broken():
            return self._executor.submit(_search, state).result()

    def close(self) -> None:
        """Stop the workers now (a search in progress is abandoned)."""
        processes = list((self._executor._processes or {}).values())
        self._executor.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            proc.terminate()


# --------------------------------------------------------------------------- browser games
@dataclass
class Held:
    """One browser game held by the service."""

    table: object
    owner: str
    used: float
    lock: threading.Lock = field(default_factory=threading.Lock)


class GameStore:
    """Browser games by id, capped per client and in all, forgotten when idle.

    A client over ``per_client`` live games loses its own least recently used one; when
    ``max_games`` are held and none is idle, a new game is refused (:class:`Busy`): no client
    can make the service drop another client's game.
    """

    def __init__(self, max_games: int, per_client: int, idle: float, clock=time.monotonic):
        self.max_games, self.per_client, self.idle, self.clock = max_games, per_client, idle, clock
        self._games: OrderedDict[str, Held] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def _forget_idle(self) -> None:
        cutoff = self.clock() - self.idle
        while self._games and next(iter(self._games.values())).used < cutoff:
            self._games.popitem(last=False)

    def add(self, table, owner: str) -> str:
        with self._lock:
            self._forget_idle()
            mine = [gid for gid, held in self._games.items() if held.owner == owner]
            for gid in mine[: max(0, len(mine) - self.per_client + 1)]:
                del self._games[gid]  # the client's own oldest games make room for its new one
            if len(self._games) >= self.max_games:
                raise Busy(f"the service holds its maximum of {self.max_games} games; retry later", retry_after=60)
            gid = secrets.token_urlsafe(12)
            self._games[gid] = Held(table, owner, self.clock())
            return gid

    def get(self, gid: str) -> Held | None:
        with self._lock:
            self._forget_idle()
            held = self._games.get(gid)
            if held is not None:
                held.used = self.clock()
                self._games.move_to_end(gid)
            return held


__all__ = ["Busy", "ClientAddresses", "GameStore", "HostAndHeaders", "RequestGuard", "SearchPool", "ServiceLimits",
           "guarded_protocol", "raw_json_answer"]
