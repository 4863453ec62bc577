#!/usr/bin/env bash
# Builds the installed consumer samples (SAMPLES_DIR/{c,cpp}_consumer) with find_package(FlashPS)
# and with pkg-config, runs each (a real edit with the bundled model, a template replay hit, an
# edit cancelled from its progress callback) and checks what it prints; then the sample plugin and
# a program hosting plugins (plugin_host_consumer, FlashPS::plugin_host). Used by ctest
# packaging.consumers (a temporary prefix) and scripts/check-package-debian12.sh (/usr, inside a
# fresh Debian 12 root).
# Usage: build_and_run_consumers.sh SAMPLES_DIR WORK_DIR MODELS_DIR [PREFIX]
#   MODELS_DIR: where the bundled model must have been found (the installed share/flashps/models);
#   PREFIX: the install prefix when it is not a system one (CMAKE_PREFIX_PATH, PKG_CONFIG_PATH).
# FLASHPS_CONSUMERS_STATIC=1 also links the C consumer against libflashps.a.
set -euo pipefail
samples="$1"
work="$2"
models="$3"
prefix="${4:-}"
step() { echo "--- $*"; }
mkdir -p "$work"

cmake_prefix=()
if [ -n "$prefix" ]; then
  cmake_prefix=(-DCMAKE_PREFIX_PATH="$prefix")
  PKG_CONFIG_PATH="$(echo "$prefix"/lib*/pkgconfig)${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export PKG_CONFIG_PATH
fi

# FLASHPS_MODEL empty: unset, so flashps_editor_open(NULL) must find the model installed beside
# the library.
run_consumer() {  # name executable FLASHPS_MODEL
  local name="$1" executable="$2" model_variable=(-u FLASHPS_MODEL)
  local out="$work/out-${name//[^a-z_+]/-}"
  [ -n "$3" ] && model_variable=("FLASHPS_MODEL=$3")
  mkdir -p "$out"
  step "run $name"
  local output
  if ! output=$(env -u FLASHPS_CACHE_DIR "${model_variable[@]}" "$executable" "$out" 2>&1); then
    echo "$output"
    echo "FAIL: $name exited non-zero"
    exit 1
  fi
  echo "$output"
  for expected in "^model: $models/" "^edit: 256x256, cache hit" "^cancel: FLASHPS_CANCELLED" \
                  "^store: $out/store, 1 capture" "all checks passed"; do
    if ! grep -qE "$expected" <<<"$output"; then
      echo "FAIL: $name's output lacks /$expected/"
      exit 1
    fi
  done
  [ -s "$out/edited.png" ] || { echo "FAIL: $name wrote no $out/edited.png"; exit 1; }
}

for consumer in c_consumer cpp_consumer; do
  step "$consumer: find_package(FlashPS)"
  cmake -S "$samples/$consumer" -B "$work/$consumer-cmake" -DCMAKE_BUILD_TYPE=Release "${cmake_prefix[@]}" \
        >"$work/$consumer-configure.log" || { cat "$work/$consumer-configure.log"; exit 1; }
  cmake --build "$work/$consumer-cmake" >"$work/$consumer-build.log" || { cat "$work/$consumer-build.log"; exit 1; }
  run_consumer "$consumer (find_package)" "$work/$consumer-cmake/$consumer" ""

  step "$consumer: pkg-config"
  mkdir -p "$work/$consumer-pkgconfig"
  make -s -C "$work/$consumer-pkgconfig" -f "$samples/$consumer/Makefile" >"$work/$consumer-make.log" 2>&1 ||
    { cat "$work/$consumer-make.log"; exit 1; }
  run_consumer "$consumer (pkg-config)" "$work/$consumer-pkgconfig/$consumer" ""
done

if [ "${FLASHPS_CONSUMERS_STATIC:-0}" = 1 ]; then
  step "c_consumer: find_package(FlashPS COMPONENTS static)"
  cmake -S "$samples/c_consumer" -B "$work/c_consumer-static" -DCMAKE_BUILD_TYPE=Release "${cmake_prefix[@]}" \
        -DFLASHPS_LINK_STATIC=ON >"$work/c_consumer-static-configure.log" ||
    { cat "$work/c_consumer-static-configure.log"; exit 1; }
  cmake --build "$work/c_consumer-static" >"$work/c_consumer-static-build.log" ||
    { cat "$work/c_consumer-static-build.log"; exit 1; }
  if objdump -p "$work/c_consumer-static/c_consumer" | grep -q 'NEEDED.*libflashps'; then
    echo "FAIL: the static consumer needs libflashps.so"
    exit 1
  fi
  # A static library cannot locate itself at run time, so the model is named explicitly.
  run_consumer "c_consumer (static)" "$work/c_consumer-static/c_consumer" "$models/flashps-fill-small"
fi
# The sample plugin, built against the package, found by the installed flashps through
# FLASHPS_PLUGIN_PATH and run isolated by the installed flashps-plugin-runner.
if [ -d "$samples/plugin_sample" ]; then
  step "plugin_sample: find_package(FlashPS), then flashps plugin ls / run"
  cmake -S "$samples/plugin_sample" -B "$work/plugin_sample" -DCMAKE_BUILD_TYPE=Release "${cmake_prefix[@]}" \
        >"$work/plugin_sample-configure.log" || { cat "$work/plugin_sample-configure.log"; exit 1; }
  cmake --build "$work/plugin_sample" >"$work/plugin_sample-build.log" || { cat "$work/plugin_sample-build.log"; exit 1; }
  flashps="${prefix:+$prefix/bin/}flashps"
  listing=$(FLASHPS_PLUGIN_PATH="$work/plugin_sample" "$flashps" plugin ls 2>&1) || { echo "$listing"; exit 1; }
  echo "$listing"
  for expected in "^sample.posterize-selection .* isolated" "^flashps.generative-fill .* in-process" \
                  "^flashps.remove-object " "^flashps.expand-canvas " "^flashps.variations " "^5 plugin"; do
    grep -qE "$expected" <<<"$listing" || { echo "FAIL: flashps plugin ls lacks /$expected/"; exit 1; }
  done
  photo=$(ls "$samples"/images/*.jpg | head -1)
  FLASHPS_PLUGIN_PATH="$work/plugin_sample" "$flashps" plugin run sample.posterize-selection --image "$photo" \
    --param levels=3 --out "$work/posterized.png" --quiet || { echo "FAIL: the sample plugin did not run"; exit 1; }
  [ -s "$work/posterized.png" ] || { echo "FAIL: the sample plugin wrote nothing"; exit 1; }
fi
# A program of its own hosting plugins (libflashps_plugin_host.so): it finds the installed
# first-party filters and runner from the library's location (the program is in WORK_DIR), the
# sample plugin through FLASHPS_PLUGIN_PATH, and runs both on a photo and its mask.
if [ -d "$samples/plugin_host_consumer" ]; then
  step "plugin_host_consumer: find_package(FlashPS COMPONENTS plugin_host)"
  cmake -S "$samples/plugin_host_consumer" -B "$work/plugin_host_consumer" -DCMAKE_BUILD_TYPE=Release \
        "${cmake_prefix[@]}" >"$work/plugin_host_consumer-configure.log" ||
    { cat "$work/plugin_host_consumer-configure.log"; exit 1; }
  cmake --build "$work/plugin_host_consumer" >"$work/plugin_host_consumer-build.log" ||
    { cat "$work/plugin_host_consumer-build.log"; exit 1; }
  host_consumer="$work/plugin_host_consumer/plugin_host_consumer"
  run_host_consumer() {  # name isolation expected-plugin-folder parameters...
    local name="$1" isolation="$2" folder="$3" out="$work/out-host-$1" output
    shift 3
    mkdir -p "$out"
    step "run plugin_host_consumer $name $*"
    output=$(env FLASHPS_PLUGIN_PATH="$work/plugin_sample" FLASHPS_CACHE_DIR="$out/store" \
             "$host_consumer" "$samples/images/fig.jpg" "$samples/masks/fig.png" "$out" "$name" "$@" 2>&1) ||
      { echo "$output"; echo "FAIL: plugin_host_consumer $name exited non-zero"; exit 1; }
    echo "$output"
    for expected in "^plugin: $name $isolation \\($folder/" "^ran $name: [1-9][0-9]* image\\(s\\), $isolation" \
                    "^result 1: [0-9]+x[0-9]+, [1-9][0-9]* pixels changed" "all checks passed"; do
      grep -qE "$expected" <<<"$output" || { echo "FAIL: plugin_host_consumer's output lacks /$expected/"; exit 1; }
    done
  }
  run_host_consumer sample.posterize-selection isolated "$work/plugin_sample" levels=3
  installed_prefix=$(cd "$models/../../.." && pwd -P)  # MODELS_DIR is PREFIX/share/flashps/models
  run_host_consumer flashps.generative-fill in-process "$installed_prefix/lib[^ ]*/flashps/plugins" seed=7
fi
echo "consumers: all builds and runs passed"
