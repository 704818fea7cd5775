"""``sb3:PATH``: a Stable-Baselines3 policy as an agent of ``evaluate.py``, loaded with nothing unpickled
(skipped where sb3-contrib is not installed)."""

from __future__ import annotations

import base64
import json
import pickle
import zipfile

import gymnasium
import pytest

import cuatrola_env  # noqa: F401  (registers Cuatrola-v0)
from agents import evaluation
from agents.registry import make_agent

sb3_contrib = pytest.importorskip("sb3_contrib")
from stable_baselines3 import DQN, PPO  # noqa: E402


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """MaskablePPO, PPO and DQN files on Cuatrola-v0 after 64 steps (so that they hold pickled training
    state too: the last observations, the episode buffers); their play is checked, not its strength."""
    folder = tmp_path_factory.mktemp("sb3")
    env = gymnasium.make("Cuatrola-v0")
    paths = {}
    for cls in (sb3_contrib.MaskablePPO, PPO, DQN):
        kw = {} if cls is DQN else {"n_steps": 64, "batch_size": 64}
        paths[cls.__name__] = str(folder / f"{cls.__name__}.zip")
        cls("MlpPolicy", env, seed=0, verbose=0, **kw).learn(64).save(paths[cls.__name__])
    return paths


@pytest.mark.parametrize("kind", ["MaskablePPO", "PPO", "DQN"])
def test_an_sb3_policy_plays_only_legal_moves_in_a_duplicate_evaluation(saved, kind, tmp_path):
    out = tmp_path / "result.json"
    assert evaluation.main([f"sb3:{saved[kind]}", "heuristic", "--deals", "10", "--matches", "0", "--seed", "3",
                            "--json", str(out), "--no-progress"]) == 0
    pairing = json.loads(out.read_text())["pairings"][0]
    assert pairing["deals"] == 10 and pairing["illegal_actions"] == {"a": 0, "b": 0}


def test_an_sb3_policy_is_the_one_saved(saved):
    """The agent plays the saved network's most likely legal action (MaskablePPO's own predict)."""
    agent = make_agent(f"sb3:{saved['MaskablePPO']}")
    model = sb3_contrib.MaskablePPO.load(saved["MaskablePPO"], device="cpu")
    game = cuatrola_env.game.Game()
    for seed in range(5):
        game.reset(seed=seed)
        view = game.seat_view()
        expected, _ = model.predict(view.observation[None], action_masks=view.legal_mask[None], deterministic=True)
        assert agent.act(view) == int(expected[0])


def test_a_file_that_would_unpickle_code_is_refused_and_nothing_runs(saved, tmp_path):
    """A field pickled in a form no stand-in covers is refused before Stable-Baselines3 reads it."""
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    with zipfile.ZipFile(saved["MaskablePPO"]) as z:
        files = {n: z.read(n) for n in z.namelist()}
    data = json.loads(files["data"])
    data["policy_kwargs"] = {":type:": "<class 'dict'>", ":serialized:": base64.b64encode(pickle.dumps(Payload())).decode()}
    files["data"] = json.dumps(data).encode()
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        for name, content in files.items():
            z.writestr(name, content)
    with pytest.raises(ValueError, match=r"policy_kwargs.*only unpickling could rebuild"):
        make_agent(f"sb3:{evil}")
    assert not marker.exists()


def test_bad_files_are_refused_in_one_line(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        make_agent(f"sb3:{tmp_path / 'none.zip'}")
    text = tmp_path / "policy.zip"
    text.write_text("not a zip")
    with pytest.raises(ValueError, match="is not a Stable-Baselines3 model file"):
        make_agent(f"sb3:{text}")
    with pytest.raises(ValueError, match="sb3 agents need a path"):
        make_agent("sb3:")


def test_self_play_draws_past_snapshots_of_the_learning_model_as_opponents():
    """``PastSelves`` opponents play the learning model's snapshots, which ``SnapshotCallback`` adds at
    the start and every ``every`` steps (the oldest dropped past ``size``); each episode draws one."""
    from stable_baselines3.common.env_util import make_vec_env

    from agents.sb3_agent import PastSelves, SnapshotCallback

    selves = PastSelves(size=3, latest=0.0, seed=0)
    env = make_vec_env("Cuatrola-v0", n_envs=2, seed=0, env_kwargs={"opponents": selves})
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, seed=0, verbose=0)
    model.learn(256, callback=SnapshotCallback(selves, every=64))
    assert len(selves.snapshots) == 3  # 1 at the start + 4 more by step 256, the oldest dropped past 3
    first, last = selves.snapshots[0], selves.snapshots[-1]
    assert any(not (first[k] == last[k]).all() for k in first), "the snapshots follow the learning"
    drawn = set()
    for seed in range(12):
        selves.reset(seed)
        drawn.add(next(i for i, s in enumerate(selves.snapshots)
                       if all((s[k] == v).all() for k, v in selves.player.state_dict().items())))
    assert len(drawn) > 1  # latest=0.0: any of the kept snapshots
    with pytest.raises(ValueError, match="size >= 1"):
        PastSelves(size=0)
