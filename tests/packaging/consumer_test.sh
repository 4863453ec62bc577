#!/usr/bin/env bash
# Installs the build tree to a temporary prefix, then builds and runs a C program that uses it
# through find_package(FlashPS): the package config and the public header work for users.
# Usage: consumer_test.sh BUILD_DIR
set -euo pipefail
build_dir="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$(dirname "$0")/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
output=$("$work/build/consumer" /nonexistent/model)
echo "$output"
grep -q "/nonexistent/model: model folder does not exist" <<<"$output"
echo "packaging consumer test passed"
