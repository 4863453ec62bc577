#!/usr/bin/env bash
# Debian 13 check: builds FlashPS against Debian 13's LibTorch 2.6 and Catch2 v3 in a Debian 13
# root (debootstrap), with the dependencies the project's own install-deps.sh installs there, and
# runs the test suite (ctest). With --cuda the root gets LibTorch's CUDA build (libtorch-cuda-dev,
# contrib; its CUDA 12 libraries from non-free) and the CUDA toolkit instead: the whole project
# compiles and links with the CUDA code paths in, and the CPU tests run on this GPU-less machine
# (CUDA LibTorch falls back to the CPU). Too heavy for CI; run it before a release.
#
#   scripts/check-debian13.sh                  # CPU LibTorch 2.6: build + ctest
#   scripts/check-debian13.sh --cuda           # CUDA LibTorch 2.6: build + ctest (CPU tests)
#   scripts/check-debian13.sh --build-only     # either, without ctest
#   scripts/check-debian13.sh --setup-only     # either, only the root and its dependencies
#   scripts/check-debian13.sh --targets flashps_gimp3_plugin,flashps_cli -- -R gimp3
#                                              # build only these targets (and what they need),
#                                              # then ctest: quick iteration on one part
#   scripts/check-debian13.sh -- -R engine     # extra arguments after -- go to ctest
#
# FLASHPS_DEBIAN13_ROOT (default ~/.cache/flashps/debian13-root, or debian13-cuda-root with
# --cuda). The root is kept: its apt cache, build folder (/flashps/build) and ccache make later
# runs incremental. The working tree (tracked and untracked files, not ignored ones) is copied to
# /flashps/src on each run, ../shared (the fixtures) is bound read-only beside it.
# Needs root (sudo otherwise) and network access to deb.debian.org; installs debootstrap.
#
# Cost (2-core development machine, 2026-11-27): see README.md "Debian 13 and CUDA builds".
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$(pwd)
cuda=0
build_only=0
setup_only=0
targets=""
ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cuda) cuda=1 ;;
    --build-only) build_only=1 ;;
    --setup-only) setup_only=1 ;;
    --targets) targets=${2:?--targets needs a comma-separated list of targets}; shift ;;
    --) shift; ctest_args=("$@"); break ;;
    *) echo "check-debian13: unknown argument $1 (--cuda, --build-only, --setup-only, --targets T1,T2, -- CTEST_ARGS)" >&2; exit 2 ;;
  esac
  shift
done
default_root="$HOME/.cache/flashps/debian13-root"
[ "$cuda" = 1 ] && default_root="$HOME/.cache/flashps/debian13-cuda-root"
root="${FLASHPS_DEBIAN13_ROOT:-$default_root}"
mirror="${FLASHPS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${FLASHPS_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
source scripts/lib/debian-root.sh  # step, sudo_cmd, make_debian_root, mount_in_root, mount_system_dirs

if [ ! -f "$root/.flashps-root-ready" ]; then
  make_debian_root "$root" trixie "$mirror" --components=main,contrib,non-free,non-free-firmware
  # A Debian 13 machine as installed, with contrib and non-free (libtorch-cuda-dev, CUDA).
  {
    echo "deb $mirror trixie main contrib non-free non-free-firmware"
    echo "deb $mirror trixie-updates main contrib non-free non-free-firmware"
    echo "deb $security_mirror trixie-security main contrib non-free non-free-firmware"
  } | "${sudo_cmd[@]}" tee "$root/etc/apt/sources.list" >/dev/null
  "${sudo_cmd[@]}" touch "$root/.flashps-root-ready"
fi

# /proc, /dev, the fixtures; unmounted however the script ends.
trap unmount_root_mounts EXIT
mount_system_dirs "$root"
# This machine's own certificate authorities (e.g. a TLS-inspecting proxy's) are trusted in the
# root as on any machine of this network: npm (tests/clients) needs them to reach its registry.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  "${sudo_cmd[@]}" mkdir -p "$root/usr/local/share/ca-certificates"
  "${sudo_cmd[@]}" cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
if [ -d "$repository/../shared" ]; then
  mount_in_root "$root" "$(cd "$repository/../shared" && pwd)" flashps/shared ro
fi
threads=$(nproc)
npm_registry=$(npm config get registry 2>/dev/null || true)  # the registry this machine's npm uses
in_root() {
  "${sudo_cmd[@]}" chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 FLASHPS_WITH_CUDA="$cuda" FLASHPS_THREADS="$threads" \
    FLASHPS_BUILD_DIR=/flashps/build CCACHE_DIR=/flashps/ccache NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    ${npm_registry:+npm_config_registry=$npm_registry} "$@"
}

step "sync the working tree to $root/flashps/src"
# Only files whose content changed are written (and get a new time), so ninja rebuilds what they
# affect; copying every file with its own old time could leave objects newer than a changed header.
if ! command -v rsync >/dev/null; then
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends rsync
fi
"${sudo_cmd[@]}" mkdir -p "$root/flashps/src"
files=$(mktemp)
trap 'rm -f "$files"; unmount_root_mounts' EXIT
git ls-files -z --cached --others --exclude-standard | xargs -0 -n 500 sh -c 'for f; do [ -f "$f" ] && echo "$f"; done' sh |
  sort >"$files"
"${sudo_cmd[@]}" rsync -r --checksum --no-times --files-from="$files" ./ "$root/flashps/src/"
# Files deleted from the tree go from the copy too (a stale source would still be globbed).
(cd "$root/flashps/src" && find . -type f | sed 's|^\./||' | sort) | comm -23 - "$files" |
  (cd "$root/flashps/src" && xargs -r -d "\n" "${sudo_cmd[@]}" rm -f --)

if [ "$cuda" = 1 ]; then
  # nvidia-cudnn (non-free) is an installer that downloads cuDNN from NVIDIA once its license is
  # accepted. The check does not accept it on your behalf (and a closed network could not fetch
  # it): cuDNN is declined here, and a stub libcudnn.so.9 below lets LibTorch link and load.
  echo "nvidia-cudnn nvidia-cudnn/question select I Decline" | in_root debconf-set-selections
fi

step "install-deps.sh in the root (FLASHPS_WITH_CUDA=$cuda)"
in_root bash -c "command -v update-ca-certificates >/dev/null && update-ca-certificates >/dev/null 2>&1 || true"
in_root bash /flashps/src/scripts/install-deps.sh >"$root.install-deps.log" 2>&1 ||
  { tail -30 "$root.install-deps.log"; exit 1; }
tail -1 "$root.install-deps.log"
in_root dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' libtorch-dev libtorch-cuda-dev catch2 \
  nvidia-cuda-toolkit g++ 2>/dev/null | awk '$1 == "ii" { print "  " $2 " " $3 }' || true

if [ "$setup_only" = 1 ]; then
  step "done: root ready ($("${sudo_cmd[@]}" du -shx "$root" 2>/dev/null | cut -f1))"
  exit 0
fi

if [ "$cuda" = 1 ] && ! in_root ldconfig -p | grep "libcudnn.so.9 " >/dev/null; then  # not -q: SIGPIPE
  # Without a GPU no cuDNN function runs; libtorch_cuda.so still needs its symbols (versioned
  # libcudnn.so.9) to link and load. Each stub function aborts with a message if ever called.
  step "stub libcudnn.so.9 in /usr/local/lib (cuDNN declined; no GPU here calls it)"
  in_root bash -c '
    set -euo pipefail
    work=$(mktemp -d)
    nm -D --undefined-only /usr/lib/x86_64-linux-gnu/libtorch_cuda.so |
      awk "/@libcudnn\.so\.9/ { sub(/@.*/, \"\", \$2); print \$2 }" | sort -u >"$work/symbols"
    {
      echo "#include <stdio.h>"
      echo "#include <stdlib.h>"
      echo "static void called(const char* name) {"
      echo "  fprintf(stderr, \"libcudnn.so.9 stub (scripts/check-debian13.sh): %s called; install cuDNN\\n\", name);"
      echo "  abort();"
      echo "}"
      while read -r symbol; do echo "int $symbol(void) { called(\"$symbol\"); return 0; }"; done <"$work/symbols"
    } >"$work/stub.c"
    { echo "libcudnn.so.9 { global:"; sed "s/$/;/" "$work/symbols"; echo "local: *; };"; } >"$work/stub.map"
    gcc -shared -fPIC -O1 -o /usr/local/lib/libcudnn.so.9 -Wl,-soname,libcudnn.so.9 \
      -Wl,--version-script="$work/stub.map" "$work/stub.c"
    ldconfig
    echo "  $(wc -l <"$work/symbols") cuDNN functions stubbed"
    rm -rf "$work"'
fi

configure_args=()
# LibTorch's CUDA build finds the toolkit through CUDAToolkit; Debian's nvcc lives in /usr/bin.
[ "$cuda" = 1 ] && configure_args+=(-DFLASHPS_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER=/usr/bin/nvcc)
if [ -n "$targets" ]; then
  # Configured as scripts/build.sh does (same build folder and ccache), then only these targets.
  step "build ${targets//,/ } (log: $root.build.log)"
  build_command="source scripts/ccache-env.sh &&
    { [ -f /flashps/build/build.ninja ] || cmake -S . -B /flashps/build -G Ninja -DCMAKE_BUILD_TYPE=Release ${configure_args[*]}; } &&
    cmake --build /flashps/build -j \${FLASHPS_JOBS:-\$(nproc)} --target ${targets//,/ }"
else
  step "build (scripts/build.sh; log: $root.build.log)"
  build_command="scripts/build.sh ${configure_args[*]}"
fi
in_root bash -c "cd /flashps/src && $build_command" >"$root.build.log" 2>&1 ||
  { grep -E "error|Error" "$root.build.log" | head -40; tail -20 "$root.build.log"; exit 1; }
grep -E "^-- (FlashPS|Found Torch|Caffe2: CUDA|Found CUDA)" "$root.build.log" | sort -u | sed 's/^/  /' || true
warnings=$(grep -c "warning:" "$root.build.log" || true)
echo "  compiler warnings: $warnings (grep 'warning:' $root.build.log)"
if [ "$build_only" = 1 ]; then
  step "done: built (no tests run)"
  exit 0
fi

step "ctest (log: $root.ctest.log)"
status=0
extra=""  # quoted for the root's shell (a -R regex may hold |)
[ ${#ctest_args[@]} -gt 0 ] && extra=$(printf "%q " "${ctest_args[@]}")
in_root bash -c "cd /flashps/src && ctest --test-dir /flashps/build --output-on-failure -j 1 $extra" \
  >"$root.ctest.log" 2>&1 || status=$?
grep -E "tests passed|tests failed|\*\*\*Failed|\(Failed\)|Not Run|Total Test time" "$root.ctest.log" | tail -30
step "done: ctest exit $status"
exit "$status"
