"""A video of Cuatrola hands: Gymnasium's ``RecordVideo`` on ``render_mode="rgb_array"``.

    pip install -e ".[serve,video]"                # onnxruntime for the shipped network, moviepy for the video
    python examples/record_video.py                # videos/hand-episode-0.mp4 (and the next hands')
    python examples/record_video.py --gif docs/images/hand.gif --hands 1

The learning seat (at the bottom of the picture, its hand face up, the others' as backs) and the
three other seats are all played by the shipped network (``agents/models/cuatrola.onnx``, its most
likely legal action). ``--gif`` also writes the first hand's frames as an animated GIF (Pillow).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium
import numpy as np
from gymnasium.wrappers import RecordVideo
from PIL import Image

import cuatrola_env  # noqa: F401 - registers "Cuatrola-v0"
from agents.policy import OnnxPolicy


def network_player(policy: OnnxPolicy):
    """``policy(observation, action_mask) -> action``: the network's most likely legal action."""
    def act(observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.argmax(policy.logits(observation[None], action_mask[None])[0]))
    return act


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=3, help="hands to record (default 3)")
    p.add_argument("--folder", default="videos", help="where RecordVideo writes its .mp4 files (default videos)")
    p.add_argument("--gif", default="", help="also write the first hand as an animated GIF to this path")
    p.add_argument("--seed", type=int, default=0, help="seed of the first deal (default 0)")
    args = p.parse_args(argv)
    play = network_player(OnnxPolicy.load())
    env = gymnasium.make("Cuatrola-v0", seat=0, partner=play, opponents=play, render_mode="rgb_array")
    env = RecordVideo(env, args.folder, episode_trigger=lambda episode: True, name_prefix="hand")
    frames = []
    for hand in range(args.hands):
        obs, info = env.reset(seed=args.seed + hand)
        frames += [env.render()] if hand == 0 else []
        done = False
        while not done:
            obs, reward, done, _, info = env.step(play(obs, info["action_mask"]))
            frames += [env.render()] if hand == 0 else []
        points = f"{abs(reward):.0f} game point" + ("s" if abs(reward) != 1 else "")
        print(f"hand {hand}: the learning seat's team {'won' if reward > 0 else 'lost'} {points}")
    env.close()
    print(f"videos in {args.folder}/")
    if args.gif:
        Path(args.gif).parent.mkdir(parents=True, exist_ok=True)
        images = [Image.fromarray(f) for f in frames + [frames[-1]] * 3]  # the last frame held a little longer
        images[0].save(args.gif, save_all=True, append_images=images[1:], duration=900, loop=0, optimize=True)
        print(f"animated GIF of the first hand: {args.gif}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
