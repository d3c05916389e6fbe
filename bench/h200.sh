#!/usr/bin/env bash
# GPU work on a lent H200 (the device tool), from release binaries built on
# the development machine and carried in .device-carry/ (bench/carry.sh).
# Steps run in the order given:
#
#   tests          GPU and NVRTC test binaries (logs: gpu_tests.log)
#   wgpu           the wgpu target's fixtures on the machine's Vulkan driver,
#                  if any, with the Vulkan loader carried in .device-carry/lib
#                  (wgpu_tests.log; says plainly when there is none)
#   hostile        tests/hostile on interp, cpu and cuda (hostile.log)
#   rows           row kernels against a copy (cuda_rows.log)
#   bg-reductions[:C] the reductions group (or cases C) with torch_eager and
#                  torch_compile in the background; wait-reductions[:S]
#                  waits up to S seconds and collects it (reductions.tgz)
#   bg-suites      the matrix, neural and algorithm groups with torch_eager
#                  in the background; wait-suites[:S] waits up to S seconds
#                  and collects them (suites.tgz, suites.txt)
#   bg-autodiff    the autodiff group (generated backward programs) with
#                  torch_eager, torch_compile and jax_jit, two rounds, in
#                  the background; wait-autodiff[:S] collects it
#                  (autodiff-bench.tgz, autodiff-bench.txt)
#   peers          the peers' self-test on every framework (peers.log)
#   reduce         per-row and per-column reductions against a copy of
#                  the bytes they move (cuda_reductions.log)
#   pairs          seed pairs against a copy (cuda_pairs.log)
#   quick          quick controls and seed benches (smoke runs, never reported)
#   seed           starts the six-round seed suite with every GPU peer in the
#                  background (its own session, so a later call can collect it)
#   wait[:S]       waits up to S seconds (default 540) for `seed`, then
#                  collects it (seed.tgz, seed.txt) and audits it
#   controls       the six-round controls suite against torch_eager
#                  (controls.tgz, controls.txt)
#   python         installs the wheels into /tmp/pylib (on PYTHONPATH, so
#                  the machine's torch and CuPy stay visible) and runs
#                  pytest (python_tests.log)
#   grads          generated derivatives: `tile bench` of the generated
#                  sigmoid and GELU value-and-gradient programs and the
#                  hand-written ones at 4096x4096 (grads.txt, grads.tgz),
#                  then bench/autodiff_probe.py (a probe against PyTorch's
#                  backward kernels, eager and compiled; autodiff.txt,
#                  autodiff.json); needs the `python` step first
#   pybench        the six-round sigmoid_pair suite with tile_py and
#                  torch_eager (pybench.tgz, pybench.txt)
#   reductions[:C] the six-round reductions group (or the comma-separated
#                  cases C) with torch_eager and torch_compile
#                  (reductions.tgz, reductions.txt)
#
# Logs and results go to $OUT (default /tmp/tile-out).
set -uo pipefail
out=${OUT:-/tmp/tile-out}
mkdir -p "$out"
carry=.device-carry
export TILE_SOURCE_ROOT=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv,noheader | tee -a "$out/nvidia-smi.txt"

# start_bg NAME ARGS: runs `tile ARGS --out /tmp/NAME` in the background,
# in its own session, from a copy of the binary (so a later call may carry
# a new one); collect picks it up.
start_bg() {
  cp "$carry/tile" "/tmp/tile-$1"
  rm -rf "/tmp/$1" "/tmp/$1-log"; mkdir -p "/tmp/$1-log"
  setsid bash -c "/tmp/tile-$1 $2 --out /tmp/$1 > /tmp/$1-log/out.txt 2> /tmp/$1-log/err.txt; echo \$? > /tmp/$1-log/rc" < /dev/null > /dev/null 2>&1 &
  echo "$1 run started ($2)"
}

# collect NAME S LINES: waits up to S seconds for the background run NAME,
# then saves its output and results (NAME.txt, NAME.tgz), audits them and
# prints the last LINES lines of the table.
collect() {
  local log="/tmp/$1-log" limit=$(( $2 ))
  for ((s = 0; s < limit; s += 5)); do [ -f "$log/rc" ] && break; sleep 5; done
  tr '\r' '\n' < "$log/err.txt" 2>/dev/null | grep -v '^$' | tail -2
  if [ -f "$log/rc" ]; then
    echo "$1 run exit status $(cat "$log/rc")"
    cp "$log/out.txt" "$out/$1.txt"
    tar -C /tmp -czf "$out/$1.tgz" "$1"
    "/tmp/tile-$1" audit "/tmp/$1/results.json" 2>&1 | tail -3
    tail -"$3" "$out/$1.txt"
  else
    echo "$1 run still going"
  fi
}

for step in "$@"; do
  echo "== $step ($(date +%T))"
  case "$step" in
  tests)
    { "$carry/gpu" --test-threads 1 --nocapture 2>&1; "$carry/emit" 2>&1; } > "$out/gpu_tests.log"
    grep -E "SKIPPED|fixture runs|test result|panicked|FAILED" "$out/gpu_tests.log"
    ;;
  wgpu)
    { ls /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>&1; ldconfig -p | grep -i -E "libvulkan|nvidia_icd|GLX_nvidia"; } > "$out/wgpu_tests.log" 2>&1
    LD_LIBRARY_PATH="$PWD/$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)} TILE_WGPU_BACKEND=vulkan "$carry/wgpu_fixtures" --nocapture >> "$out/wgpu_tests.log" 2>&1
    grep -E "SKIPPED|wgpu on|test result|panicked|differ" "$out/wgpu_tests.log"
    ;;
  hostile)
    TILE_BIN="$carry/tile" "$carry/hostile" --nocapture > "$out/hostile.log" 2>&1
    grep -E "SKIPPED|hostile fixtures|test result|panicked|FAILED" "$out/hostile.log"
    ;;
  rows)
    "$carry/cuda_rows" 37x1537 1024x4096 4096x4096 4096x16384 2>&1 | tee "$out/cuda_rows.log"
    ;;
  reduce)
    "$carry/cuda_reductions" 37x1537 1024x4096 4096x4096 2>&1 | tee "$out/cuda_reductions.log"
    ;;
  pairs)
    "$carry/cuda_pairs" > "$out/cuda_pairs.log" 2>&1; tail -12 "$out/cuda_pairs.log"
    ;;
  quick)
    rm -rf /tmp/q-controls /tmp/q-seed
    "$carry/tile" bench --target cuda --cases controls --peers torch_eager --quick --out /tmp/q-controls 2>/dev/null | tail -40
    ;;
  seed)
    start_bg seed "bench --target cuda --peers torch_eager,torch_compile,jax_jit,cupy_elementwise"
    ;;
  bg-reductions*)
    cases=${step#bg-reductions}; cases=${cases#:}; cases=${cases:-reductions}
    start_bg reductions "bench --target cuda --cases $cases --peers torch_eager,torch_compile"
    ;;
  bg-autodiff)
    start_bg autodiff-bench "bench --target cuda --cases autodiff --peers torch_eager,torch_compile,jax_jit --rounds 2"
    ;;
  wait-autodiff*)
    limit=${step#wait-autodiff}; limit=${limit#:}; collect autodiff-bench "${limit:-540}" 70
    ;;
  peers)
    python3 peers/selftest.py --all > "$out/peers.log" 2>&1
    grep -E "^(FAIL|skip)|passed" "$out/peers.log" | tail -20
    ;;
  bg-suites)
    start_bg suites "bench --target cuda --cases matrix,neural,algorithm --peers torch_eager"
    ;;
  wait-suites*)
    limit=${step#wait-suites}; limit=${limit#:}; collect suites "${limit:-540}" 100
    ;;
  wait-reductions*)
    limit=${step#wait-reductions}; limit=${limit#:}; collect reductions "${limit:-540}" 60
    ;;
  wait*)
    limit=${step#wait}; limit=${limit#:}; collect seed "${limit:-540}" 60
    ;;
  controls)
    rm -rf /tmp/controls
    "$carry/tile" bench --target cuda --cases controls --peers torch_eager --out /tmp/controls 2>"$out/controls.err" > "$out/controls.txt"
    tar -C /tmp -czf "$out/controls.tgz" controls
    "$carry/tile" audit /tmp/controls/results.json 2>&1 | tail -3
    tail -45 "$out/controls.txt"
    ;;
  python)
    # Installed into a directory on PYTHONPATH, so the machine's Python
    # keeps its own torch, CuPy and numpy (wherever they live).
    rm -rf /tmp/pylib
    python3 -m pip install -q --no-index --no-deps --target /tmp/pylib "$carry"/wheels/*.whl 2>&1 | tail -2
    export PYTHONPATH=/tmp/pylib
    python3 -c "import tile, numpy, torch; print('tile', tile.__version__, 'from', tile.__file__, '| torch', torch.__version__)"
    (cd /tmp && python3 -m pytest -v -rs "$OLDPWD/python/tests") > "$out/python_tests.log" 2>&1
    grep -E "passed|failed|SKIPPED|Error" "$out/python_tests.log" | tail -15
    ;;
  grads)
    rm -rf /tmp/grads; mkdir -p /tmp/grads
    for f in sigmoid_grad sigmoid_vjp_by_hand gelu_grad gelu_vjp_by_hand; do
      "$carry/tile" bench "tests/programs/derivatives/$f.tile" --target cuda --shape 4096x4096 \
        --out "/tmp/grads/$f" 2>>"$out/grads.err" >> "$out/grads.txt"
      "$carry/tile" audit "/tmp/grads/$f/results.json" 2>&1 | tail -1
      grep -E "^\| (fused|copy) \| gpu_batch" "/tmp/grads/$f/results.md" | sed "s/^/$f /"
    done
    tar -C /tmp -czf "$out/grads.tgz" grads
    PYTHONPATH=/tmp/pylib python3 bench/autodiff_probe.py --json "$out/autodiff.json" > "$out/autodiff.txt" 2>&1
    tail -25 "$out/autodiff.txt"
    ;;
  pybench)
    rm -rf /tmp/pybench
    PYTHONPATH=/tmp/pylib "$carry/tile" bench --target cuda --cases sigmoid_pair --peers tile_py,torch_eager --out /tmp/pybench 2>"$out/pybench.err" > "$out/pybench.txt"
    tar -C /tmp -czf "$out/pybench.tgz" pybench
    "$carry/tile" audit /tmp/pybench/results.json 2>&1 | tail -3
    tail -30 "$out/pybench.txt"
    ;;
  reductions*)
    cases=${step#reductions}; cases=${cases#:}; cases=${cases:-reductions}
    rm -rf /tmp/reductions
    "$carry/tile" bench --target cuda --cases "$cases" --peers torch_eager,torch_compile --out /tmp/reductions 2>"$out/reductions.err" > "$out/reductions.txt"
    tar -C /tmp -czf "$out/reductions.tgz" reductions
    "$carry/tile" audit /tmp/reductions/results.json 2>&1 | tail -3
    tail -20 "$out/reductions.txt"
    ;;
  *)
    echo "unknown step $step"; exit 2
    ;;
  esac
done
