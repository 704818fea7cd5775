"""Export, the torch-free bot, the table view, the bot service and the terminal game."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import random_position

from cuatrola_env.game import Game
from cuatrola_env.observation import OBS_DIM, OBS_DIMS, OBS_VERSION
from cuatrola_serve.bot import seat_state

ort = pytest.importorskip("onnxruntime")


# --------------------------------------------------------------------------- export
def test_onnx_parity_on_10000_real_observations(tiny_checkpoint, tmp_path):
    from agents.export import check_parity, export
    from agents.torch_agent import load_network

    card = export(tiny_checkpoint, str(tmp_path / "m.onnx"), check=0)
    report = check_parity(load_network(tiny_checkpoint), tmp_path / "m.onnx", 10_000)
    assert report["max_abs_diff"] <= 1e-5 and report["same_actions"]
    written = json.loads((tmp_path / "m.json").read_text())
    assert written["obs_version"] == card["obs_version"] == OBS_VERSION and written["rules"]["name"] == "online"
    sess = ort.InferenceSession(str(tmp_path / "m.onnx"))
    assert [i.name for i in sess.get_inputs()] == ["observation", "action_mask"]
    assert [o.name for o in sess.get_outputs()] == ["logits"]
    out = sess.run(None, {"observation": np.zeros((3, OBS_DIM), np.float32), "action_mask": np.eye(24, dtype=bool)[:3]})[0]
    assert out.shape == (3, 24) and (out[~np.eye(24, dtype=bool)[:3]] <= -1e8).all()  # dynamic batch, masked


def test_the_card_records_what_the_model_measured_and_what_it_cost(tiny_checkpoint, tmp_path):
    from agents.export import main

    deals, matches = "docs/results/late/refit3_vs_pimc32_seed61.json", "docs/results/late/refit3_vs_pimc32_matches_seed51.json"
    out = tmp_path / "m.onnx"
    assert main([tiny_checkpoint, "--out", str(out), "--check", "0", "--measured", deals, matches,
                 "--compute", "2 minutes on a 2-core x86-64 CPU, no GPU"]) == 0
    card = json.loads(out.with_suffix(".json").read_text())
    assert card["training"]["compute"] == "2 minutes on a 2-core x86-64 CPU, no GPU"
    first, second = card["measured"]
    want = json.loads(Path(deals).read_text())["pairings"][0]["game_points_per_hand"]
    assert first["game_points_per_hand"] == {"mean": want["mean"], "ci95": want["ci95"]} and first["seed"] == 61
    assert first["against"] == "pimc:worlds=32" and first["deals"] == 2000 and first["match_win_rate"] is None
    assert second["matches"] == 600 and 0 < second["match_win_rate"]["mean"] < 1 and second["game_points_per_hand"] is None
    assert first["command"].startswith("python evaluate.py bot:level=expert pimc:worlds=32 --rules online --target 11 "
                                       "--deals 2000 --matches 0 --seed 61")


def test_a_bad_results_file_leaves_no_model_behind(tiny_checkpoint, tmp_path, capsys):
    from agents.export import main

    (tmp_path / "r.json").write_text('{"seed": 1}')
    assert main([tiny_checkpoint, "--out", str(tmp_path / "m.onnx"), "--check", "0", "--measured", str(tmp_path / "r.json")]) == 2
    assert "r.json" in capsys.readouterr().err and not (tmp_path / "m.onnx").exists()


def test_export_refuses_a_bad_checkpoint(tmp_path):
    from agents.export import main

    (tmp_path / "x.pt").write_text("not a checkpoint")
    assert main([str(tmp_path / "x.pt"), "--out", str(tmp_path / "x.onnx")]) == 2


# --------------------------------------------------------------------------- the bot
def test_bot_plays_legal_moves_from_json_states_of_real_games(onnx_model):
    from cuatrola_serve.bot import Bot

    bots = {lv: Bot.load(onnx_model, level=lv, seed=1) for lv in ("expert", "strong", "medium", "easy", "master")}
    for seed in range(15):  # both presets: the state's rules decide what is legal
        game = Game("online" if seed % 2 else "traditional", seed=seed)
        lv = list(bots)[seed % 5]
        bot = bots[lv].with_level(lv, seed)
        while not game.over:
            state = json.loads(json.dumps(seat_state(game)))  # through JSON, as a server would send it
            out = bot.decide(state)
            assert out["action"] in game.legal_actions()
            assert abs(sum(out["probabilities"]) - 1) < 1e-4
            assert all(p == 0 for a, p in enumerate(out["probabilities"]) if a not in game.legal_actions())
            game.step(out["action"])


def test_the_search_level_plays_from_the_game_and_puts_all_its_weight_on_its_choice(onnx_model):
    from cuatrola_serve.bot import Bot

    bot = Bot.load(onnx_model, level="master")
    game = Game(seed=0)
    action, p = bot.play(game)
    assert action in game.legal_actions() and p[action] == 1.0 and p.sum() == 1.0


def test_bot_observation_does_not_depend_on_hidden_cards(onnx_model):
    """The bot rebuilds the position from the seat's state alone: its observation equals the real one."""
    from cuatrola_serve.bot import replay_state

    for seed in range(20):
        game = random_position(seed, 0, 15)
        if game.over:
            continue
        replayed, seat = replay_state(seat_state(game))
        assert seat == game.current_player
        np.testing.assert_array_equal(replayed.observe(), game.observe())
        np.testing.assert_array_equal(replayed.legal_mask(), game.legal_mask())


BASE = {"seat": 1, "dealer": 0, "muestra": 13, "hand": [0, 4, 9, 17, 19]}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"seat": 4}, "seat: Input should be less than or equal to 3"),
        ({"hand": [0, 4, 9, 17, 25]}, r"hand\[4\]: Input should be less than or equal to 19"),
        ({"hand": [0, 4, 4, 17, 19]}, r"hand\[2\]: card 4 .* appears twice"),
        ({"hand": [0, 4, 9, 17, 13]}, "muestra: card 13 is unplayed"),
        ({"hand": [0, 4, 9, 17]}, "hand has 4 cards"),
        ({"bids": ["pass", "double"]}, r"bids\[1\] must be a bid name"),
        ({"bids": ["pass"]}, "it is seat 2's turn, not seat 1's"),
        ({"tricks": [[[2, 3]]]}, "cards were played but the bidding is not over"),
        ({"tricks": [[[7, 3]]]}, r"tricks\[0\]\[0\]: .* 7 is not a seat 0..3"),
        ({"nonsense": 1}, "unknown key 'nonsense'"),
        ({"rules": "house"}, "rules must be a preset name"),
        ({"score": [1]}, "score: List should have at least 2"),
        ({"rules": {"name": "online", "target": 0}}, "rules: Rules.target must be an integer"),
    ],
)
def test_bot_refuses_bad_states_naming_the_field(onnx_model, change, message):
    from cuatrola_serve.bot import Bot, BotStateError

    bot = Bot.load(onnx_model)
    with pytest.raises(BotStateError, match=message):
        bot.act({**BASE, **change})


def test_bot_refuses_impossible_play():
    """Rule 'follow suit': a seat that showed a void cannot later play that suit."""
    from cuatrola_serve.bot import BotStateError, replay_state

    game = Game(seed=4)
    while game.single.phase == 0:
        game.step(20)  # everyone passes
    state = seat_state(game)
    me = state["seat"]
    # claim the seat to act played a card it still holds (a card in two places)
    state["tricks"] = [[[me, state["hand"][0]]]]
    with pytest.raises(BotStateError, match="also in hand|seat .* played, but it was"):
        replay_state(state)


def test_bot_refuses_a_model_that_does_not_match_its_card(onnx_model, tmp_path):
    from cuatrola_serve.bot import Bot, ModelError

    for name in ("m.onnx", "m.json"):
        shutil.copy(onnx_model if name.endswith("onnx") else onnx_model.replace(".onnx", ".json"), tmp_path / name)
    card = json.loads((tmp_path / "m.json").read_text())
    (tmp_path / "m.json").write_text(json.dumps({**card, "obs_version": 0}))
    with pytest.raises(ModelError, match="observation version 0"):
        Bot.load(tmp_path / "m.onnx")
    (tmp_path / "m.json").write_text(json.dumps({**card, "obs_version": 1, "obs_dim": OBS_DIM}))
    with pytest.raises(ModelError, match=f"observation version 1 .{OBS_DIM} floats.; this code builds version 2"):
        Bot.load(tmp_path / "m.onnx")
    (tmp_path / "m.json").write_text(json.dumps({**card, "sha256": "0" * 64}))
    with pytest.raises(ModelError, match="does not match its card"):
        Bot.load(tmp_path / "m.onnx")
    with pytest.raises(ModelError, match="no model file"):
        Bot.load(tmp_path / "missing.onnx")


# --------------------------------------------------------------------------- the table view
def test_table_view_never_shows_another_seats_cards():
    """Scrambling the other seats' unplayed cards leaves the human's view unchanged."""
    from cuatrola_serve.table import Table, make_player

    for seed in range(10):
        players = {s: make_player("random", seed=seed + s) for s in (1, 2, 3)}
        table = Table(players, 0, "online", "match", seed)
        rng = np.random.default_rng(seed)
        for _ in range(int(rng.integers(0, 4))):
            if table.game.over:
                break
            table.play(int(rng.choice(table.view()["legal"])))
        if table.game.over:
            continue
        view = table.view()
        g = table.game.single
        others = [s for s in (1, 2, 3) if g.hands[s]]
        pool = [c for s in others for c in range(20) if g.hands[s] >> c & 1 and c != g.muestra]
        rng.shuffle(pool)
        saved = list(g.hands)
        for s in others:  # deal the others' hidden cards anew, same counts (muestra stays with the dealer)
            keep = g.hands[s] & (1 << g.muestra)
            n = (g.hands[s] & ~keep).bit_count()
            g.hands[s] = keep | sum(1 << c for c in pool[:n])
            pool = pool[n:]
        table.game._mask = None
        assert table.view() == view
        g.hands[:] = saved


# --------------------------------------------------------------------------- the service
@pytest.fixture(scope="module")
def client(onnx_model):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from cuatrola_serve.guard import ServiceLimits
    from cuatrola_serve.serve import create_app

    return TestClient(create_app(onnx_model, ServiceLimits(max_body=4096)))


def test_service_health_and_act(client):
    h = client.get("/v1/health").json()
    assert h["status"] == "ok" and "expert" in h["levels"] and "master" in h["levels"]
    assert [m["rules"] for m in h["models"]] == [h["model"]["rules"]], "an explicit model serves every preset alone"
    game = Game(seed=11)
    while not game.over:
        level = "master" if game.current_player % 2 else "strong"
        r = client.post("/v1/act", json={"state": seat_state(game), "level": level})
        assert r.status_code == 200, r.text
        assert r.json()["action"] in game.legal_actions()
        game.step(r.json()["action"])
    assert "/v1/act" in client.get("/openapi.json").json()["paths"]


@pytest.mark.parametrize(
    "body, status, field",
    [
        ({"state": {**BASE, "seat": 9}}, 422, "seat"),
        ({"state": {**BASE, "hand": [0, 4, 4, 17, 19]}}, 400, "state.hand[2]"),
        ({"state": BASE, "level": "godlike"}, 422, "level"),
        ({"state": {**BASE, "path": "/etc/passwd"}}, 422, "path"),
        ({"state": BASE, "model": "/etc/passwd"}, 422, "model"),
    ],
)
def test_service_refuses_bad_requests_naming_the_field(client, body, status, field):
    r = client.post("/v1/act", json=body)
    assert r.status_code == status, r.text
    assert field in r.text


def test_service_bounds_the_request_size(client):
    big = {"state": {**BASE, "contract": "x" * 10_000}}
    assert client.post("/v1/act", json=big).status_code == 413
    r = client.post("/v1/act", content=b"{" * 5000, headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_service_browser_game_flow(client):
    r = client.post("/v1/games", json={"seat": 2, "bots": ["heuristic", "random", "expert"], "target": 3})
    assert r.status_code == 200, r.text
    view = r.json()
    gid = view["id"]
    assert client.post(f"/v1/games/{gid}/act", json={"action": 99}).status_code == 422
    for _ in range(200):
        if view["match_over"]:
            break
        illegal = next(a for a in range(24) if a not in view["legal"])
        assert client.post(f"/v1/games/{gid}/act", json={"action": illegal}).status_code == 400
        view = client.post(f"/v1/games/{gid}/act", json={"action": view["legal"][0]}).json()
        assert len(view["hand"]) == view["cards_left"][2]
    assert view["match_over"] and max(view["score"]) >= 3
    assert client.post(f"/v1/games/{gid}/act", json={"action": 0}).status_code == 409
    assert client.get("/v1/games/nope").status_code == 404
    assert client.post("/v1/games", json={"bots": ["expert", "expert"]}).status_code == 422


# --------------------------------------------------------------------------- the terminal game
def test_terminal_game_to_the_end(onnx_model):
    from cuatrola_serve.play import main

    lines = []
    answers = iter(["x", "99"] + ["0"] * 500)
    rc = main(["--model", onnx_model, "--bots", "expert,heuristic,easy", "--target", "3", "--seed", "2"],
              input_fn=lambda prompt: next(answers), print_fn=lines.append)
    assert rc == 0
    text = "\n".join(lines)
    assert "type a number" in text and "Hand over" in text and "Match over" in text


def test_slim_checkpoint_plays_like_the_full_one(tiny_checkpoint, tmp_path):
    import torch

    from agents.export import sample_observations, slim_checkpoint
    from agents.torch_agent import load_network

    slim = slim_checkpoint(tiny_checkpoint, str(tmp_path / "slim.pt"))
    assert slim.stat().st_size < 1_000_000
    obs, mask = (torch.from_numpy(x) for x in sample_observations(500))
    with torch.no_grad():
        assert torch.equal(load_network(tiny_checkpoint).policy(obs, mask), load_network(str(slim)).policy(obs, mask))


def test_each_game_is_played_by_the_model_of_its_rules_preset(onnx_model):
    """With a model per preset, the bot (and ``bot:`` agents) play a game under ``traditional``
    rules with the model trained under them, and any other game with the default."""
    import types

    from agents.player import PolicyPlayer
    from agents.policy import OnnxPolicy, policy_for
    from cuatrola_env.rules import get_rules
    from cuatrola_serve.bot import Bot

    online = OnnxPolicy.load(onnx_model)
    calls = []

    class Traditional:  # the traditional model: the same graph, its card saying traditional
        rules = get_rules("traditional")

        def probabilities(self, obs, mask, level):
            calls.append(level)
            return online.probabilities(obs, mask, level)

    trad = Traditional()
    bot = Bot(PolicyPlayer(policies=[online, trad]))
    assert policy_for(bot.policies, get_rules("traditional", target=21)) is trad, "the target does not count"
    assert policy_for(bot.policies, get_rules("online", target=5)) is online
    assert policy_for(bot.policies, get_rules({"name": "custom", "must_trump": True})) is online, "closest: online"
    bot.play(Game("online", seed=0))
    assert calls == []
    bot.with_level("strong").play(Game("traditional", seed=0))
    assert calls == ["strong"]
    assert policy_for([types.SimpleNamespace(rules=get_rules("online"))], get_rules("traditional")).rules.name == "online"


def test_the_default_loads_the_shipped_model_of_each_preset(onnx_model):
    from agents.models import ONNX_MODEL
    from agents.policy import load_policies

    assert [p.card["rules"]["name"] for p in load_policies()] == ["online", "traditional"]
    another_spelling = ONNX_MODEL.parent / ".." / "models" / ONNX_MODEL.name
    assert [p.card["rules"]["name"] for p in load_policies(str(another_spelling))] == ["online", "traditional"]
    assert len(load_policies(onnx_model)) == 1, "a model given by path serves alone"


def test_the_terminal_games_help_names_its_command(capsys):
    from cuatrola_serve.play import main

    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("usage: cuatrola-play")


def test_the_terminal_game_never_asks_for_a_forced_move():
    """When the human's seat has one legal action (the last card, a card it must follow with), it is
    played for it and said; the prompt comes only with a choice."""
    from cuatrola_serve.play import main

    lines, asked = [], []

    def answer(prompt):
        asked.append(lines[-1])
        return "0"

    assert main(["--model", "none", "--bots", "heuristic,heuristic,heuristic", "--target", "3", "--seed", "4"],
                input_fn=answer, print_fn=lines.append) == 0
    assert any(line.startswith("Your only legal move:") for line in lines)
    assert all(line.count("[") >= 2 for line in asked), "a prompt with a single option"


def test_a_model_of_an_earlier_observation_version_reads_the_leading_columns():
    """``models/ppo`` was trained on observation version 1: the bot's policy and the PyTorch loader
    both feed it the first 386 columns of today's observation, and agree with each other."""
    pytest.importorskip("onnxruntime")
    import torch

    from agents.policy import OnnxPolicy
    from agents.torch_agent import load_network
    from cuatrola_env import VectorCuatrola

    root = Path(__file__).resolve().parents[1] / "models" / "ppo"
    policy = OnnxPolicy.load(root / "ppo.onnx")
    assert policy.card["obs_version"] == 1 and policy.obs_dim == OBS_DIMS[1] < OBS_DIM
    env = VectorCuatrola(64, seed=3)
    rng = np.random.default_rng(0)
    obs, mask = [], []
    for _ in range(12):
        obs.append(env.observe())
        mask.append(env.action_mask.copy())
        env.step((rng.random(env.action_mask.shape) * env.action_mask).argmax(1))
    obs, mask = np.concatenate(obs), np.concatenate(mask)
    assert obs[:, OBS_DIMS[1]:].any(), "the later columns hold something the old model must not read"
    got = policy.logits(obs, mask)
    direct = policy.session.run(["logits"], {"observation": np.ascontiguousarray(obs[:, : OBS_DIMS[1]]), "action_mask": mask})[0]
    assert np.array_equal(got, direct)
    with torch.no_grad():
        net = load_network(str(root / "ppo.pt"))
        want = net.policy(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()
    assert net.obs_dim == OBS_DIMS[1]
    assert np.abs(got[mask] - want[mask]).max() < 1e-4


def test_every_shipped_onnx_model_takes_the_environments_observation_as_it_is():
    """A user feeds any shipped model what the environment gives (today's whole observation and the
    legal mask) and gets logits; each card says so."""
    ort = pytest.importorskip("onnxruntime")
    from cuatrola_env import VectorCuatrola
    from cuatrola_env.observation import OBS_VERSION

    env = VectorCuatrola(32, seed=1)
    obs, mask = env.observe(), env.action_mask
    cards = sorted((Path(__file__).resolve().parents[1] / "agents" / "models").glob("*.json"))
    assert len(cards) == 4
    for card_path in cards:
        card = json.loads(card_path.read_text())
        assert (card["obs_version"], card["obs_dim"]) == (OBS_VERSION, OBS_DIM), card_path.name
        session = ort.InferenceSession(str(card_path.with_suffix(".onnx")), providers=["CPUExecutionProvider"])
        (logits,) = session.run(["logits"], {"observation": obs, "action_mask": mask})
        assert logits.shape == (32, 24) and np.isfinite(logits[mask]).all(), card_path.name
