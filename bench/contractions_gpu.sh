#!/usr/bin/env bash
# On the GPU machine: the CUDA tiled entry points (`_mm`, `_mm64`, and
# attention's where built) checked against the interpreter (random and
# large contractions, every fixture), then `tile bench` of the given cases
# on cuda with the peers (cuBLAS through torch_eager, torch_compile and
# jax_jit unless PEERS says otherwise), all on one card in one call.
#
#   OUT=/tmp/out [PEERS=torch_eager,...] [FLAGS=--allow-tf32] [TESTS=0] bash bench/contractions_gpu.sh [CASES (contractions,contractions_large)] [ROUNDS (2)]
#
# FLAGS go to `tile bench` (`--allow-tf32`: TF32 tensor cores for Tile and
# the peers); TESTS=0 skips the tests.
#
# Needs .device-carry/ with `tile` and the `gpu` test binary
# (bench/carry.sh).
set -uo pipefail
out=${OUT:-/tmp/tile-out}
cases=${1:-contractions,contractions_large}
rounds=${2:-2}
peers=${PEERS:-torch_eager,torch_compile,jax_jit}
carry=.device-carry
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${TESTS:-1}" != 0 ]; then
  echo "== gpu tests ($(date +%T))"
  timeout 300 "$carry/gpu" --nocapture contractions attention every_fixture > "$out/gpu_tiles.log" 2>&1
  echo "exit $?"
  grep -E "SKIPPED|fixture runs|test result|panicked|failure|^test " "$out/gpu_tiles.log" | head -20
fi
echo "== bench $cases ($(date +%T))"
# shellcheck disable=SC2086
timeout 300 "$carry/tile" bench --target cuda --cases "$cases" ${FLAGS:-} \
  --peers "$peers" --rounds "$rounds" --samples 5 --out "$out/bench" \
  > "$out/bench.txt" 2> "$out/bench.err"
echo "exit $?"; tail -2 "$out/bench.err"
"$carry/tile" audit "$out/bench/results.json" 2>&1 | tail -1
cat "$out/bench.txt"
