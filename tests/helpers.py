"""Shared test helpers: deals drawn in the test, action pickers, state read-outs."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

import numpy as np

from agents.solver import Position
from cuatrola_env.game import Game
from cuatrola_env.rules import CUATROLA
from cuatrola_env.vector import VectorCuatrola


def draw_deals(rng: np.random.Generator, n: int):
    """n random deals drawn here, independently of the engine: hands (n, 4, 5), dealer, muestra."""
    perm = np.argsort(rng.random((n, 20)), axis=1)
    hands = perm.reshape(n, 4, 5)
    dealer = rng.integers(0, 4, size=n)
    muestra = hands[np.arange(n), dealer, rng.integers(0, 5, size=n)]
    return hands, dealer, muestra


#: a tiny teacher–student run's arguments: seconds of playing, labelling and fitting on one worker
TINY_DISTILL = ["--algorithm", "distill", "--hands", "30", "--per-task", "15", "--hidden", "16",
               "--eval-every", "0", "--fit-batch", "32", "--past-frac", "0", "--workers", "1", "--then", ""]


def tiny_distill_checkpoint(main, run_dir, *args: str):
    """The checkpoint of a tiny teacher–student run (:data:`TINY_DISTILL` and ``args``, through ``main``, the
    command's entry point) in ``run_dir``."""
    assert main([*TINY_DISTILL, *args, "--run-dir", str(run_dir)]) == 0
    return next(run_dir.iterdir()) / "checkpoint.pt"


def random_decisions(preset: str, n: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and legal masks of every decision of ``n`` hands played at random."""
    env = VectorCuatrola(num_envs=n, rules=preset, seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    for _ in range(40):
        obs.append(env.observe())
        masks.append(env.action_mask.copy())
        env.step((rng.random(env.action_mask.shape) * env.action_mask).argmax(1))
    keep = np.concatenate(masks).any(1)
    return np.concatenate(obs)[keep], np.concatenate(masks)[keep]


def pick_actions(mask: np.ndarray, rng: np.random.Generator, pass_bias: float = 0.75) -> np.ndarray:
    """A random legal action per row of ``mask``; in bidding, pass with probability ``pass_bias``.

    Uniform bidding would end in quintola most of the time; the bias spreads the contracts.
    """
    scores = rng.random(mask.shape) * mask
    actions = scores.argmax(axis=1)
    bidding = mask[:, 20]
    take_pass = bidding & (rng.random(mask.shape[0]) < pass_bias)
    return np.where(take_pass, 20, actions)


def play_random_episodes(env, seeds, rng: np.random.Generator) -> None:
    """A Gymnasium environment's episodes, one per seed, the learning seat playing random legal actions."""
    for seed in seeds:
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            _, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))


def seat_cards(mask_row) -> list[list[int]]:
    """The four hand masks of one game as sorted card-id lists."""
    return [[c for c in range(20) if int(m) >> c & 1] for m in mask_row]


def scramble_hidden(hands, dealer: int, muestra: int, played: int, p: int, rng: np.random.Generator) -> list[int]:
    """Four hand masks in which the cards seat ``p`` cannot see are dealt again at random among
    the other seats (each keeps its count; the dealer keeps the muestra while unplayed)."""
    hands = [int(h) for h in hands]
    held = not (int(played) >> muestra) & 1
    others = [q for q in range(4) if q != p]
    pool, counts = [], []
    for q in others:
        cards = [c for c in range(20) if hands[q] >> c & 1 and not (held and c == muestra)]
        pool += cards
        counts.append(len(cards))
    rng.shuffle(pool)
    at = 0
    for q, k in zip(others, counts, strict=True):
        hands[q] = sum(1 << c for c in pool[at : at + k]) | ((1 << muestra) if held and q == dealer else 0)
        at += k
    return hands


def random_position(seed: int, low: int, high: int):
    """A :class:`~cuatrola_env.game.Game` (seeded deal) after a random number in [low, high) of
    random legal bids and plays (fewer if the game ends first)."""
    from cuatrola_env.game import Game

    game = Game(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(int(rng.integers(low, high))):
        if not game.over:
            game.step(int(rng.choice(game.legal_actions())))
    return game


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_server(app, **config):
    """``app`` served by uvicorn (``config``: more ``uvicorn.Config`` options) on a free loopback
    port, in a thread; yields the port and stops the server after."""
    import uvicorn  # the serve extra; only the service tests call this

    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **config))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    assert srv.started, "the service did not start"
    try:
        yield port
    finally:
        srv.should_exit = True
        thread.join(timeout=10)


def refused(capsys, message: str) -> bool:
    """Whether the command just run ended by printing one line on stderr, ``error: ...`` holding
    ``message``, with no traceback (what was printed before the refusal, progress bars, is ignored)."""
    err = capsys.readouterr().err.strip()
    last = err.splitlines()[-1] if err else ""
    assert last.startswith("error: ") and "Traceback" not in err, err
    return message in last


def sigterm_on_call(function, call: int = 2):
    """``function``, wrapped to send this process SIGTERM as its ``call``-th call begins (a run's own
    handler takes it: Ctrl-C or SIGTERM arriving in the middle of that step)."""
    import os
    import signal

    calls = []

    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) == call:
            os.kill(os.getpid(), signal.SIGTERM)
        return function(*args, **kwargs)

    return wrapped


def double_dummy_points(g: Game, team: int) -> tuple[int, bool]:
    """The hand played to its end through the engine, every later bid a pass and every card the
    mover's best by the solver's exact values; (``team``'s game points, whether the points tied)."""
    while not g.over:
        if g.seat_view().phase == 0:
            g.step(20)
            continue
        v = g.seat_view()
        values = Position.from_game(g).move_values()
        by_tricks = v.contract >= CUATROLA
        maximise = (v.seat & 1) == (v.declarer & 1) if by_tricks else (v.seat & 1) == 0
        g.step((max if maximise else min)(values, key=lambda c: (values[c], -c)))
    r = g.last_result
    points = r["game_points"] if r["winner_team"] == team else -r["game_points"]
    return points, r["points"][0] == r["points"][1]
