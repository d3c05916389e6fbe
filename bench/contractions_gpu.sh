#!/usr/bin/env bash
# On the GPU machine: the CUDA contraction entry point (`_mm`, turned on
# with TILE_CUDA_TILES=1) checked against the interpreter (random
# contractions and every fixture), then the `contractions` bench group on
# cuda with it on and off (same card, same call), with the PyTorch peers.
#
#   OUT=/tmp/out bash bench/contractions_gpu.sh [ROUNDS (2)]
#
# Needs .device-carry/ with `tile` and the `gpu` test binary
# (bench/carry.sh).
set -uo pipefail
out=${OUT:-/tmp/tile-out}
rounds=${1:-2}
carry=.device-carry
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu tests, tiles on ($(date +%T))"
TILE_CUDA_TILES=1 timeout 150 "$carry/gpu" --nocapture random_contractions every_fixture > "$out/gpu_tiles.log" 2>&1
echo "exit $?"
grep -E "SKIPPED|fixture runs|test result|panicked|failure" "$out/gpu_tiles.log" | head -20
for tiles in 1 0; do
  echo "== bench, TILE_CUDA_TILES=$tiles ($(date +%T))"
  peers=none
  if [ "$tiles" = 1 ]; then peers=torch_eager,torch_compile; fi
  TILE_CUDA_TILES=$tiles timeout 120 "$carry/tile" bench --target cuda --cases contractions \
    --peers "$peers" --rounds "$rounds" --samples 5 --out "$out/bench-tiles$tiles" \
    > "$out/bench-tiles$tiles.txt" 2> "$out/bench-tiles$tiles.err"
  echo "exit $?"; tail -2 "$out/bench-tiles$tiles.err"
  "$carry/tile" audit "$out/bench-tiles$tiles/results.json" 2>&1 | tail -1
  cat "$out/bench-tiles$tiles.txt"
done
