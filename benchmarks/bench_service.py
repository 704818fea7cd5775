"""Load test of the bot service on loopback: open-loop requests at fixed rates.

    python benchmarks/bench_service.py --rate 200 --seconds 20 --runs 3             # expert requests
    python benchmarks/bench_service.py --flood 60 --rate 200 --seconds 10 --runs 3  # + master at 60/s + health
    python benchmarks/bench_service.py --slow-headers 1050 --flood 60 --rate 200 --seconds 10 --runs 3  # + an attacker
    python benchmarks/bench_service.py --slow-bodies 1088 --pipelining 30 --rate 200 --seconds 10 --runs 3  # + two more
    python benchmarks/bench_service.py --bot-only                                   # Bot.decide in-process
    python benchmarks/bench_service.py --bot-only --level master --states 500       # the searching level
    python benchmarks/bench_service.py --bot-only --rules traditional               # states of traditional games
    python benchmarks/bench_service.py --bot-only --level master --worlds 128       # master with another search size
    python benchmarks/bench_service.py --bot-only --agent search:play=rollout --states 500  # any agent spec, from JSON

Starts ``cuatrola-serve`` in a subprocess (its default limits), waits until ``/v1/health``
says the search workers are ready, warms up for 2 s, then sends ``POST /v1/act`` requests at
``--rate`` per second, each scheduled at its time whether or not earlier ones have answered (so
a slow server shows as latency, not as a lower rate), each with a real game state from a pool
drawn beforehand. ``--flood N`` adds, at the same time, level-master requests at N per second
and ``GET /v1/health`` at 20 per second: the search's queue is bounded, so the excess master
requests should get 503 at once while health and the cheap level keep their latency.
``--slow-headers N`` adds an attacker in another process that holds N connections which never
finish their headers, from ``--attackers`` source addresses (another client than the load's),
reopening each as soon as the server closes it (a refusal, or the header time-out).
``--slow-bodies N`` holds N connections that send a 16,000-byte body a byte a second (from 17
addresses), ``--pipelining N`` N connections that send 6,000 requests in one write and never
read. Reports the service's memory before and after the runs, and,
per run and stream, the p50 / p99 / max latency, the answers by status and the time-outs (5 s),
then the medians over runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter

import httpx
import numpy as np

from agents import make_agent, seat_view
from agents.models import ONNX_MODEL
from cuatrola_env.game import Game
from cuatrola_serve.bot import replay_state, seat_state

TIMEOUT = 5.0  #: seconds before a request counts as timed out


def state_pool(n: int, seed: int = 0, rules: str = "online") -> list[dict]:
    """``n`` JSON states of seats to act, from random games under ``rules`` (bids and card play)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        game = Game(rules=rules, seed=int(rng.integers(2**31)))
        while not game.over and len(out) < n:
            out.append(seat_state(game))
            game.step(int(rng.choice(game.legal_actions())))
    return out


class Connections:
    """Keep-alive HTTP/1.1 connections to the service, reused one request at a time: a light client,
    so that on a small machine the load generator takes as little of the CPU as it can.

    As HTTP clients do, a request whose reused connection turns out to have been closed by the
    server while it sat idle (the service closes keep-alive connections idle for 5 s) is sent again
    once on a new connection; ``stale`` counts those. Any other failure is the request's."""

    KEEP_ALIVE = 5.0  #: the service's keep-alive time-out, seconds

    def __init__(self, port: int):
        self.port, self.idle, self.stale = port, [], 0

    async def request(self, data: bytes) -> int:
        """Send one pre-encoded request; its status (the body is read and dropped)."""
        if self.idle:
            reader, writer, since = self.idle.pop()
            try:
                return await self._send(reader, writer, data)
            except (OSError, asyncio.IncompleteReadError):
                if time.perf_counter() - since < self.KEEP_ALIVE * 0.9:
                    raise
                self.stale += 1
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        return await self._send(reader, writer, data)

    async def _send(self, reader, writer, data: bytes) -> int:
        try:
            writer.write(data)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
            await reader.readexactly(length)
        except BaseException:
            writer.close()
            raise
        self.idle.append((reader, writer, time.perf_counter()))
        return int(head[9:12])

    def close(self) -> None:
        for _, writer, _ in self.idle:
            writer.close()


def post(path: str, body: dict) -> bytes:
    data = json.dumps(body).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


HEALTH = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


async def stream(port: int, start: float, rate: float, seconds: float, requests: list[bytes]) -> dict:
    """``rate * seconds`` requests (cycling through ``requests``), the i-th sent at ``start + i / rate``."""
    lat: list[float] = []
    status: Counter = Counter()
    conns = Connections(port)

    async def fire(i: int):
        await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
        t0 = time.perf_counter()
        try:
            status[await asyncio.wait_for(conns.request(requests[i % len(requests)]), TIMEOUT)] += 1
        except asyncio.TimeoutError:
            status["timeout"] += 1
        except (OSError, asyncio.IncompleteReadError, StopIteration, ValueError) as e:
            status[f"error ({type(e).__name__})"] += 1
        lat.append(time.perf_counter() - t0)

    n = int(rate * seconds)
    await asyncio.gather(*(fire(i) for i in range(n)))
    conns.close()
    if conns.stale:
        status["resent (stale keep-alive)"] = conns.stale
    ms = np.array(lat) * 1000
    return {"requests": n, "status": dict(status), "p50_ms": float(np.percentile(ms, 50)),
            "p99_ms": float(np.percentile(ms, 99)), "max_ms": float(ms.max())}


async def one_run(port: int, states: list[dict], rate: float, seconds: float, flood: float = 0.0,
                  health: bool = False) -> dict:
    streams = {"expert": (rate, [post("/v1/act", {"state": s, "level": "expert"}) for s in states])}
    if flood:
        streams["master"] = (flood, [post("/v1/act", {"state": s, "level": "master"}) for s in states])
    if flood or health:
        streams["health"] = (20.0, [HEALTH])
    start = time.perf_counter() + 0.2
    results = await asyncio.gather(*(stream(port, start, r, seconds, reqs) for r, reqs in streams.values()))
    return dict(zip(streams, results, strict=True))


def _line(name: str, r: dict) -> str:
    answers = ", ".join(f"{k}: {v}" for k, v in sorted(r["status"].items(), key=str))
    return f"{name:>7}: {r['requests']} requests, p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, " \
           f"max {r['max_ms']:.1f} ms ({answers})"


def agent_decider(spec: str):
    """A decision from a JSON seat state by the agent ``spec`` names: the state replayed through the
    engine (as the bot does), then the agent asked."""
    agent = make_agent(spec, seed=0)

    def decide(state: dict) -> int:
        game, seat = replay_state(state)
        return agent.act(seat_view(game, seat))

    return decide


def bot_only(a, states) -> int:
    from cuatrola_serve.bot import Bot

    search = {k: v for k in ("worlds", "candidates", "infer_play") if (v := getattr(a, k)) is not None}
    if a.agent:
        decide, search, name = agent_decider(a.agent), {}, a.agent
    else:
        decide, name = Bot.load(a.model, level=a.level, **search).decide, f"level {a.level}"
    for s in states[:100]:  # warm-up (and, for master, the solver's compilation)
        decide(s)
    per_run = []
    bidding = np.array([len(s.get("bids", [])) < 4 for s in states])
    for k in range(a.runs):
        t = []
        for s in states:
            t0 = time.perf_counter()
            decide(s)
            t.append(time.perf_counter() - t0)
        t = np.array(t)
        per_run.append((np.median(t) * 1000, np.percentile(t, 99) * 1000, np.median(t[bidding]) * 1000,
                        np.median(t[~bidding]) * 1000))
        print(f"run {k + 1}: {len(states)} states, median {per_run[-1][0]:.3f} ms, p99 {per_run[-1][1]:.3f} ms "
              f"(bids {per_run[-1][2]:.3f} ms, card plays {per_run[-1][3]:.3f} ms)")
    med = [statistics.median(r[i] for r in per_run) for i in range(4)]
    print(f"median of {a.runs} runs, {name}{search or ''}: decide() median {med[0]:.3f} ms, p99 {med[1]:.3f} ms; "
          f"bids {med[2]:.3f} ms, card plays {med[3]:.3f} ms ({bidding.sum()} bid and {(~bidding).sum()} play states)")
    return 0


# --------------------------------------------------------------------------- attackers
ATTACKERS = "127.0.66.{}"  #: the attackers' source addresses (any 127.x reaches a loopback server)
SLOW_BODY_HEAD = (b"POST /v1/act HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 16000\r\n\r\n")
PIPELINED = b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n" * 6000


async def _slow_headers(reader, writer) -> bytes:
    writer.write(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return await reader.read(64)


async def _slow_body(reader, writer) -> bytes:
    """Headers of a 16,000-byte body, then one byte of it a second."""
    writer.write(SLOW_BODY_HEAD)
    while True:
        try:
            return await asyncio.wait_for(reader.read(64), 1.0)
        except asyncio.TimeoutError:
            writer.write(b" ")


async def _pipelining(reader, writer) -> bytes:
    """6,000 requests in one write, and never a read (until the server closes the connection)."""
    writer.write(PIPELINED)
    await asyncio.sleep(3600)
    return b""


ATTACKS = {"slow_headers": _slow_headers, "slow_bodies": _slow_body, "pipelining": _pipelining}


async def _hold_one(port: int, source: str, attack, reopen: float, stats: Counter) -> None:
    """One attacking connection, reopened whenever the server closes it (a refusal, a time-out or
    an eviction)."""
    while True:
        try:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window, set before connecting
            sock.bind((source, 0))
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
            reader, writer = await asyncio.open_connection(sock=sock)
            stats["opened"] += 1
            got = await attack(reader, writer)
            stats["refused" if got.startswith(b"HTTP/1.1 503") else "closed"] += 1
            writer.close()
        except OSError:
            stats["error"] += 1
        await asyncio.sleep(reopen)


def attackers(port: int, plan: dict[str, tuple[int, int]], reopen: float) -> None:
    """The attacks, in their own process until terminated: for each kind, (connections, source
    addresses), each kind from addresses of its own."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # a socket is a file
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))

    async def attack():
        stats: Counter = Counter()
        tasks, first = [], 1
        for kind, (sockets, addresses) in plan.items():
            tasks += [_hold_one(port, ATTACKERS.format(first + i % addresses), ATTACKS[kind], reopen, stats)
                      for i in range(sockets)]
            first += addresses
        await asyncio.gather(*tasks)

    asyncio.run(attack())


def rss_mb(pid: int) -> float:
    """A process's resident memory (Linux)."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def wait_until_ready(url: str, seconds: float = 120.0) -> None:
    """Until the service answers and its search workers have compiled the solver."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            h = httpx.get(url + "/v1/health").json()
            if h["search"] is None or h["search"]["ready"]:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the service at {url} was not ready within {seconds:.0f} s")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=str(ONNX_MODEL))
    p.add_argument("--rate", type=float, default=200.0, help="expert requests per second")
    p.add_argument("--flood", type=float, default=0.0, help="also master requests at this rate, and health at 20/s")
    p.add_argument("--slow-headers", type=int, default=0, metavar="N",
                   help="meanwhile, an attacker holds N connections that never finish their headers (reopened when "
                        "closed), from --attackers source addresses; health is sent at 20/s")
    p.add_argument("--attackers", type=int, default=1, help="source addresses of the slow-header attack")
    p.add_argument("--slow-bodies", type=int, default=0, metavar="N",
                   help="meanwhile, N connections send POST /v1/act headers of a 16,000-byte body, then a byte a second, "
                        "from --body-attackers addresses (reopened when closed); health is sent at 20/s")
    p.add_argument("--body-attackers", type=int, default=17, help="source addresses of the slow-body attack")
    p.add_argument("--pipelining", type=int, default=0, metavar="N",
                   help="meanwhile, N connections from N addresses each send 6,000 GET /v1/health in one write and "
                        "never read (reopened when closed); health is sent at 20/s")
    p.add_argument("--reopen-ms", type=float, default=1000.0, help="the attacker's pause before reopening a closed socket")
    p.add_argument("--seconds", type=float, default=20.0, help="length of one run")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--port", type=int, default=8931)
    p.add_argument("--bot-only", action="store_true", help="time Bot.decide in-process (no HTTP) instead")
    p.add_argument("--level", default="expert", help="with --bot-only: the level timed (master: search)")
    p.add_argument("--agent", default="", help="with --bot-only: time this agent spec instead of a bot level (a search "
                   "variant: search:play=rollout,...), from the same JSON states")
    p.add_argument("--states", type=int, default=2000, help="game states in the pool")
    p.add_argument("--worlds", type=int, help="with --bot-only --level master: deals drawn (default: master's)")
    p.add_argument("--candidates", type=int, help="with --bot-only --level master: deals weighed (default: master's)")
    p.add_argument("--infer-play", type=float, help="with --bot-only --level master: weight of the card plays' "
                   "evidence (default: master's)")
    p.add_argument("--rules", default="online", help="the preset of the games the states come from (each state names it)")
    a = p.parse_args(argv)
    states = state_pool(a.states, rules=a.rules)
    if a.bot_only:
        return bot_only(a, states)
    server = subprocess.Popen([sys.executable, "-m", "cuatrola_serve.serve", "--model", a.model, "--port", str(a.port)])
    url = f"http://127.0.0.1:{a.port}"
    attacker = None
    try:
        wait_until_ready(url)
        plan = {kind: (n, k) for kind, n, k in (("slow_headers", a.slow_headers, a.attackers),
                                                ("slow_bodies", a.slow_bodies, a.body_attackers),
                                                ("pipelining", a.pipelining, a.pipelining)) if n}
        rss_before = rss_mb(server.pid)
        if plan:
            attacker = multiprocessing.get_context("spawn").Process(target=attackers, args=(a.port, plan, a.reopen_ms / 1000),
                                                                    daemon=True)
            attacker.start()
            time.sleep(3.0)  # the attack in place before anything is measured
        asyncio.run(one_run(a.port, states, a.rate, 2.0, a.flood, bool(plan)))  # warm-up
        runs, rss_peak = [], rss_before
        for k in range(a.runs):
            runs.append(asyncio.run(one_run(a.port, states, a.rate, a.seconds, a.flood, bool(plan))))
            rss_peak = max(rss_peak, rss_mb(server.pid))
            print(f"run {k + 1}: the service's memory {rss_mb(server.pid):.0f} MB")
            for name, r in runs[-1].items():
                print(_line(name, r))
        print(f"median of {a.runs} runs:")
        for name in runs[0]:
            med = {k: statistics.median(r[name][k] for r in runs) for k in ("p50_ms", "p99_ms", "max_ms")}
            total = sum((Counter(r[name]["status"]) for r in runs), Counter())
            print(_line(name, {**med, "requests": sum(r[name]["requests"] for r in runs), "status": total}))
        print(f"the service's memory: {rss_before:.0f} MB before, {rss_peak:.0f} MB at most after a run "
              f"(+{rss_peak - rss_before:.0f} MB)")
    finally:
        if attacker is not None:
            attacker.terminate()
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
