#!/usr/bin/env bash
# The CUDA code paths (FLASHPS_WITH_CUDA) must compile here although Debian's LibTorch is CPU-only:
# compile them against its c10/ATen CUDA headers and the CUDA toolkit's. Debian omits one
# generated header (cuda_cmake_macros.h); an empty stand-in is enough for a compile check.
# Exit 77 (skipped) without a CUDA toolkit.
set -euo pipefail
source_dir=$1
cuda_include=${CUDA_HOME:-/usr/local/cuda}/include
if [ ! -f "$cuda_include/cuda_runtime_api.h" ] || [ ! -f /usr/include/c10/cuda/CUDAStream.h ]; then
  echo "no CUDA toolkit or c10/cuda headers: skipped"
  exit 77
fi
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
mkdir -p "$stub/c10/cuda/impl"
echo "#pragma once" > "$stub/c10/cuda/impl/cuda_cmake_macros.h"
for file in sdk/src/engine/block_loader.cpp; do
  ${CXX:-c++} -std=c++17 -fsyntax-only -DFLASHPS_WITH_CUDA=1 -I "$source_dir/sdk/src" -I "$stub" -I "$cuda_include" \
    -I /usr/include/torch/csrc/api/include "$source_dir/$file"
  echo "compiles with FLASHPS_WITH_CUDA: $file"
done
