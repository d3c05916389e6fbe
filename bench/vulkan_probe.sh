#!/usr/bin/env bash
# On the GPU machine: whether its NVIDIA card has a Vulkan driver wgpu can
# load (ICD files, driver libraries, the loader's own account), then the
# wgpu fixture test on it. Needs .device-carry/ (bench/carry.sh).
echo "== vulkan probe"
ls /usr/share/vulkan/icd.d/ /etc/vulkan/icd.d/ 2>&1 | head
cat /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json 2>/dev/null | head -20
ls /usr/lib/x86_64-linux-gnu/ | grep -iE "nvidia|GLX|vulkan" | head -30
env | grep -i NVIDIA_DRIVER_CAPABILITIES
export LD_LIBRARY_PATH="$PWD/.device-carry/lib"
export XDG_RUNTIME_DIR=$(mktemp -d)
VK_LOADER_DEBUG=error,warn,driver TILE_WGPU_BACKEND=vulkan timeout 60 .device-carry/wgpu_fixtures --nocapture 2>&1 | tail -25
