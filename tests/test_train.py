"""train.py: a tiny run end to end, exact resume, checkpoint errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from helpers import refused

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from agents import training as train  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from agents.network import PolicyValueNet  # noqa: E402
from agents.training.config import later_minutes, preset  # noqa: E402
from agents.training.ppo import PPOConfig  # noqa: E402
from agents.training.rollout import Progress, SelfPlay  # noqa: E402
from cuatrola_env.observation import OBS_VERSION  # noqa: E402
from cuatrola_env.rules import get_rules  # noqa: E402
from examples import dealer_edge  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

TINY = ["--config", "configs/tiny.yaml", "--eval-every", "0"]


def only_run(root: Path) -> Path:
    (run,) = list(root.iterdir())
    return run


def test_tiny_run_end_to_end(tmp_path):
    assert train.main([*TINY, "--run-dir", str(tmp_path), "--eval-every", "2"]) == 0
    run = only_run(tmp_path)
    assert (run / "checkpoint.pt").is_file()
    assert list(run.glob("events.out.tfevents.*")), "TensorBoard events written"
    ck = read_checkpoint(str(run / "checkpoint.pt"))
    assert ck["step"] == 4096 and ck["update"] == 4 and ck["obs_version"] == OBS_VERSION
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(run))
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    assert {"charts/decisions_per_s", "losses/policy_loss", "losses/entropy", "eval/vs_heuristic_game_points",
            "losses/imitation_accuracy", "losses/bid_entropy"} <= tags
    # tiny.yaml: 2,048 decisions of imitation (two updates), then PPO adding to the pool every update
    assert 1 <= len(ck["pool"]) <= ck["config"]["pool_size"]
    assert set(ck["pool"][0]) == set(ck["model"])


def assert_resume_is_exact(tmp_path: Path, args: list[str], stop_at: int) -> None:
    """A run of ``args`` to 4,096 decisions, and one stopped at ``stop_at`` then resumed, end with
    the same weights."""
    a, b = tmp_path / "a", tmp_path / "b"
    train.main([*args, "--run-dir", str(a), "--total-decisions", "4096"])
    train.main([*args, "--run-dir", str(b), "--total-decisions", str(stop_at)])
    ck_b = only_run(b) / "checkpoint.pt"
    train.main(["--resume", str(ck_b), "--total-decisions", "4096"])
    wa = read_checkpoint(str(only_run(a) / "checkpoint.pt"))["model"]
    wb = read_checkpoint(str(ck_b))["model"]
    assert all(torch.equal(wa[k], wb[k]) for k in wa), "a resumed run must match an uninterrupted one"


def test_resume_continues_exactly(tmp_path):
    assert_resume_is_exact(tmp_path, TINY, 2048)


def test_checkpoint_errors(tmp_path):
    with pytest.raises(train.CheckpointError, match="no checkpoint or model file at"):
        read_checkpoint(str(tmp_path / "missing.pt"))
    bad = tmp_path / "bad.pt"
    bad.write_text("not a checkpoint")
    with pytest.raises(train.CheckpointError, match="not a readable checkpoint"):
        read_checkpoint(str(bad))
    torch.save({"model": {}}, tmp_path / "other.pt")
    with pytest.raises(train.CheckpointError, match="not a Cuatrola checkpoint"):
        read_checkpoint(str(tmp_path / "other.pt"))
    train.main([*TINY, "--run-dir", str(tmp_path / "r"), "--total-decisions", "1024"])
    path = only_run(tmp_path / "r") / "checkpoint.pt"
    ck = torch.load(path, weights_only=True)
    ck["obs_version"] = 0
    torch.save(ck, tmp_path / "old.pt")
    with pytest.raises(train.CheckpointError, match="observation version 0"):
        read_checkpoint(str(tmp_path / "old.pt"))
    with pytest.raises(train.CheckpointError, match="observation version 0"):
        read_checkpoint(str(tmp_path / "old.pt"), older=True)
    ck["obs_version"] = 1  # an earlier version: it may play and start a run, not resume
    torch.save(ck, tmp_path / "v1.pt")
    with pytest.raises(train.CheckpointError, match="version 2 .it can play, be evaluated and start a run with --init"):
        read_checkpoint(str(tmp_path / "v1.pt"))
    assert read_checkpoint(str(tmp_path / "v1.pt"), older=True)["obs_version"] == 1
    with pytest.raises(train.CheckpointError, match="rules 'online', not 'traditional'"):
        read_checkpoint(str(path), rules_name="traditional")
    from agents.torch_agent import load_network

    ck = torch.load(path, weights_only=True)
    ck["model"] = {k: v[..., :-1] if k == "policy_net.0.weight" else v for k, v in ck["model"].items()}
    torch.save(ck, tmp_path / "narrow.pt")  # a network of another input size (an older layout)
    with pytest.raises(train.CheckpointError, match="holds a network this code cannot load"):
        load_network(str(tmp_path / "narrow.pt"))


def test_bad_config(tmp_path):
    cfg = tmp_path / "x.yaml"
    cfg.write_text("num_envz: 3\n")
    with pytest.raises(SystemExit):
        train.parse_config(["--config", str(cfg)])
    with pytest.raises(ValueError, match="unknown rules preset"):
        train.parse_config(["--rules", "house"])


def test_model_spec_plays_a_checkpoint(tmp_path):
    from agents import make_agent, seat_view
    from cuatrola_env.game import Game

    train.main([*TINY, "--run-dir", str(tmp_path), "--total-decisions", "1024"])
    agent = make_agent(f"model:{only_run(tmp_path) / 'checkpoint.pt'}")
    g = Game(seed=0)
    while not g.over:
        g.step(agent.act(seat_view(g)))
    (tmp_path / "junk.pt").write_text("x")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        make_agent(f"model:{tmp_path / 'junk.pt'}")


def test_init_fine_tunes_from_a_checkpoint(tmp_path, capsys):
    train.main([*TINY, "--run-dir", str(tmp_path / "a"), "--total-decisions", "1024"])
    start = only_run(tmp_path / "a") / "checkpoint.pt"
    w0 = read_checkpoint(str(start))["model"]
    # with a zero learning rate the fine-tuned run ends on exactly the weights it started from
    still = [*TINY, "--imitation-decisions", "0", "--total-decisions", "1024", "--init", str(start)]
    train.main([*still, "--run-dir", str(tmp_path / "b"), "--learning-rate", "0"])
    wb = read_checkpoint(str(only_run(tmp_path / "b") / "checkpoint.pt"))
    assert wb["step"] == 1024, "a fine-tuning run counts its own decisions"
    assert all(torch.equal(w0[k], wb["model"][k]) for k in w0)
    train.main([*still, "--run-dir", str(tmp_path / "c")])
    wc = read_checkpoint(str(only_run(tmp_path / "c") / "checkpoint.pt"))["model"]
    assert not all(torch.equal(w0[k], wc[k]) for k in w0), "with a learning rate it trains"
    assert train.main([*still, "--run-dir", str(tmp_path / "d"), "--hidden", "16"]) == 2
    assert refused(capsys, "2 layers of 32 units; this run builds 2 of 16")
    # another preset's network may start a run (the observation is the same for every preset)
    assert train.main([*still, "--run-dir", str(tmp_path / "e"), "--rules", "traditional", "--learning-rate", "0"]) == 0
    we = read_checkpoint(str(only_run(tmp_path / "e") / "checkpoint.pt"), "traditional")["model"]
    assert all(torch.equal(w0[k], we[k]) for k in w0)
    assert train.main([*still, "--run-dir", str(tmp_path / "f"), "--init", str(tmp_path / "nothing.pt")]) == 2
    assert refused(capsys, "no checkpoint or model file")


def test_init_takes_the_network_shape_of_its_file_unless_a_flag_or_preset_sets_it(tmp_path, tiny_checkpoint):
    import torch

    ck = torch.load(tiny_checkpoint, weights_only=True)
    ck["config"] = {**ck["config"], "hidden": 48, "layers": 3}  # the file's shape, as parse_config reads it
    shipped = str(tmp_path / "wide.pt")
    torch.save(ck, shipped)
    shape = read_checkpoint(shipped)["config"]
    cfg, _, _ = train.parse_config(["--algorithm", "ppo", "--init", shipped, "--run-dir", str(tmp_path)])
    assert (cfg.hidden, cfg.layers) == (shape["hidden"], shape["layers"]) != (32, 2)
    cfg, _, _ = train.parse_config(["--algorithm", "ppo", "--init", shipped, "--hidden", "32"])
    assert cfg.hidden == 32, "a flag names the shape (and read_init then refuses the mismatch)"
    cfg, _, _ = train.parse_config(["--config", "tiny", "--init", shipped])
    assert cfg.hidden == 32, "so does a preset"
    cfg, _, _ = train.parse_config(["--algorithm", "ppo"])
    assert cfg.hidden == 128, "without --init the default shape"


def test_sweep_trains_variants_side_by_side_and_ranks_them(tmp_path):
    """experiments/sweep.py: each variant's flags reach its own run, which is stopped at the deadline
    by SIGINT (checkpoint written as on Ctrl-C), slimmed and evaluated on the same deals."""
    import json

    from experiments import sweep
    out = tmp_path / "sw"
    code = sweep.main(["--minutes", "0.25", "--out", str(out), "--torch-threads", "1", "--eval-deals", "4",
                       "--eval-matches", "1", "--base", "--config configs/tiny.yaml --eval-every 0",
                       "--variant", "lr1=--learning-rate 1e-3", "--variant", "h50=--heuristic-frac 0.5"])
    assert code == 0
    rows = {r["name"]: r for r in json.loads((out / "summary.json").read_text())["rows"]}
    assert set(rows) == {"lr1", "h50"}
    assert all(r["decisions"] > 4096 and r["illegal"] == 0 for r in rows.values()), "ran past tiny.yaml's length"
    assert torch.load(out / "lr1.pt", weights_only=True)["config"]["learning_rate"] == 1e-3
    assert torch.load(out / "h50.pt", weights_only=True)["config"]["heuristic_frac"] == 0.5
    with pytest.raises(SystemExit, match="NAME="):
        sweep.main(["--variant", "no flags"])


def test_a_plug_in_agent_as_the_fixed_opponent(tmp_path):
    """--opponent SPEC: after the warm start (which imitates the heuristic), that agent plays the
    opponent team of heuristic_frac of the games; a bad spec is refused before anything runs."""
    assert train.main([*TINY, "--run-dir", str(tmp_path), "--opponent", "plugin_agents:LowestCard,always_pass=0"]) == 0
    ck = read_checkpoint(next(tmp_path.glob("*/checkpoint.pt")))
    assert ck["config"]["opponent"] == "plugin_agents:LowestCard,always_pass=0" and ck["step"] == 4096
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        train.parse_config([*TINY, "--opponent", "nobody"])


def test_the_fixed_opponent_sees_each_hands_history(tmp_path):
    """The batched games keep no history, so self-play records it for the fixed opponent's views:
    an opponent that checks every view's history against its played cards, trick and bids plays a
    whole run (it raises where one is wrong), and PIMC, whose belief sampler reads it, plays one too."""
    assert train.main([*TINY, "--run-dir", str(tmp_path / "a"), "--heuristic-frac", "0.5",
                       "--opponent", "plugin_agents:ChecksHistory,always_pass=0"]) == 0
    assert train.main([*TINY, "--run-dir", str(tmp_path / "b"), "--opponent", "pimc:worlds=2"]) == 0


def test_resume_continues_exactly_against_a_search_opponent(tmp_path):
    """The hands' histories and the opponent's random stream are in the checkpoint: a run against
    PIMC stopped halfway and resumed ends with the weights of one that never stopped."""
    assert_resume_is_exact(tmp_path, [*TINY, "--opponent", "pimc:worlds=2", "--heuristic-frac", "0.5"], 3072)


def test_the_default_preset_is_the_default_algorithms_defaults_and_every_preset_parses(tmp_path):
    """``python train.py`` and ``--config configs/default.yaml`` are the same run; each preset in
    configs/ names only fields of its algorithm (in a runs folder holding the earlier stage a stage
    joins)."""
    from agents.training.algorithms import DEFAULT

    plain, _, _ = train.parse_config([])
    preset, _, _ = train.parse_config(["--config", str(ROOT / "configs/default.yaml")])
    assert plain.algorithm == DEFAULT and plain == preset and plain.recipe == "default"
    bare, _, _ = train.parse_config(["--algorithm", DEFAULT])
    assert dataclasses.replace(bare, recipe="default") == plain, "default.yaml is the default algorithm's defaults"
    (tmp_path / "late_1_0/data").mkdir(parents=True)
    (tmp_path / "late_1_0/data/window.npz").touch()
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        cfg, _, _ = train.parse_config(["--config", str(path), "--run-dir", str(tmp_path)])
        assert cfg.algorithm in ("ppo", "distill") and cfg.recipe == path.stem, path


def test_help_shows_every_fields_default(capsys):
    """``train.py --help`` (each algorithm's) and ``evaluate.py --help`` say what a flag left out means."""
    from agents import evaluation

    for argv in ([], ["--algorithm", "ppo"], ["--algorithm", "distill"]):
        with pytest.raises(SystemExit):
            train.parse_config([*argv, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert "(default: 1)" in out and "(default: 'online')" in out, argv  # --seed, --rules
    with pytest.raises(SystemExit):
        evaluation.main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: 2000)" in out and "(default: 0)" in out


@pytest.mark.parametrize("argv", [["--algorithm", "ppo", "--num-envs", "0"], ["--algorithm", "ppo", "--num-steps", "-1"],
                                  ["--algorithm", "distill", "--window", "0"], ["--hands", "0"]])
def test_a_count_below_one_is_a_one_line_refusal_before_any_folder(argv, tmp_path, capsys):
    assert train.main([*argv, "--run-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "must be at least 1" in err[0]
    assert not (tmp_path / "runs").exists(), "a refused run leaves no folder"


def test_a_preset_by_name_works_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cfg, _, _ = train.parse_config(["--config", "tiny"])
    assert cfg.exp_name == "tiny" and cfg.algorithm == "ppo"
    assert train.parse_config(["--config", "default"])[0] == train.parse_config([])[0]
    assert train.main(["--config", "tny"]) == 2
    err = capsys.readouterr().err.strip()
    presets = ", ".join(sorted(f.stem for f in (Path(__file__).parents[1] / "configs").glob("*.yaml")))
    assert err.startswith("error: --config tny: no such file") and f"(the presets: {presets})" in err


def test_a_run_says_where_its_logs_are_and_how_to_watch_them(tmp_path, capsys):
    assert train.main([*TINY, "--run-dir", str(tmp_path), "--total-decisions", "1024"]) == 0
    (run,) = list(tmp_path.iterdir())
    err = capsys.readouterr().err
    assert f"starting ppo run {run.name}: checkpoint and logs in {run}" in err
    assert f"tensorboard --logdir {tmp_path}" in err


def test_the_progress_bar_shows_the_phase_and_the_latest_evaluation(tmp_path, capsys):
    """A bar per phase, each over its own decisions (so each ETA is at that phase's speed)."""
    assert train.main(["--config", "tiny", "--run-dir", str(tmp_path), "--eval-every", "1", "--eval-deals", "4"]) == 0
    err = capsys.readouterr().err
    assert "phase=imitation" in err and "phase=ppo" in err and "vs_heuristic=" in err
    (run,) = list(tmp_path.iterdir())
    cfg = read_checkpoint(str(run / "checkpoint.pt"))["config"]
    warm = cfg["imitation_decisions"]
    assert f"{run.name} imitation: 100%" in err and f"| {warm}/{warm} [" in err
    assert f"{run.name} ppo: 100%" in err and f"| {cfg['total_decisions'] - warm}/{cfg['total_decisions'] - warm} [" in err


def test_a_network_of_an_earlier_observation_version_starts_a_run_playing_as_before(tmp_path):
    """``--init`` with a version-1 network (models/ppo): the run's network is the same network with
    zero weights for the new observation columns, so its logits on today's observations are the
    old network's, and the new columns can then be learned."""
    import numpy as np
    import torch

    from agents.network import build
    from agents.torch_agent import load_network
    from agents.training.config import read_init
    from cuatrola_env import OBS_DIM, VectorCuatrola

    old_file = str(ROOT / "models/ppo/ppo.pt")
    cfg, _, _ = train.parse_config(["--algorithm", "ppo", "--init", old_file, "--run-dir", str(tmp_path)])
    init = read_init(cfg)
    state = init["model"]
    net = build(init["network"])
    net.load_state_dict(state)
    assert net.obs_dim == OBS_DIM and state["policy_net.0.weight"].shape[1] == OBS_DIM + 24
    old = load_network(old_file)
    assert old.obs_dim < OBS_DIM
    env = VectorCuatrola(256, seed=4)
    rng = np.random.default_rng(1)
    for _ in range(10):
        env.step((rng.random(env.action_mask.shape) * env.action_mask).argmax(1))
    obs, mask = torch.from_numpy(env.observe()), torch.from_numpy(env.action_mask.copy())
    assert obs[:, old.obs_dim:].any()
    with torch.no_grad():
        assert torch.allclose(net.policy(obs, mask), old.policy(obs, mask), atol=1e-5)


def test_the_learner_meets_a_fixed_opponent_from_both_sides_of_the_dealer():
    """The dealer's team bids last and holds the muestra. In every slot with an opponent the learner
    must sit on la mano's team in about half its hands, not in all or none of them as a team that only
    alternated (like the dealer) would: the charts against each opponent would be tilted."""
    cfg = PPOConfig(num_envs=8, num_steps=48, imitation_decisions=0, heuristic_frac=1.0, pool_frac=0.0, hidden=16)
    play = SelfPlay(cfg, get_rules("online"), PolicyValueNet(16, 2))
    first_dealer = play.env.state.dealer.astype(int).copy()
    run, rng = Progress.start(cfg.num_envs), np.random.default_rng(0)
    seen = {k: [] for k in ("env", "uid", "seat")}
    for _ in range(4):
        data, _, _ = play.collect(run, rng)
        for k in seen:
            seen[k].append(data[k])
    env, uid, seat = (np.concatenate(seen[k]) for k in ("env", "uid", "seat"))
    mano_team = (first_dealer[env] + uid + 1) % 4 & 1  # the dealer moves a seat a hand; la mano sits after him
    for slot in range(cfg.num_envs):
        hands = np.unique(uid[env == slot])
        assert hands.size >= 6
        on_manos_team = [((seat[(env == slot) & (uid == h)] & 1) == mano_team[(env == slot) & (uid == h)]).all()
                         for h in hands]
        assert 0.25 <= np.mean(on_manos_team) <= 0.75, (slot, on_manos_team)
    play.close()


def test_dealer_edge_counts_la_manos_team_which_loses_to_the_dealers():
    """examples/dealer_edge.py: one result a hand, each a hand's value (1, 2, 4 or 5 game points,
    won or lost), from la mano's side: the shipped network's self-play gives the dealer's team
    (bidding last, holding the muestra) about 0.4 a hand, far outside 2,000 hands' noise."""
    x = dealer_edge.manos_team_points(str(ROOT / "agents/models/cuatrola.pt"), 2000, "online", seed=1, greedy=False)
    assert x.shape == (2000,) and set(np.abs(x).tolist()) <= {1.0, 2.0, 4.0, 5.0}
    assert x.mean() < -0.2


def test_a_run_trains_to_the_match_target_it_is_given(tmp_path, capsys):
    """``--target 5`` (the online game's short match): the run's rules and its checkpoint record
    target 5, and a teacher–student run's pre-hand scores are drawn below it; a target out of range is refused."""
    from agents.training.config import run_rules
    from agents.training.distill import _match_scores

    assert train.main(["--config", "tiny", "--target", "5", "--eval-every", "0", "--run-dir", str(tmp_path)]) == 0
    ck = read_checkpoint(str(only_run(tmp_path) / "checkpoint.pt"))
    assert ck["rules"]["target"] == 5 and ck["config"]["target"] == 5
    cfg, _, _ = train.parse_config(["--config", "tiny", "--rules", "traditional", "--target", "21"])
    rules = run_rules(cfg)
    assert (rules.name, rules.target) == ("traditional", 21)
    scores = _match_scores(2000, run_rules(train.parse_config(["--target", "5"])[0]), np.random.default_rng(0))
    assert scores.max() == 4 and scores.min() == 0
    assert train.main(["--config", "tiny", "--target", "1001", "--run-dir", str(tmp_path / "x")]) == 2
    assert refused(capsys, "target (--target) must be a match target in 1..1000")


def test_a_finished_run_says_how_to_evaluate_export_and_serve_it(tmp_path, capsys):
    assert train.main(["--config", "tiny", "--eval-every", "0", "--run-dir", str(tmp_path)]) == 0
    ck = only_run(tmp_path) / "checkpoint.pt"
    err = capsys.readouterr().err
    assert f"finished: {ck}" in err
    assert f"python evaluate.py model:{ck}" in err and f"python -m agents.export {ck}" in err and "cuatrola-serve --model" in err


def test_every_checkpoint_says_its_network_and_is_built_from_that(tmp_path, capsys):
    """A run's checkpoint carries its network's spec ("network"), and loading builds that spec: a spec
    that contradicts the weights, or a malformed one, is a one-line refusal; a file written before
    specs (the shipped .pt files) is read from its weights."""
    import torch

    from agents.checkpoint import CheckpointError
    from agents.network import NetworkSpec
    from agents.torch_agent import load_network

    assert train.main(["--config", "tiny", "--eval-every", "0", "--run-dir", str(tmp_path)]) == 0
    path = only_run(tmp_path) / "checkpoint.pt"
    ck = read_checkpoint(str(path))
    assert ck["network"] == load_network(str(path)).spec.to_dict() == NetworkSpec(32, 2).to_dict()
    for name, edit, says in (("wrong", {"hidden": 64}, "cannot load"), ("bad", {"late_layers": "3"}, "late_layers"),
                             ("unknown", {"heads": 5}, "unknown field")):
        bad = {**ck, "network": {**ck["network"], **edit}}
        torch.save(bad, tmp_path / f"{name}.pt")
        with pytest.raises(CheckpointError, match=says):
            load_network(str(tmp_path / f"{name}.pt"))
    shipped = load_network(str(ROOT / "agents/models/cuatrola_expert.pt"))  # written before specs
    assert shipped.spec.late_hidden == 512 and shipped.spec.early_head and shipped.spec.late_from_trick == 1


def test_no_module_guesses_a_network_from_its_key_names():
    """Heads are declared in the spec: outside agents/network.py (whose NetworkSpec.of_state reads
    files written before specs) no module of the package detects a head from a state dict's keys."""
    import re

    guesses = re.compile(r'"(early_net|late_net|q_net|owner_net)\.0\.weight" in|late_head_size\(|"late_from_trick" in '
                         r'|startswith\("owner_net\."\) for k in|q_net\.\{')
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "agents").rglob("*.py")) if path.name != "network.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if guesses.search(line)]
    assert not found, found


def test_the_product_holds_user_presets_and_examples_and_research_lives_apart():
    """configs/ holds the user presets and the recipes' stages (at most 8), examples/ the user
    examples (at most 6); research scripts live in experiments/ (not installed); the experiments'
    log is condensed (at most about 400 lines) and the training page is a guide, not a log."""
    configs = sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    examples = sorted(p.stem for p in (ROOT / "examples").glob("*.py") if p.stem != "__init__")
    assert len(configs) <= 8 and len(examples) <= 6, (configs, examples)
    assert len((ROOT / "docs/experiments.md").read_text().splitlines()) <= 420
    training = (ROOT / "docs/training.md").read_text()
    assert "## 2026-" not in training and len(training.splitlines()) <= 250


def test_an_algorithm_a_level_and_a_model_share_no_name():
    """One meaning per name: no training algorithm is named as a bot level (``expert`` is the level,
    its model and the recipe that makes that model, ``configs/expert.yaml``; no algorithm)."""
    from agents.policy import LEVELS
    from agents.training.algorithms import ALGORITHMS

    assert set(ALGORITHMS).isdisjoint(LEVELS), set(ALGORITHMS) & set(LEVELS)
    cfg, _, _ = train.parse_config(["--config", "expert"])
    assert cfg.algorithm not in LEVELS and cfg.recipe == "expert"


def test_each_stage_says_where_it_stands_in_its_recipe():
    from agents.training.loop import stage_of
    from agents.training.report import duration

    first, _, _ = train.parse_config(["--config", "expert"])
    second, _, _ = train.parse_config(["--config", "finetune", "--recipe", "expert", "--then",
                                       "late,early,search_bids,refit"])
    later = sum(preset(stage)["minutes"] for stage in ("finetune", "late", "early", "search_bids", "refit"))
    assert stage_of(first) == f" (stage 1 of 6 of recipe expert; the stages after it about {duration(60 * later)} on 2 cores)"
    assert stage_of(second).startswith(" (stage 2 of 6 of recipe expert; the stages after it about ")
    last, _, _ = train.parse_config(["--config", "search_bids", "--recipe", "expert", "--then", ""])
    assert stage_of(last) == " (stage 6 of 6 of recipe expert)"


def test_a_later_stage_whose_preset_gives_no_time_leaves_the_recipes_time_unknown(tmp_path):
    """The recipe's time left counts each later stage at its preset's measured ``minutes``; a YAML
    stage that does not give them is said to be unknown, not counted as nothing."""
    from agents.training.loop import stage_of

    (tmp_path / "mine.yaml").write_text("algorithm: distill\niterations: 1\n")
    cfg, _, _ = train.parse_config(["--config", "expert", "--then", f"finetune,{tmp_path / 'mine.yaml'}"])
    assert later_minutes(cfg) is None
    assert stage_of(cfg).endswith("; the time of the stages after it unknown)")
    cfg, _, _ = train.parse_config(["--config", "expert", "--then", "finetune"])
    assert later_minutes(cfg) == preset("finetune")["minutes"] > 0


def test_a_checkpoint_of_an_algorithm_no_longer_trained_is_refused_plainly(tmp_path, capsys):
    """A run of an algorithm the project no longer has (oracle labels, expert iteration, refit: now
    the teacher–student algorithm) cannot be resumed: one line that says how to go on from its
    network (``--init``)."""
    import torch

    assert train.main(["--config", "tiny", "--eval-every", "0", "--run-dir", str(tmp_path)]) == 0
    path = only_run(tmp_path) / "checkpoint.pt"
    ck = read_checkpoint(str(path))
    torch.save({**ck, "config": {**ck["config"], "algorithm": "oracle"}}, tmp_path / "old.pt")
    assert train.main(["--resume", str(tmp_path / "old.pt")]) == 2
    assert refused(capsys, f"start a new run from its network with --init {tmp_path / 'old.pt'}")


def test_the_default_recipes_models_name_their_recipe_and_it_is_a_shipped_preset():
    """The shipped base models are the default recipe's output: their cards say so, and the recipe is
    a file of configs/ whose chain names only shipped presets (nothing outside the repository)."""
    import json

    from agents.training.config import stages

    for name in ("cuatrola", "cuatrola_traditional"):
        card = json.loads((ROOT / "agents/models" / f"{name}.json").read_text())
        recipe = card["training"]["recipe"]
        cfg, _, _ = train.parse_config(["--config", recipe])
        assert (ROOT / "configs" / f"{recipe}.yaml").is_file() and cfg.recipe == recipe
        assert all((ROOT / "configs" / f"{stage}.yaml").is_file() for stage in stages(cfg.then)), cfg.then
    expert, _, _ = train.parse_config(["--config", "expert"])
    assert stages(expert.then) == ["finetune", "late", "early", "search_bids", "refit"], expert.then
    assert not expert.init, "the expert recipe starts from scratch"
