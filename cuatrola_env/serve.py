"""The bot service: an ONNX Cuatrola bot over HTTP, and a browser game against it.

    cuatrola-serve --model models/cuatrola.onnx --port 8000
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

import argparse
import importlib.util
import json
import secrets
import sys
import threading
from collections import OrderedDict
from importlib import resources
from pathlib import Path
from typing import Literal

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from .bot import LEVELS, Bot, BotStateError
from .rules import get_rules
from .table import BASELINES, Table

MAX_BODY = 16 * 1024
MAX_GAMES = 1000

Level = Literal["master", "expert", "strong", "medium", "easy", "beginner"]
BotLevel = Literal["master", "expert", "strong", "medium", "easy", "beginner", "heuristic", "random"]


class GameState(BaseModel):
    """One seat's view of a hand, as a game server holds it (see :mod:`cuatrola_env.bot`)."""

    model_config = ConfigDict(extra="forbid")
    seat: int = Field(ge=0, le=3, description="the seat the bot plays; it must be its turn")
    dealer: int = Field(ge=0, le=3, description="the dealer's seat")
    muestra: int = Field(ge=0, le=19, description="card id of the muestra (trump suit)")
    hand: list[int] = Field(max_length=5, description="the seat's unplayed cards (card ids)")
    bids: list[int | str] = Field(default=[], max_length=4, description="bids so far from la mano: names or ids 20..23")
    tricks: list[list[list[int]]] = Field(
        default=[], max_length=5, description="one list per trick of [seat, card] in play order")
    score: list[int] = Field(default=[0, 0], min_length=2, max_length=2, description="match score [team 0, team 1]")
    rules: Literal["online", "traditional"] = Field(default="online", description="rules preset")
    contract: str | None = Field(default=None, description="optional check of the contract")


class ActRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    state: GameState
    level: Level = "expert"


class ActResponse(BaseModel):
    action: int
    name: str
    probabilities: list[float]
    legal: list[int]
    level: str


class NewGame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seat: int = Field(default=0, ge=0, le=3, description="the human's seat")
    bots: list[BotLevel] = Field(default=["expert", "expert", "expert"], min_length=3, max_length=3,
                                 description="levels of the other three seats, in seat order")
    rules: Literal["online", "traditional"] = "online"
    target: int | None = Field(default=None, ge=1, le=21, description="match target (default: the preset's)")
    seed: int | None = Field(default=None, ge=0, le=2**31 - 1)


class HumanAction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: int = Field(ge=0, le=23, description="action id: a card 0..19 or a bid 20..23")


class BodyLimit:
    """ASGI middleware: refuse (413) a request body over ``max_body`` bytes, whether or not it
    declares its length, before anything parses it."""

    def __init__(self, app, max_body: int = MAX_BODY):
        self.app, self.max_body = app, max_body

    async def _reject(self, send) -> None:
        body = json.dumps({"detail": f"request body larger than {self.max_body} bytes"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return await self._reject(send)
        body, more = b"", True
        while more:  # read the whole body, up to the limit
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return None
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
            if len(body) > self.max_body:
                return await self._reject(send)
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


SEARCH = importlib.util.find_spec("numba") is not None  #: level master (search) is available


def _warm_up_search() -> None:
    from agents.solver import warm_up

    warm_up()


def create_app(model: str | Path | None = "models/cuatrola.onnx", max_body: int = MAX_BODY,
               max_games: int = MAX_GAMES) -> FastAPI:
    """The service. ``model=None`` serves only the baseline levels (heuristic, random)."""
    bot = Bot.load(model) if model is not None else None
    levels = [lv for lv in LEVELS if SEARCH or not LEVELS[lv].search] if bot else []
    if bot is not None and SEARCH:  # compile the solver of level master now, not on its first request
        threading.Thread(target=_warm_up_search, daemon=True).start()
    app = FastAPI(title="Cuatrola bot service", version="1", description=__doc__.split("\n\n")[0])
    games: OrderedDict[str, tuple[Table, threading.Lock]] = OrderedDict()
    games_lock = threading.Lock()
    app.add_middleware(BodyLimit, max_body=max_body)

    @app.get("/v1/health")
    def health() -> dict:
        card = bot.card if bot else None
        return {
            "status": "ok",
            "model": None if card is None else {
                "file": card["model"], "sha256": card["sha256"], "obs_version": card["obs_version"],
                "rules": card["rules"]["name"], "decisions_trained": card["training"]["decisions"],
            },
            "levels": levels + list(BASELINES),
            "games": len(games),
        }

    @app.post("/v1/act", response_model=None, responses={200: {"model": ActResponse}})
    async def act(req: ActRequest) -> dict:
        if bot is None:
            raise HTTPException(503, "no model loaded: start the service with --model")
        if req.level not in levels:
            raise HTTPException(400, f"level {req.level!r} needs numba on the server (pip install numba)")
        state = req.state.model_dump(exclude_none=True)
        b = bot.with_level(req.level)  # a bot of its own per request: thread-safe
        try:  # about a millisecond of CPU: run in the event loop; a search takes longer: a worker thread
            out = await run_in_threadpool(b.decide, state) if LEVELS[req.level].search else b.decide(state)
        except BotStateError as e:
            raise HTTPException(400, f"state.{e}") from None
        return {**out, "level": req.level}

    @app.post("/v1/games")
    def new_game(req: NewGame) -> dict:
        if bot is not None and any(lv in LEVELS and lv not in levels for lv in req.bots):  # a search level, no numba
            raise HTTPException(400, "level master needs numba on the server (pip install numba)")
        try:
            rules = get_rules(req.rules, **({} if req.target is None else {"target": req.target}))
            seed = req.seed if req.seed is not None else secrets.randbelow(2**31)
            table = Table.with_levels(req.bots, req.seat, rules, bot, seed)
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        gid = secrets.token_urlsafe(12)
        with games_lock:
            games[gid] = (table, threading.Lock())
            while len(games) > max_games:  # forget the least recently used games
                games.popitem(last=False)
        return {"id": gid, **table.view()}

    def _table(gid: str) -> tuple[Table, threading.Lock]:
        with games_lock:
            if gid not in games:
                raise HTTPException(404, f"no game {gid!r} (finished games are forgotten after a while)")
            games.move_to_end(gid)
            return games[gid]

    @app.get("/v1/games/{gid}")
    def get_game(gid: str) -> dict:
        table, lock = _table(gid)
        with lock:
            return {"id": gid, **table.view()}

    @app.post("/v1/games/{gid}/act")
    def game_act(gid: str, req: HumanAction) -> dict:
        table, lock = _table(gid)
        with lock:
            if table.game.over:
                raise HTTPException(409, "the game is over")
            if req.action not in table.view()["legal"]:
                raise HTTPException(400, f"action: {req.action} is not legal now; legal: {table.view()['legal']}")
            return {"id": gid, **table.play(req.action)}

    page = resources.files("cuatrola_env").joinpath("static/index.html").read_text(encoding="utf-8")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index() -> str:
        return page

    return app


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="cuatrola-serve", description="Serve a Cuatrola bot over HTTP (and a browser game).")
    p.add_argument("--model", default="models/cuatrola.onnx", help="ONNX model with its card beside it ('none': baselines)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--max-body", type=int, default=MAX_BODY, help="largest request body in bytes")
    p.add_argument("--log-level", default="warning")
    a = p.parse_args(argv)
    import uvicorn

    try:
        app = create_app(None if a.model == "none" else a.model, a.max_body)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    uvicorn.run(app, host=a.host, port=a.port, log_level=a.log_level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
