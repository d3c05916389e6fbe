#!/usr/bin/env bash
# Builds and runs the row-kernel probe on a GPU host (nvcc there), from the
# release `tile` binary carried in .device-carry/ (bench/carry.sh): emits
# the three row programs, compiles them with the probe, and prints each
# variant's time against a copy at 1024x4096 and 4096x4096. Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/tile-out}; mkdir -p "$out"
tmp=$(mktemp -d)
objs=""
for p in softmax rmsnorm layernorm; do
  .device-carry/tile emit --target cuda tests/programs/controls/$p.tile | sed "s/tile_k0/${p}_k0/g" > "$tmp/gen_$p.cu"
  nvcc -O3 -arch=sm_90 -c "$tmp/gen_$p.cu" -o "$tmp/gen_$p.o" || exit 1
  objs="$objs $tmp/gen_$p.o"
done
nvcc -O3 -arch=sm_90 -Xptxas -v bench/row_probe/probe.cu $objs -o "$tmp/probe" 2> "$out/probe_ptxas.txt" || { cat "$out/probe_ptxas.txt"; exit 1; }
"$tmp/probe" 1024 4096 > "$out/probe_1024x4096.txt" 2>&1
"$tmp/probe" 4096 4096 > "$out/probe_4096x4096.txt" 2>&1
grep -v "check" "$out/probe_4096x4096.txt"
