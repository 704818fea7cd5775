"""``render_mode="rgb_array"``: a picture of the table that shows what the learning seat may see and
nothing more, Gymnasium's RecordVideo on it, Stable-Baselines3's ``make_vec_env`` and MaskablePPO on
the registered id, and a vector environment's terminal step whose mask the usual idiom can use."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from helpers import play_random_episodes, scramble_hidden

import cuatrola_env  # noqa: F401  (registers Cuatrola-v0)
from cuatrola_env import env as aec_env
from cuatrola_env.game import Game
from cuatrola_env.gym import CuatrolaGymEnv
from cuatrola_env.picture import HEIGHT, WIDTH, render_rgb


def test_the_picture_of_a_seat_does_not_change_when_the_cards_it_cannot_see_move():
    """No card a seat cannot see is in its picture: scrambling the others' unseen cards (the dealer
    keeps the muestra, which every seat sees) leaves every pixel; a spectator's picture changes."""
    rng = np.random.default_rng(7)
    moved = 0
    for episode in range(20):
        env = CuatrolaGymEnv(seat=episode % 4, render_mode="rgb_array")
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            g = env.game.single
            saved = list(g.hands)
            picture, spectator = env.render(), render_rgb(env.game.state, env.game.rules, seat=None)
            g.hands = scramble_hidden(g.hands, g.dealer, g.muestra, g.played, env.seat, rng)
            if g.hands != saved:
                moved += 1
                assert np.array_equal(picture, env.render()), "the picture shows a card the seat cannot see"
                assert not np.array_equal(spectator, render_rgb(env.game.state, env.game.rules, seat=None))
            g.hands = saved
            obs, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        assert env.render().shape == (HEIGHT, WIDTH, 3) and env.render().dtype == np.uint8
    assert moved > 30, "the scramble must actually move cards"


def test_the_picture_shows_the_seats_own_hand_and_the_trick():
    """A card face is mostly paper-white; a seat's own five cards and a card played to the trick
    add white to the picture, the others' backs do not."""
    def paper(image):
        return int((image.min(axis=2) > 240).sum())

    g = Game("online", seed=3)
    seat = int(g.state.dealer[0])  # la mano, the seat after the dealer, leads the first trick
    before = paper(render_rgb(g.state, g.rules, seat=seat))
    spectator = paper(render_rgb(g.state, g.rules, seat=None))
    assert spectator > 2 * before, "a spectator sees four hands face up, the seat only its own (and the muestra)"
    while g.seat_view().phase == 0:
        g.step(20)  # every seat passes
    g.step(g.legal_actions()[0])
    assert paper(render_rgb(g.state, g.rules, seat=seat)) > before * 1.1, "a card in the trick is drawn face up"
    with pytest.raises(ValueError, match="seat must be 0..3"):
        render_rgb(g.state, g.rules, seat=4)


def test_render_modes_of_both_environments():
    e = aec_env(render_mode="rgb_array")
    e.reset(seed=0)
    assert e.render().shape == (HEIGHT, WIDTH, 3)
    env = gymnasium.make("Cuatrola-v0", render_mode="rgb_array")
    env.reset(seed=0)
    assert env.render().shape == (HEIGHT, WIDTH, 3)
    with pytest.raises(ValueError, match="'rgb_array'"):
        CuatrolaGymEnv(render_mode="video")


def test_record_video_writes_a_video_of_each_hand(tmp_path):
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    folder = tmp_path / "videos"  # RecordVideo warns of a folder that exists
    env = RecordVideo(gymnasium.make("Cuatrola-v0", render_mode="rgb_array"), str(folder),
                      episode_trigger=lambda episode: True, name_prefix="hand")
    play_random_episodes(env, range(2), np.random.default_rng(0))
    env.close()
    videos = sorted(p.name for p in folder.glob("*.mp4"))
    assert videos == ["hand-episode-0.mp4", "hand-episode-1.mp4"]
    assert all((folder / v).stat().st_size > 1000 for v in videos)


def test_a_vector_environments_terminal_mask_lets_the_first_legal_action_idiom_go_on():
    """Gymnasium's vector environment returns the terminal step's info; its mask marks every action
    allowed (the next step only resets), so ``np.flatnonzero(mask)[0]`` never meets an empty mask."""
    envs = gymnasium.make_vec("Cuatrola-v0", num_envs=3)
    obs, info = envs.reset(seed=0)
    ended = 0
    for _ in range(60):
        actions = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
        obs, reward, terminated, truncated, info = envs.step(actions)
        assert info["action_mask"][terminated].all()
        assert all(m.any() for m in info["action_mask"])
        ended += int(terminated.sum())
    assert ended >= 6
    envs.close()


@pytest.mark.parametrize("others", ["random", "heuristic", "self"])
def test_stable_baselines3_make_vec_env_and_maskable_ppo_run_on_the_registered_id(capsys, others):
    """SB3's ``make_vec_env`` asks for ``render_mode="rgb_array"``; the documented example learns for a
    few steps, against random players, an agent spec or its past selves, and plays its hands."""
    pytest.importorskip("sb3_contrib")
    from examples import sb3_maskable_ppo

    assert sb3_maskable_ppo.main(["--timesteps", "512", "--hands", "40", "--opponents", others]) == 0
    out = capsys.readouterr().out
    assert "MaskablePPO after 512 decisions" in out and "random play" in out
