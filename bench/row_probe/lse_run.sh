#!/usr/bin/env bash
# Builds and runs the row_lse probe (lse_probe.cu) on a GPU host from the
# release `tile` binary in .device-carry/: the emitted kernel as is and
# with `#pragma unroll 4` / `8` before its quad loops. Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/tile-out}; mkdir -p "$out"
tmp=$(mktemp -d)
src=tests/programs/reductions/row_lse.tile
.device-carry/tile emit --target cuda $src | sed "s/tile_k0/plain_k0/g" > "$tmp/plain.cu"
for u in 4 8; do
  .device-carry/tile emit --target cuda $src | sed "s/tile_k0/unroll${u}_k0/g; s/^\( *\)for (; quad/\1#pragma unroll $u\n\1for (; quad/" > "$tmp/unroll$u.cu"
done
objs=""
for v in plain unroll4 unroll8; do
  nvcc -O3 -arch=sm_90 --fmad=false -Xptxas -v -c "$tmp/$v.cu" -o "$tmp/$v.o" 2>> "$out/lse_ptxas.txt" || exit 1
  objs="$objs $tmp/$v.o"
done
nvcc -O3 -arch=sm_90 bench/row_probe/lse_probe.cu $objs -o "$tmp/probe" || exit 1
"$tmp/probe" 1024 4096 | tee "$out/lse_probe.txt"
"$tmp/probe" 4096 4096 | tee -a "$out/lse_probe.txt"
grep -E "registers|Compiling entry" "$out/lse_ptxas.txt" | grep -B1 registers | grep -v "^--" | head -20
