#!/usr/bin/env bash
# The ladder of docs/evaluation.md, from nothing: every agent against PIMC(32) on the same 2,000 deals
# (seed 61), the cheater's games on them, each agent's exploit, then the table and the plot.
#   bash benchmarks/ladder.sh [OUT]        (OUT: where the result files go; default ladder/)
# About 5 hours on a 2-core x86-64 CPU: the evaluations about 25 minutes (level master's the longest),
# each exploit of a fast agent 16 to 23 minutes, PIMC(32)'s 42 minutes and master's 104 (mostly their
# clones' labelling).
# Each step is skipped when its file is there, so the same command goes on after a stop.
set -euo pipefail
OUT=${1:-ladder}
mkdir -p "$OUT"
BASE=pimc:worlds=32
EVAL=(--deals 2000 --matches 0 --seed 61 --workers 2 --no-progress)

source "$(dirname "$0")/steps.sh"  # run FILE COMMAND...

# strength against PIMC(32), the first with the cheater's games on the same deals
run "$OUT/heuristic.json" python evaluate.py heuristic $BASE "${EVAL[@]}" --gap --json "$OUT/heuristic.json"
run "$OUT/random.json" python evaluate.py random $BASE "${EVAL[@]}" --json "$OUT/random.json"
run "$OUT/network.json" python evaluate.py model:agents/models/cuatrola.pt $BASE "${EVAL[@]}" --json "$OUT/network.json"
run "$OUT/expert.json" python evaluate.py bot:level=expert $BASE "${EVAL[@]}" --json "$OUT/expert.json"
run "$OUT/master.json" python evaluate.py bot:level=master $BASE "${EVAL[@]}" --json "$OUT/master.json"

# exploitability lower bounds, one budget (16 M PPO decisions from level expert's network); the slow
# agents imitated first by a network (10,000 hands of their own choices), measured against themselves
EXPLOIT=(--workers 2 --no-progress)
run "$OUT/exploit_random.json" python evaluate.py exploit random "${EXPLOIT[@]}" --json "$OUT/exploit_random.json"
run "$OUT/exploit_heuristic.json" python evaluate.py exploit heuristic "${EXPLOIT[@]}" --json "$OUT/exploit_heuristic.json"
run "$OUT/exploit_network.json" python evaluate.py exploit model:agents/models/cuatrola.pt "${EXPLOIT[@]}" \
  --json "$OUT/exploit_network.json"
run "$OUT/exploit_expert.json" python evaluate.py exploit bot:level=expert "${EXPLOIT[@]}" --json "$OUT/exploit_expert.json"
run "$OUT/exploit_pimc32.json" python evaluate.py exploit $BASE --clone 10000 "${EXPLOIT[@]}" --json "$OUT/exploit_pimc32.json"
run "$OUT/exploit_master.json" python evaluate.py exploit bot:level=master --clone 10000 "${EXPLOIT[@]}" \
  --json "$OUT/exploit_master.json"

python evaluate.py ladder "$OUT"/heuristic.json "$OUT"/random.json "$OUT"/network.json "$OUT"/expert.json \
  "$OUT"/master.json --exploit "$OUT"/exploit_*.json --json "$OUT/ladder.json" --png "$OUT/ladder.png"
