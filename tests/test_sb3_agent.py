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
