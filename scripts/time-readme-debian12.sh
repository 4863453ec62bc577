#!/usr/bin/env bash
# Times the README's two quick-start commands as a new user meets them: on a fresh Debian 12 root
# (debootstrap, nothing installed but the base system), a clean clone of the current commit, an
# empty ccache, apt included. Prints wall time and CPU time (user+sys of every process the command
# ran) for each; the numbers in README.md and benchmarks/README.md come from here.
#
#   scripts/time-readme-debian12.sh              # both commands
#   scripts/time-readme-debian12.sh --first-only # ./scripts/quickstart.sh only
#
# FLASHPS_TIME_ROOT (default ~/.cache/flashps/debian12-time-root). The root is recreated on every
# run from a pristine copy of the base system ($root.base.tar, made right after debootstrap on the
# first run), so each run starts with no packages, no build and no cache. FLASHPS_TIME_CCACHE=off
# disables ccache (CCACHE_DISABLE=1) instead of starting with an empty one.
# The clone goes to /flashps/src, ../shared (the fixtures) is bound read-only at /flashps/shared.
# The machine's CPU count is the build's (scripts/build.sh uses nproc): the README's figures are
# for 2 cores. Other work running beside it slows the wall time, not the CPU time: say what ran.
# Needs root (sudo otherwise), the Debian mirror apt already uses, and the npm registry for
# tests/clients.
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$(pwd)
first_only=0
case "${1:-}" in
  --first-only) first_only=1 ;;
  "") ;;
  *) echo "time-readme-debian12: unknown argument $1 (--first-only)" >&2; exit 2 ;;
esac
root="${FLASHPS_TIME_ROOT:-$HOME/.cache/flashps/debian12-time-root}"
base="$root.base.tar"
commit=$(git rev-parse HEAD)
source scripts/lib/debian-root.sh  # step, sudo_cmd, make_debian_root, mount_in_root, mount_system_dirs
# The Debian mirror this machine's apt uses (deb822 or one-line sources).
mirror=$(grep -hoE '^URIs:[[:space:]]*[^[:space:]]+/debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null |
         awk '{print $2}' | head -1 || true)
[ -n "$mirror" ] || mirror=$(grep -hoE '^deb[[:space:]]+[^[:space:]]+/debian/?[[:space:]]+bookworm[[:space:]]' \
                              /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
security_mirror=${mirror%/debian*}/debian-security

if [ -d "$root" ]; then
  for m in $(awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
    "${sudo_cmd[@]}" umount -l "$m"
  done
fi
if [ ! -f "$base" ]; then
  make_debian_root "$root" bookworm "$mirror"
  # A Debian 12 machine as installed: the release, its updates and security updates.
  {
    echo "deb $mirror bookworm main"
    echo "deb $mirror bookworm-updates main"
    echo "deb $security_mirror bookworm-security main"
  } | "${sudo_cmd[@]}" tee "$root/etc/apt/sources.list" >/dev/null
  step "save the base system to $base"
  "${sudo_cmd[@]}" tar -C "$root" -cf "$base" .
else
  step "fresh root from $base"
  "${sudo_cmd[@]}" rm -rf "$root"
  "${sudo_cmd[@]}" mkdir -p "$root"
  "${sudo_cmd[@]}" tar -C "$root" -xpf "$base"
fi

trap unmount_root_mounts EXIT
mount_system_dirs "$root"
step "clean clone of $commit into $root/flashps/src"
"${sudo_cmd[@]}" git clone --quiet --no-local "$repository" "$root/flashps/src"
"${sudo_cmd[@]}" git -C "$root/flashps/src" checkout --quiet --detach "$commit"
if [ -d "$repository/../shared" ]; then
  mount_in_root "$root" "$(cd "$repository/../shared" && pwd)" flashps/shared ro
fi
# This machine's own certificate authorities (e.g. a TLS-inspecting proxy's), for npm only
# (tests/clients): the root's trust store is left as Debian installs it.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cat /usr/local/share/ca-certificates/*.crt | "${sudo_cmd[@]}" tee "$root/flashps/extra-ca.pem" >/dev/null
fi
npm_registry=$(npm config get registry 2>/dev/null || true)
ccache_env=(CCACHE_DIR=/root/.cache/ccache)  # empty: the root is new
[ "${FLASHPS_TIME_CCACHE:-on}" = off ] && ccache_env=(CCACHE_DISABLE=1)

# time_in_root NAME COMMAND: runs COMMAND in the clone as the README says it, as root (so no sudo),
# and prints its wall time and its processes' CPU time. Output: $root.NAME.log.
time_in_root() {
  local name=$1 command=$2 status=0
  step "$name: $command (log: $root.$name.log)"
  "${sudo_cmd[@]}" /usr/bin/time -f "%e %U %S" -o "$root.$name.time" \
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
    "${ccache_env[@]}" NODE_EXTRA_CA_CERTS=/flashps/extra-ca.pem ${npm_registry:+npm_config_registry=$npm_registry} \
    bash -c "cd /flashps/src && $command" >"$root.$name.log" 2>&1 || status=$?
  read -r wall user sys < <(tail -1 "$root.$name.time")
  awk -v n="$name" -v w="$wall" -v u="$user" -v s="$sys" -v st="$status" 'BEGIN {
    printf "%s: exit %d, wall %.1f min, CPU %.1f min (user %.0f s + sys %.0f s), CPU/2 %.1f min\n",
           n, st, w / 60, (u + s) / 60, u, s, (u + s) / 120 }' | tee -a "$root.times"
  return "$status"
}

: | "${sudo_cmd[@]}" tee "$root.times" >/dev/null
echo "commit $commit, $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$root.times"
first=0
time_in_root quickstart ./scripts/quickstart.sh || first=$?
ls -l "$root/flashps/src/out/fig.png" || first=1
[ "$first_only" = 1 ] && exit "$first"
second=0
time_in_root test ./scripts/test.sh || second=$?
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*|Not Run" "$root.test.log" | tail -30 || true
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$root.times"
step "done (quickstart exit $first, test exit $second; $root.times)"
[ "$first" = 0 ] && [ "$second" = 0 ]
