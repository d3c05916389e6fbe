#!/usr/bin/env bash
# Copies the release binaries the H200 script needs into .device-carry/
# (git-ignored; name it in the device tool's `carry`).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device-carry
newest() { ls -t target/release/deps/"$1"-* 2>/dev/null | grep -v '\.d$' | head -1; }
cp target/release/tile .device-carry/tile
cp target/release/examples/cuda_rows target/release/examples/cuda_pairs target/release/examples/cuda_reductions .device-carry/
cp "$(newest gpu)" .device-carry/gpu
cp "$(newest emit)" .device-carry/emit
cp "$(newest hostile)" .device-carry/hostile
# The wgpu target's fixture test, where a release build with the runtime
# feature exists (cargo test --release -p tile-wgpu --features runtime
# --no-run): run on the GPU machine's Vulkan driver, if it has one.
if [ -n "$(newest lavapipe)" ]; then cp "$(newest lavapipe)" .device-carry/wgpu_fixtures; fi
# The GPU machine has NVIDIA's Vulkan driver (nvidia_icd.json) but no
# Vulkan loader: carry this machine's (Debian's libvulkan1).
if [ -e /usr/lib/x86_64-linux-gnu/libvulkan.so.1 ]; then
  mkdir -p .device-carry/lib
  cp -L /usr/lib/x86_64-linux-gnu/libvulkan.so.1 .device-carry/lib/
fi
# The Python package's wheel, and pytest's wheels for a machine without
# network access.
rm -rf .device-carry/wheels; mkdir -p .device-carry/wheels
maturin build --release -m python/Cargo.toml -o .device-carry/wheels >/dev/null
pip download -q pytest -d .device-carry/wheels
ls -la .device-carry
