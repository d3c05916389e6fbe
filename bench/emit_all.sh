#!/usr/bin/env bash
# Emits the C and CUDA of every .tile file in the repository and of N
# tile-fuzz programs, fusion on and off, into OUT (one file per program,
# target and fusion setting), so that two builds can be compared with
# `diff -r`: the check that a refactor leaves every emitted source
# byte-identical.
#
#   bash bench/emit_all.sh OUT [N (2000)] [SEED (7)]
#
# Uses ./target/release/tile (or $TILE_BIN: a copy of an earlier build)
# and ./target/release/tile-fuzz (build them first: cargo build --release
# -p tile-cli -p tile-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bash bench/emit_all.sh OUT [N] [SEED]}
n=${2:-2000}
seed=${3:-7}
tile=${TILE_BIN:-./target/release/tile}
rm -rf "$out"
mkdir -p "$out/fuzz-programs"
./target/release/tile-fuzz --write "$out/fuzz-programs" --cases "$n" --seed "$seed"
emit() {
  local file=$1 name=$2 prog=${3:-}
  for target in cpu cuda; do
    for fusion in on off; do
      local args=(emit --target "$target" --fusion "$fusion")
      [ -n "$prog" ] && args+=(--program "$prog")
      "$tile" "${args[@]}" "$file" > "$out/$name.$target.$fusion" 2>&1 || true
    done
  done
}
count=0
while IFS= read -r f; do
  base=$(echo "$f" | tr '/' '_')
  progs=$(grep -oE '^program [A-Za-z_][A-Za-z0-9_]*' "$f" | awk '{print $2}' || true)
  if [ "$(echo "$progs" | grep -c .)" -gt 1 ]; then
    for p in $progs; do emit "$f" "$base.$p" "$p"; count=$((count + 1)); done
  else
    emit "$f" "$base"; count=$((count + 1))
  fi
done < <(git ls-files '*.tile')
for f in "$out"/fuzz-programs/*.tile; do
  emit "$f" "fuzz_$(basename "$f" .tile)"; count=$((count + 1))
done
echo "emitted $count programs x {cpu, cuda} x {fusion on, off} into $out"
