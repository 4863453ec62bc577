#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_*.cpp) with clang and runs each for SECONDS seconds.
#
#   scripts/run-fuzzers.sh [SECONDS] [TARGET...]     e.g. scripts/run-fuzzers.sh 60 fuzz_safetensors
#
# The build configures fuzz/ as its own CMake project (cmake -S fuzz -B build-fuzz) rather than the
# top-level one: the parsers under fuzz need no LibTorch, and this keeps LibTorch's flags and any
# half-finished SDK source out of the sanitizer build. (fuzz/CMakeLists.txt also works from the
# top-level project with -DFLASHPS_BUILD_FUZZERS=ON.) ccache is used when installed.
#
# Each target runs on a scratch copy of fuzz/corpus/<name>/ (the checked-in seeds stay untouched)
# with fuzz/fuzz_<name>.dict when present. -rss_limit_mb=2048 (and libFuzzer's malloc limit, which
# follows it) makes an input that costs more memory than that a finding: a decompression bomb.
# Crash, leak, timeout, out-of-memory and sanitizer reproducers are written to
# build-fuzz/artifacts/. Exits non-zero if any target finds something.
set -euo pipefail

seconds="${1:-30}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "run-fuzzers: SECONDS must be a whole number, got '$seconds'" >&2
  exit 2
fi

repository="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="$repository/build-fuzz"
source "$repository/scripts/ccache-env.sh"
artifacts_dir="$build_dir/artifacts"

for tool in clang clang++ cmake ninja; do
  command -v "$tool" >/dev/null || { echo "run-fuzzers: '$tool' not found (scripts/install-deps.sh)" >&2; exit 2; }
done

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for source in "$repository"/fuzz/fuzz_*.cpp; do
    targets+=("$(basename "$source" .cpp)")
  done
fi

CC=clang CXX=clang++ cmake -S "$repository/fuzz" -B "$build_dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

# A target whose dependency is missing is not configured:
# when no targets were named, run the others and say so.
if [ "$#" -eq 0 ] && [ -f "$build_dir/fuzz_targets.txt" ]; then
  configured=()
  for target in "${targets[@]}"; do
    if grep -qx "$target" "$build_dir/fuzz_targets.txt"; then
      configured+=("$target")
    else
      echo "run-fuzzers: skipping $target (not configured; see: cmake -S fuzz -B $build_dir)" >&2
    fi
  done
  targets=("${configured[@]}")
fi
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}"

mkdir -p "$artifacts_dir"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

failed=()
for target in "${targets[@]}"; do
  binary="$build_dir/$target"
  if [ ! -x "$binary" ]; then
    echo "run-fuzzers: no fuzz target '$target' in $build_dir" >&2
    failed+=("$target")
    continue
  fi
  name="${target#fuzz_}"
  corpus="$scratch/$name"
  mkdir -p "$corpus"
  if [ -d "$repository/fuzz/corpus/$name" ]; then
    cp -r "$repository/fuzz/corpus/$name/." "$corpus/"
  fi
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$artifacts_dir/$target-")
  dictionary="$repository/fuzz/$target.dict"
  [ -f "$dictionary" ] && options+=(-dict="$dictionary")

  echo "run-fuzzers: $target for ${seconds}s on $(find "$corpus" -type f | wc -l) seed(s)"
  if "$binary" "${options[@]}" "$corpus" >"$build_dir/$target.log" 2>&1; then
    grep -E "^(stat::number_of_executed_units|stat::new_units_added|Done)" "$build_dir/$target.log" || true
  else
    echo "run-fuzzers: $target FAILED; log: $build_dir/$target.log; reproducers in $artifacts_dir" >&2
    grep -E "ERROR|SUMMARY|Test unit written" "$build_dir/$target.log" >&2 || tail -20 "$build_dir/$target.log" >&2
    failed+=("$target")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "run-fuzzers: failures in ${failed[*]}" >&2
  exit 1
fi
echo "run-fuzzers: all ${#targets[@]} target(s) ran ${seconds}s without findings"
