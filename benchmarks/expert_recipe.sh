#!/usr/bin/env bash
# The expert recipe and its network against PIMC(32), paired with the hand-made level expert's model.
#   bash benchmarks/expert_recipe.sh [RULES] [OUT] [FROM [STAGES]]
# RULES: online (the default) or traditional. OUT: where runs and result files go (default
# runs/expert_recipe_RULES/). FROM: a network the default recipe made (agents/models/cuatrola.pt online,
# cuatrola_traditional.pt under traditional): the recipe's stages 3 to 6 from it, not all six; or a
# network exported at a stage boundary with STAGES the stages still to run (a network after
# `search_bids` with refit: the last stage alone, beside the recipe's `late` run in OUT/runs).
# Then: the network exported, played as level expert against PIMC(32) on 2,000 duplicate deals of each
# of seeds 61, 71, 81, 82 and 83 (about 4 minutes each on 2 workers) and 600 duplicate matches to 11 of
# seeds 51, 52 and 53, and paired with the hand-made level expert's model on the same deals, seed by
# seed and all together (its result files in docs/results/late/ where they are there; the others
# played here, naming it by its path). On a 2-core x86-64 CPU the recipe takes about 5 to 6 hours:
# stages 3 and 4 took 1.5 to 2.4 hours in different runs, stage 5 about 70 minutes, stage 6 about an
# hour. Each step is skipped when its file is there; a stopped recipe goes on from its latest
# checkpoint, so the same command goes on after a stop. Last, the model's card is written with the evaluations in it
# (python -m agents.export --measured) and COMPUTE, what the training cost (an environment variable;
# by default the range above).
set -euo pipefail
RULES=${1:-online}
OUT=${2:-runs/expert_recipe_$RULES}
FROM=${3:-}
STAGES=${4:-late,early,search_bids,refit}
COMPUTE=${COMPUTE:-about 5 to 6 hours on a 2-core x86-64 CPU, no GPU}
case "$RULES" in
  online) SHIPPED=docs/results/late/refit3; SHIPPED_MODEL=agents/models/cuatrola_expert.onnx ;;
  traditional) SHIPPED=docs/results/late/trad_refit5; SHIPPED_MODEL=agents/models/cuatrola_traditional_expert.onnx ;;
  *) echo "RULES must be online or traditional, got $RULES" >&2; exit 2 ;;
esac
mkdir -p "$OUT/runs"

source "$(dirname "$0")/steps.sh"  # run FILE COMMAND...

final_checkpoint() {  # the recipe's last stage's checkpoint
  echo "$(ls -td "$OUT"/runs/refit_*/ | head -1)checkpoint.pt"
}

later_stages() {  # the STAGES after the first
  case "$STAGES" in *,*) echo "${STAGES#*,}" ;; *) echo "" ;; esac
}

train() {  # the recipe from its start, or on from the latest checkpoint of a stopped one
  local latest
  latest=$(ls -t "$OUT"/runs/*/checkpoint.pt 2>/dev/null | head -1 || true)
  if [ -n "$latest" ]; then
    python train.py --resume "$latest"
  elif [ -n "$FROM" ]; then
    python train.py --config "${STAGES%%,*}" --init "$FROM" --recipe expert --then "$(later_stages)" --rules "$RULES" \
      --seed 1 --run-dir "$OUT/runs"
  else
    python train.py --config expert --rules "$RULES" --run-dir "$OUT/runs"
  fi
  python -m agents.export "$(final_checkpoint)" --out "$OUT/expert.onnx" --torch-out "$OUT/expert.pt"
}

play_deals() {  # play_deals PLAYER SEED FILE: PLAYER against PIMC(32) on 2,000 duplicate deals of SEED, into FILE
  run "$3" python evaluate.py "$1" pimc:worlds=32 --rules "$RULES" --deals 2000 --matches 0 --seed "$2" --workers 2 \
    --no-progress --json "$3"
}

shipped_deals() {  # the hand-made model's result file of seed $1, naming it by its path (played here if missing)
  local file
  for file in "${SHIPPED}_path_vs_pimc32_seed$1.json" "${SHIPPED}_vs_pimc32_seed$1.json"; do
    if [ -f "$file" ] && grep -q "path=" "$file"; then echo "$file"; return; fi
  done
  file="$OUT/shipped_vs_pimc32_seed$1.json"
  play_deals "bot:path=$SHIPPED_MODEL,level=expert" "$1" "$file" >&2
  echo "$file"
}

SEEDS=(61 71 81 82 83)
MATCH_SEEDS=(51 52 53)
RESULTS=()
for seed in "${SEEDS[@]}"; do RESULTS+=("$OUT/vs_pimc32_seed$seed.json"); done
for seed in "${MATCH_SEEDS[@]}"; do RESULTS+=("$OUT/vs_pimc32_matches_seed$seed.json"); done
run "$OUT/expert.pt" train
PLAYER=bot:path=$OUT/expert.onnx,level=expert
for seed in "${SEEDS[@]}"; do play_deals "$PLAYER" "$seed" "$OUT/vs_pimc32_seed$seed.json"; done
for seed in "${MATCH_SEEDS[@]}"; do
  run "$OUT/vs_pimc32_matches_seed$seed.json" python evaluate.py "$PLAYER" pimc:worlds=32 --rules "$RULES" --deals 0 \
    --matches 600 --seed "$seed" --workers 2 --no-progress --json "$OUT/vs_pimc32_matches_seed$seed.json"
done

pairs=()
for seed in "${SEEDS[@]}"; do  # each seed alone, then all together
  shipped=$(shipped_deals "$seed")
  python evaluate.py compare "$OUT/vs_pimc32_seed$seed.json" "$shipped"
  pairs+=("$OUT/vs_pimc32_seed$seed.json" "$shipped")
done
python evaluate.py compare "${pairs[@]}"
matches=()
for seed in "${MATCH_SEEDS[@]}"; do matches+=("$OUT/vs_pimc32_matches_seed$seed.json" "${SHIPPED}_vs_pimc32_matches_seed$seed.json"); done
python evaluate.py compare "${matches[@]}"
# the card again, with what was measured
python -m agents.export "$(final_checkpoint)" --out "$OUT/expert.onnx" --measured "${RESULTS[@]}" --compute "$COMPUTE"
