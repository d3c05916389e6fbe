#!/usr/bin/env bash
# On the GPU machine: the wgpu target on the machine's Vulkan driver
# beside the cuda target, same binary, same card, one call. Runs the wgpu
# fixture test (bench/h200.sh wgpu), then `tile bench` of the given case
# groups (default: seed and reductions) on wgpu and on cuda, no peers, and
# prints each case's fused gpu_batch median on both and their ratio.
#
#   OUT=/tmp/out bash bench/wgpu_vs_cuda.sh [GROUPS (seed,reductions)] [ROUNDS (2)]
#
# Needs .device-carry/ from bench/carry.sh with a `tile` built with
# `--features wgpu`, and the Vulkan loader it carries in .device-carry/lib.
set -uo pipefail
out=${OUT:-/tmp/tile-out}
groups=${1:-seed,reductions}
rounds=${2:-2}
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
export LD_LIBRARY_PATH="$PWD/.device-carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=$out bash bench/h200.sh wgpu
for target in wgpu cuda; do
  echo "== bench $target ($(date +%T))"
  TILE_WGPU_BACKEND=vulkan timeout 240 .device-carry/tile bench --target "$target" --cases "$groups" \
    --peers none --rounds "$rounds" --samples 5 --out "$out/bench-$target" \
    > "$out/bench-$target.txt" 2> "$out/bench-$target.err"
  echo "exit $?"; tail -3 "$out/bench-$target.err"
  .device-carry/tile audit "$out/bench-$target/results.json" 2>&1 | tail -2
done
python3 bench/wgpu_ratio.py "$out/bench-wgpu/results.json" "$out/bench-cuda/results.json" | tee "$out/wgpu_vs_cuda.txt"
