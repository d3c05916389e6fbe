#!/usr/bin/env bash
# The experiment behind the column slice loops' unroll (SLICE_UNROLL in
# crates/tile-plan/src/kernel_ir.rs, once ONE_PASS_UNROLL; see
# docs/results/derivatives/README.md and docs/results/reductions/README.md):
# LayerNorm backward's parts timed apart with `tile bench FILE`.
#
#   ln_rows    the row kernel (grad_x, the saved mean and 1/sigma)
#   ln_cols1   the weight gradient alone: one reduction down the columns
#   ln_cols2   weight and bias gradients: two reductions over the same rows
#              (one pass since the hoist)
#   ln_cols2b  the same with the bias gradient's variable renamed (`k`), so
#              the two reductions keep a loop each: the layout before
#
# PROGS may also name other programs by path (tests/programs/reductions/col_sum.tile).
#
# Run from the repository root on a machine with a GPU:
#   OUT=/tmp/cols TILE_BINS="tile_a tile_b" bash bench/experiments/column_one_pass/run.sh
# with each binary a build of `tile` (default ./target/release/tile).
# Prints the fused and copy gpu_batch medians (us) at 4096x4096, 1024x4096.
set -u
here=$(dirname "$0")
out=${OUT:-/tmp/column-one-pass}
mkdir -p "$out"
for bin in ${TILE_BINS:-./target/release/tile}; do
  for p in ${PROGS:-ln_cols2b ln_cols2 ln_cols1 ln_rows}; do
    file=$here/$p.tile
    case $p in */*) file=$p; p=$(basename "$p" .tile) ;; esac
    d=$out/$(basename "$bin")-$p
    "$bin" bench "$file" --target cuda --shape 4096x4096,1024x4096 --peers none \
      --rounds 1 --samples 7 --atol 1e-3 --out "$d" > "$d.log" 2>&1
    echo "== $(basename "$bin") $p: $(grep -E '^\| fused \| gpu_batch' "$d/results.md" | awk -F'|' '{printf "%s ", $4}') copy: $(grep -E '^\| copy \| gpu_batch' "$d/results.md" | awk -F'|' '{printf "%s ", $4}')"
  done
done
