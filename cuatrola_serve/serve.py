"""The bot service: an ONNX Cuatrola bot over HTTP, and a browser game against it.

    cuatrola-serve --port 8000                      # the shipped model (or --model FILE.onnx)
    curl -s localhost:8000/v1/health
    curl -s localhost:8000/v1/act -H 'content-type: application/json' \\
         -d '{"state": {"seat": 1, "dealer": 0, "muestra": 13, "hand": [0, 4, 9, 17, 19]}, "level": "expert"}'

Open http://localhost:8000/ to play in a browser (you and three bots). The OpenAPI schema is
at ``/openapi.json`` and the interactive docs at ``/docs``.

==========================  ===============================================================
endpoint                    what it does
==========================  ===============================================================
``GET /v1/health``          status, model card summary, levels
``POST /v1/act``            ``{"state": GameState, "level"}`` -> action, name, probabilities
``POST /v1/games``          a new browser game: ``{"seat", "bots", "rules", "target"}``
``GET /v1/games/{id}``      the human seat's view of a game
``POST /v1/games/{id}/act`` the human's action, then the bots' -> the new view
``GET /``                   the browser page
==========================  ===============================================================

Safety: request bodies are capped (``--max-body``, 16 KiB by default) and read as JSON into
typed models (unknown fields refused); the model is fixed at start, so no request names a
file; nothing is evaluated or unpickled. Bad input gets a 4xx whose message names the field.
The server keeps every hidden hand: a game view carries only the human seat's own cards.
"""

from __future__ import annotations

import dataclasses
import errno
import importlib.util
import ipaddress
import json
import secrets
import socket
import sys
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

import numpy as np

try:
    import resource  # the limit of open files (Unix)
except ImportError:
    resource = None
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from agents.models import ONNX_MODEL
from cuatrola_env.cli import ArgumentParser, float_in, int_in, run_main
from cuatrola_env.rules import PRESETS, get_rules

from .bot import LEVELS, Bot, BotStateError, replay_state, seat_state
from .guard import (
    LOOPBACK_HOSTS,
    Busy,
    ClientAddresses,
    GameStore,
    HostAndHeaders,
    RequestGuard,
    SearchPool,
    ServiceLimits,
    guarded_protocol,
)
from .state import SeatState, strict_int
from .table import BASELINES, Table, make_player

Level = Literal[tuple(LEVELS)]  # the names come from agents.policy.LEVELS, written once
BotLevel = Literal[tuple(LEVELS) + BASELINES]
Rules = Literal[tuple(PRESETS)]


class ActRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    state: SeatState
    level: Level = "expert"


class ActResponse(BaseModel):
    action: int
    name: str
    probabilities: list[float]
    legal: list[int]
    level: str


class NewGame(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    seat: strict_int(0, 3, "the human's seat") = 0
    bots: list[BotLevel] = Field(default=["expert", "expert", "expert"], min_length=3, max_length=3,
                                 description="levels of the other three seats, in seat order")
    rules: Rules = "online"
    target: strict_int(1, 21, "match target (default: the preset's)") | None = None
    seed: strict_int(0, 2**31 - 1, "debugging only (--allow-seed): the deal's seed; it reveals every hand") | None = None


class HumanAction(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: strict_int(0, 23, "action id: a card 0..19 or a bid 20..23")


class Error(BaseModel):
    detail: str | list[dict] = Field(description="what is wrong: a message, or (422) one entry per invalid field")


def _answers(*codes: int) -> dict:
    """OpenAPI entries for the error statuses an endpoint returns."""
    meaning = {400: "a well-formed request that cannot be played (the message names the field)",
               404: "no such game (never created, or forgotten)", 408: "the request body took too long to arrive",
               409: "the game is over", 413: "the request body is too large",
               422: "a malformed request (each entry's loc names the field)",
               503: "busy: the search queue or the game store is full (see Retry-After), or no model is loaded"}
    return {c: {"model": Error, "description": meaning[c]} for c in codes}


def _json(status: int, detail, headers: dict | None = None) -> Response:
    """A JSON error whose bytes are always valid: non-ASCII escaped, so a lone surrogate echoed
    from the request cannot break the encoding, and no NaN or infinity."""
    try:
        body = json.dumps({"detail": detail}, ensure_ascii=True, allow_nan=False, default=str)
    except ValueError:
        body = json.dumps({"detail": "invalid request"})
    return Response(body, status, headers=headers, media_type="application/json")


def _validation_errors(errors) -> list[dict]:
    """Pydantic's errors without the echoed input (which may not even be encodable)."""
    return [{"loc": [p if isinstance(p, int) else str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")),
             "type": str(e.get("type", ""))} for e in errors]


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return _json(422, _validation_errors(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, exc: StarletteHTTPException) -> Response:
        return _json(exc.status_code, exc.detail, getattr(exc, "headers", None))

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy) -> Response:
        return _json(503, str(exc), {"Retry-After": str(exc.retry_after)})


class Service:
    """What the endpoints share: the bot, the levels it offers, the search pool, the games and the
    limits; one method per endpoint (:func:`create_app` routes them)."""

    def __init__(self, model: str | Path | None, limits: ServiceLimits, clients: ClientAddresses | None = None):
        self.limits, self.clients = limits, clients or ClientAddresses()
        self.bot = Bot.load(model) if model is not None else None
        searches = self.bot is not None and SEARCH
        self.levels = [lv for lv in LEVELS if searches or not LEVELS[lv].search] if self.bot else []
        self.pool = SearchPool(str(model), limits.search_workers, limits.search_queue,
                               limits.search_per_client) if searches else None
        self.games = GameStore(limits.max_games, limits.games_per_client, limits.game_idle)
        self.page = resources.files("cuatrola_serve").joinpath("static/index.html").read_text(encoding="utf-8")

    @asynccontextmanager
    async def lifespan(self, app):
        yield
        if self.pool is not None:
            self.pool.close()

    async def health(self) -> dict:
        card, pool = self.bot.card if self.bot else None, self.pool
        return {
            "status": "ok",
            "model": None if card is None else {
                "file": card["model"], "sha256": card["sha256"], "obs_version": card["obs_version"],
                "rules": card["rules"]["name"], "decisions_trained": card["training"]["decisions"],
            },
            "models": [] if self.bot is None else [  # one per rules preset: each game is played by its preset's
                {"rules": p.card["rules"]["name"], "file": p.card["model"], "sha256": p.card["sha256"]}
                for p in self.bot.policies],
            "levels": self.levels + list(BASELINES),
            "search": None if pool is None else {"ready": pool.ready, "workers": pool.workers,
                                                 "capacity": pool.capacity, "in_use": pool.in_use},
            "games": len(self.games),
        }

    async def act(self, req: ActRequest, request: Request) -> dict:
        if self.bot is None:
            raise HTTPException(503, "no model loaded: start the service with --model")
        if req.level not in self.levels:
            raise HTTPException(400, f"level {req.level!r} needs numba on the server (pip install numba)")
        state = req.state.model_dump(exclude_none=True)
        try:
            if LEVELS[req.level].search:  # checked here (a millisecond), searched in a worker process
                replay_state(state)
                with self.pool.slot(self.clients.of(request.scope)):
                    out = await self.pool.decide(state)
            else:  # about a millisecond of CPU: in the event loop
                out = self.bot.with_level(req.level).decide(state)
        except BotStateError as e:
            raise HTTPException(400, f"state.{e}") from None
        return {**out, "level": req.level}

    async def new_game(self, req: NewGame, request: Request) -> dict:
        self._check_new_game(req)
        client = self.clients.of(request.scope)
        if "master" in req.bots:
            with self.pool.slot(client):  # taken before the bots play: a busy pool changes nothing
                table = await run_in_threadpool(self._new_table, req)
        else:
            table = self._new_table(req)
        return {"id": self.games.add(table, client), **table.view()}

    def get_game(self, gid: Annotated[str, Field(max_length=64)]) -> dict:
        game = self._held(gid)
        with game.lock:
            return {"id": gid, **game.table.view()}

    async def game_act(self, gid: Annotated[str, Field(max_length=64)], req: HumanAction, request: Request) -> dict:
        game = self._held(gid)
        if not any(isinstance(p, RemoteSearch) for p in game.table.players.values()):
            return {"id": gid, **self._play(game, req.action)}
        with self.pool.slot(self.clients.of(request.scope)):
            return {"id": gid, **await run_in_threadpool(self._play, game, req.action)}

    def index(self) -> str:
        return self.page

    @staticmethod
    def static_file(name: str, media: str):
        """The endpoint of one of the page's own files (read once; no request names a path)."""
        body = resources.files("cuatrola_serve").joinpath(f"static/{name}").read_bytes()

        def serve_file() -> Response:
            return Response(body, media_type=media)

        return serve_file

    # ------------------------------------------------------------------ the games
    def _check_new_game(self, req: NewGame) -> None:
        if req.seed is not None and not self.limits.allow_seed:
            raise HTTPException(400, "seed: a client-chosen deal seed is refused (it would reveal every hand); "
                                     "the service accepts one only when started with --allow-seed, for debugging")
        if self.bot is None and any(lv not in BASELINES for lv in req.bots):
            raise HTTPException(400, f"bots: levels other than {' and '.join(BASELINES)} need a model (--model)")
        if any(lv in LEVELS and lv not in self.levels for lv in req.bots):  # a search level, no numba
            raise HTTPException(400, "bots: level master needs numba on the server (pip install numba)")

    def _new_table(self, req: NewGame) -> Table:
        others = [s for s in range(4) if s != req.seat]
        deal_seed, *bot_seeds = table_seeds(req.seed)
        players = {s: _player(lv, self.bot, self.pool, bot_seeds[s]) for s, lv in zip(others, req.bots, strict=True)}
        rules = get_rules(req.rules, **({} if req.target is None else {"target": req.target}))
        return Table(players, req.seat, rules, "match", deal_seed)

    def _held(self, gid: str):
        game = self.games.get(gid)
        if game is None:
            raise HTTPException(404, f"no game {gid!r} (games unused for {self.limits.game_idle:g} s are forgotten)")
        return game

    @staticmethod
    def _play(game, action: int) -> dict:
        with game.lock:
            table = game.table
            if table.game.over:
                raise HTTPException(409, "the game is over")
            if table.game.current_player != table.human:  # the bots were interrupted (a search worker stopped)
                view = table.resume()
                raise HTTPException(409, f"the bots have played on since your last view; legal now: {view['legal']}")
            legal = table.view()["legal"]
            if action not in legal:
                raise HTTPException(400, f"action: {action} is not legal now; legal: {legal}")
            return table.play(action)


def create_app(model: str | Path | None = ONNX_MODEL, limits: ServiceLimits | None = None,
               trusted_proxies: tuple[str, ...] = (), allowed_hosts: tuple[str, ...] | None = None,
               docs: bool = False) -> FastAPI:
    """The service. ``model=None`` serves only the baseline levels (heuristic, random).

    ``trusted_proxies``: networks (CIDR) whose ``X-Forwarded-For`` names the client (else it is
    ignored); ``allowed_hosts``: the ``Host`` names served (``None``: any); ``docs``: serve the
    interactive docs at ``/docs`` (their scripts come from a public CDN; off by default).
    """
    service = Service(model, limits or ServiceLimits(), ClientAddresses(trusted_proxies))
    app = FastAPI(title="Cuatrola bot service", version="1", description=__doc__.split("\n\n")[0],
                  lifespan=service.lifespan, docs_url="/docs" if docs else None, redoc_url=None)
    app.add_middleware(RequestGuard, max_body=service.limits.max_body, body_timeout=service.limits.body_timeout)
    app.add_middleware(HostAndHeaders, allowed_hosts=allowed_hosts)
    _install_error_handlers(app)
    app.state.service, app.state.search_pool, app.state.games = service, service.pool, service.games  # operators, tests
    app.get("/v1/health")(service.health)
    app.post("/v1/act", response_model=None, responses={200: {"model": ActResponse}, **_answers(400, 408, 413, 422, 503)})(
        service.act)
    app.post("/v1/games", responses=_answers(400, 408, 413, 422, 503))(service.new_game)
    app.get("/v1/games/{gid}", responses=_answers(404))(service.get_game)
    app.post("/v1/games/{gid}/act", responses=_answers(400, 404, 408, 409, 413, 422, 503))(service.game_act)
    app.get("/", response_class=HTMLResponse, include_in_schema=False)(service.index)
    for name, media in PAGE_FILES.items():
        app.get(f"/static/{name}", include_in_schema=False)(service.static_file(name, media))
    app.get("/favicon.ico", include_in_schema=False)(service.static_file("favicon.svg", "image/svg+xml"))
    return app


SEARCH = importlib.util.find_spec("numba") is not None  #: level master (search) is available

#: the page's own script and style sheet (the page has no inline script: see guard.SECURITY_HEADERS)
PAGE_FILES = {"app.js": "text/javascript", "app.css": "text/css"}


def table_seeds(seed: int | None = None) -> list[int]:
    """The seeds of a table: its deals', then one for each seat's bot, each 128 bits drawn from the
    operating system, so that no seat's view narrows down the others' (with a debugging ``seed``:
    independent streams spawned from it)."""
    if seed is None:
        return [secrets.randbits(128) for _ in range(5)]
    return [int.from_bytes(child.generate_state(4, np.uint32).tobytes(), "little")
            for child in np.random.SeedSequence(seed).spawn(5)]


class RemoteSearch:
    """A table seat at level master: each decision is searched by the pool's worker processes (the
    calling request holds a slot of the pool and runs in a worker thread)."""

    def __init__(self, pool: SearchPool):
        self.pool = pool

    def __call__(self, game) -> int:
        return self.pool.decide_blocking(seat_state(game))["action"]


def _player(level: str, bot, pool: SearchPool | None, seed: int):
    """A table seat's player at ``level``."""
    return RemoteSearch(pool) if level == "master" else make_player(level, bot, seed)


def _http_protocol(limits: ServiceLimits, clients: ClientAddresses | None = None) -> type:
    """uvicorn's fastest HTTP protocol here, guarded (:func:`~cuatrola_serve.guard.guarded_protocol`)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as protocol
    except ImportError:  # httptools is optional
        from uvicorn.protocols.http.h11_impl import H11Protocol as protocol
    return guarded_protocol(protocol, limits, clients)


def main(argv=None) -> int:
    p = ArgumentParser(prog="cuatrola-serve", description="Serve a Cuatrola bot over HTTP (and a browser game).")
    p.add_argument("--model", default=str(ONNX_MODEL),
                   help="ONNX model with its card beside it (default: the shipped one; 'none': baselines)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=int_in(1, 65535), default=8000, help="port to listen on (default: 8000)")
    p.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug", "trace"),
                   help="uvicorn's log level (default: warning)")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="CIDR",
                   help="a reverse proxy's network whose X-Forwarded-For names the client (repeatable; default: none, "
                        "so forwarded headers are ignored and each connection's own address is the client)")
    p.add_argument("--allowed-host", action="append", default=None, metavar="NAME",
                   help="a Host name the service answers (repeatable; others get 421); default: the loopback names "
                        f"({', '.join(LOOPBACK_HOSTS)}) when listening on loopback, any name otherwise")
    p.add_argument("--docs", action="store_true",
                   help="serve the interactive API docs at /docs (they load their scripts from a public CDN)")
    for f in dataclasses.fields(ServiceLimits):
        flag = "--" + f.name.replace("_", "-")
        if isinstance(f.default, bool):
            p.add_argument(flag, action="store_true", help=f.metadata["help"])
        else:
            kind = int_in(1) if isinstance(f.default, int) else float_in(0, low_open=True)
            p.add_argument(flag, type=kind, default=f.default, help=f"{f.metadata['help']} (default {f.default})")
    a = p.parse_args(argv)
    try:
        limits = ServiceLimits(**{f.name: getattr(a, f.name) for f in dataclasses.fields(ServiceLimits)})
        allow_open_files(limits.max_connections + FILES_BESIDE_CONNECTIONS)
        hosts = default_hosts(a.host) if a.allowed_host is None else tuple(a.allowed_host)
        app = create_app(None if a.model == "none" else a.model, limits, tuple(a.trusted_proxy), hosts, a.docs)
        sock = listening_socket(a.host, a.port)
    except ValueError as e:  # a bad limit, proxy, address or busy port, or a model that does not fit: one line
        print(f"error: {e}", file=sys.stderr)
        return 2
    shown = f"[{a.host}]" if ":" in a.host else a.host
    print(f"serving on http://{shown}:{a.port}/ (the browser game; the API under /v1, health at /v1/health); "
          "Ctrl-C stops", file=sys.stderr, flush=True)
    serve_on(sock, app, a.log_level, limits)
    return 0


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port``, or :class:`ValueError` saying why not (the port is taken,
    the address is not this machine's) before the service says it is serving."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as e:
        raise ValueError(f"--host {host}: not an address or name this machine resolves ({e.strerror})") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        busy = " (another program listens there: stop it, or choose another --port)" if e.errno == errno.EADDRINUSE else ""
        raise ValueError(f"--host {host} --port {port}: {e.strerror}{busy}") from None
    return sock


def serve_on(sock: socket.socket, app, log_level: str, limits: ServiceLimits) -> None:
    """Run the service on the bound ``sock`` until it is stopped (Ctrl-C or SIGTERM)."""
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, **uvicorn_options(limits, app.state.service.clients))
    uvicorn.Server(config).run(sockets=[sock])


def uvicorn_options(limits: ServiceLimits, clients: ClientAddresses | None = None) -> dict:
    """How uvicorn runs the service: the guarded protocol (connection caps, header bytes and time),
    no WebSocket upgrade (the service has no WebSocket endpoint), and forwarded headers left to
    :class:`~cuatrola_serve.guard.ClientAddresses` alone (uvicorn's own would trust any loopback peer)."""
    return {"http": _http_protocol(limits, clients), "ws": "none", "proxy_headers": False, "server_header": False,
            "timeout_keep_alive": 5, "timeout_graceful_shutdown": limits.shutdown_timeout}


#: files the service keeps open besides its connections (models, search workers' pipes, logs), at most
FILES_BESIDE_CONNECTIONS = 256


def allow_open_files(needed: int) -> None:
    """Raise this process's limit of open files to ``needed`` where it is lower (a connection is a
    file: at the limit, accepting fails for everyone); ``ValueError`` if the system's hard limit
    is lower still."""
    if resource is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise ValueError(f"--max-connections needs {needed} open files, and this system allows {hard} "
                         "(raise it with ulimit -n, or lower --max-connections)")
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def default_hosts(host: str) -> tuple[str, ...] | None:
    """The Host names served by default: the loopback names when listening on loopback (a page of
    another site cannot then reach the service by DNS rebinding), any otherwise."""
    try:
        return LOOPBACK_HOSTS if ipaddress.ip_address(host).is_loopback else None
    except ValueError:
        return LOOPBACK_HOSTS if host == "localhost" else None


if __name__ == "__main__":
    sys.exit(run_main(main))
