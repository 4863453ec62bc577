#!/usr/bin/env bash
# The one command that proves the GPU paths on a GPU host: builds FlashPS against the PyTorch
# wheel's LibTorch when python3 has torch (its CMake prefix; the wheel's C++ string ABI comes with
# its flags, and parts whose system C++ libraries would clash are switched off), else against the
# system's, then runs the [cuda] tests (Flux and SD on cuda:0 vs the CPU, replay exactness, loader
# races, one worker per GPU; under compute-sanitizer too when it is installed) and `bench edit`
# on the device at the bench config and at FLUX.1 Fill's size, writing the tables to benchmarks/.
#
#   scripts/gpu-check.sh                      # GPU host: cuda:0
#   scripts/gpu-check.sh --device cuda:1      # another GPU
#   scripts/gpu-check.sh --device cpu         # the CPU path of the same steps (no GPU needed)
#   scripts/gpu-check.sh --quick              # short benchmark rows (2 steps, m = 0.2; on the
#                                             # CPU also a 16x16 grid, fp32 only)
#   scripts/gpu-check.sh --no-build --build-dir DIR   # use a built tree (ctest runs it this way)
#
# The wheel's CMake files look for the CUDA toolkit it was built with (nvcc on the PATH or
# CUDA_HOME); the rest of the dependencies come from scripts/install-deps.sh.
#
# On the CPU the [cuda] tests skip with a message and the FLUX.1-size row is left out (12B
# parameters: 24 GB in bf16 and hours per step); tables go to <build>/gpu-check instead of
# benchmarks/. ctest runs `--device cpu --quick --no-build` (gpu_check.cpu_path), so CI keeps
# this script working although it has no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
device=cuda:0
quick=0
build=1
build_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift ;;
    --quick) quick=1 ;;
    --no-build) build=0 ;;
    --build-dir) build_dir=$2; shift ;;
    *) echo "gpu-check: unknown argument $1 (--device D, --quick, --no-build, --build-dir DIR)" >&2; exit 2 ;;
  esac
  shift
done
started=$(date +%s)
step() { echo "=== gpu-check [$(( $(date +%s) - started )) s] $*"; }

configure_args=()
if [ "$build" = 0 ]; then
  build_dir=${build_dir:-${FLASHPS_BUILD_DIR:-build}}
elif python3 -c 'import torch' >/dev/null 2>&1; then
  prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  abi=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
  version=$(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)')
  step "LibTorch from the PyTorch wheel: torch $version, _GLIBCXX_USE_CXX11_ABI=$abi ($prefix)"
  configure_args=(-DCMAKE_PREFIX_PATH="$prefix")
  # On a GPU, a CPU-only wheel must fail here, not come out as a build without the CUDA paths.
  [ "$device" != cpu ] && configure_args+=(-DFLASHPS_WITH_CUDA=ON)
  build_dir=${build_dir:-build-gpu}
else
  step "LibTorch from the system (python3 has no torch package)"
  build_dir=${build_dir:-${FLASHPS_BUILD_DIR:-build}}
fi
if [ "$build" = 1 ]; then
  step "build ($build_dir)"
  FLASHPS_BUILD_DIR=$build_dir scripts/build.sh "${configure_args[@]}"
fi
tests=$build_dir/tests/flashps_tests
bench=$build_dir/cli/flashps-bench
for program in "$tests" "$bench"; do
  [ -x "$program" ] || { echo "gpu-check: $program not built" >&2; exit 1; }
done
export FLASHPS_THREADS=${FLASHPS_THREADS:-$(nproc)}

if [ "$device" = cpu ]; then
  out_dir=$build_dir/gpu-check
  label=cpu
  step "the [cuda] tests (no GPU on this path: each skips with a message)"
else
  out_dir=benchmarks
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${device#cuda:}" 2>/dev/null | head -1 || true)
  label=$(echo "${gpu_name:-$device}" | tr -c 'A-Za-z0-9\n' '_' | tr -s '_' | sed 's/_$//')
  step "the [cuda] tests on ${gpu_name:-$device}"
fi
mkdir -p "$out_dir"
"$tests" "[cuda]" --success --reporter compact | tail -25
if [ "$device" != cpu ] && command -v compute-sanitizer >/dev/null 2>&1; then
  step "loader races under compute-sanitizer (memcheck, then racecheck)"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 1 "$tests" "cuda: replay exactness*" >"$out_dir/gpu_check_${label}_sanitizer_$tool.txt" 2>&1 ||
      { tail -30 "$out_dir/gpu_check_${label}_sanitizer_$tool.txt"; exit 1; }
    tail -3 "$out_dir/gpu_check_${label}_sanitizer_$tool.txt"
  done
elif [ "$device" != cpu ]; then
  echo "gpu-check: compute-sanitizer not found (CUDA toolkit): the race test ran without it"
fi

bench_args=()
[ "$quick" = 1 ] && bench_args=(--steps 2 --ratios 0.2)
# On the CPU, quick is a smoke run of the same code: a small grid, one dtype.
[ "$quick" = 1 ] && [ "$device" = cpu ] && bench_args+=(--grid 16 --dtypes fp32)
step "bench edit --device $device, bench config"
"$bench" bench edit --device "$device" "${bench_args[@]}" --json "$out_dir/gpu_check_${label}_bench.json" -q |
  tee "$out_dir/gpu_check_${label}_bench.txt"
if [ "$device" = cpu ]; then
  step "bench edit --config flux1: left out on the CPU (12B parameters)"
else
  step "bench edit --device $device --config flux1 (FLUX.1 Fill size, bf16, random weights)"
  "$bench" bench edit --device "$device" --config flux1 "${bench_args[@]}" \
    --json "$out_dir/gpu_check_${label}_flux1.json" -q | tee "$out_dir/gpu_check_${label}_flux1.txt"
fi
step "done: tables in $out_dir/gpu_check_${label}_*"
