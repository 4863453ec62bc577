#!/usr/bin/env bash
# Fresh-machine check of the .deb: builds it (cpack) from an already built tree, installs it with
# apt into a clean Debian 12 root (debootstrap; only the package's declared dependencies come in,
# plus cmake/gcc/g++/make/pkg-config for the consumers), and builds and runs the installed C and
# C++ consumer samples there with find_package(FlashPS) and pkg-config
# (tests/packaging/build_and_run_consumers.sh). Too heavy for CI; run it before a release.
#
#   scripts/check-package-debian12.sh            # after scripts/build.sh (the whole tree built)
#
# FLASHPS_BUILD_DIR (default build), FLASHPS_DEBIAN_ROOT (default ~/.cache/flashps/debian12-root),
# FLASHPS_DEB (check this .deb instead of packaging the build).
# The root is kept for the next run: before installing, the previous run's package and every
# package apt installed for it are purged, so each run starts from the base system again.
# Needs root (sudo otherwise) and the Debian mirror apt already uses (read from /etc/apt); installs
# debootstrap when missing.
#
# Cost (measured 2026-11-24 on the 2-core development machine, compiles running beside it):
# first run ~16 min: debootstrap 12.5 min, build tools in the root 2 min, cpack 15 s, apt
# installing the package and the 285 packages it depends on 70 s (flashps-paint brings Qt,
# flashps-bench OpenCV), building and running the consumers 20 s. Later runs ~1.5 min plus cpack
# (the downloaded .debs stay in the root's apt cache). Disk: the root takes 0.76 GB, 1.9 GB with
# the package installed. The mirror's speed decides the first run: on 2026-11-27 the whole first
# run took 85 s (debootstrap 26 s, apt installing 321 packages 27 s).
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$(pwd)
build_dir=$(cd "${FLASHPS_BUILD_DIR:-build}" && pwd)
root="${FLASHPS_DEBIAN_ROOT:-$HOME/.cache/flashps/debian12-root}"
source scripts/lib/debian-root.sh  # step, sudo_cmd, make_debian_root, mount_system_dirs

# The Debian mirror this machine's apt uses (deb822 URIs: or one-line deb entries).
mirror=$(grep -hoE '^URIs:[[:space:]]*[^[:space:]]+/debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null |
         awk '{print $2}' | head -1 || true)
if [ -z "$mirror" ]; then
  mirror=$(grep -hoE '^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?[^[:space:]]+/debian/?[[:space:]]+bookworm[[:space:]]' \
             /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
           awk '{for (i = 2; i <= NF; ++i) if ($i ~ /^[a-z]+:\/\//) { print $i; exit }}' | head -1 || true)
fi
if [ -z "$mirror" ]; then
  echo "check-package-debian12: no Debian bookworm mirror found in /etc/apt/sources.list*" >&2
  exit 1
fi
security_mirror=$(grep -hoE '(^URIs:[[:space:]]*|^deb[[:space:]]+)[^[:space:]]+/debian-security/?' \
                    /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null |
                  awk '{print $2}' | head -1 || true)

[ -f "$root/.flashps-root-ready" ] || make_debian_root "$root" bookworm "$mirror"

# /proc and /dev for apt and the consumers; unmounted however the script ends.
trap unmount_root_mounts EXIT
mount_system_dirs "$root"
in_root() { "${sudo_cmd[@]}" chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
              DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }

if [ ! -f "$root/.flashps-root-ready" ]; then
  step "build tools in the root (cmake, gcc, g++, make, pkg-config)"
  # A Debian 12 machine as installed: the release, its updates and security updates.
  {
    echo "deb $mirror bookworm main"
    echo "deb $mirror bookworm-updates main"
    [ -n "$security_mirror" ] && echo "deb $security_mirror bookworm-security main"
  } | "${sudo_cmd[@]}" tee "$root/etc/apt/sources.list" >/dev/null
  in_root apt-get update -qq
  in_root apt-get install -y -qq --no-install-recommends cmake gcc g++ make pkg-config libc6-dev >/dev/null
  "${sudo_cmd[@]}" touch "$root/.flashps-root-ready"
fi

if [ -n "${FLASHPS_DEB:-}" ]; then
  deb=$(realpath "$FLASHPS_DEB")
else
  step "package: cpack -G DEB ($build_dir)"
  rm -rf "$build_dir/packages"
  (cd "$build_dir" && cpack -G DEB -B "$build_dir/packages" >"$build_dir/packages.log") ||
    { tail -30 "$build_dir/packages.log"; exit 1; }
  deb=$(ls "$build_dir"/packages/flashps_*.deb)
fi
echo "$deb: $(du -h "$deb" | cut -f1)"
dpkg-deb --field "$deb" Depends

step "back to the base system: purge the previous run's package and what came with it"
if in_root dpkg-query -W -f='${Status}' flashps 2>/dev/null | grep -q "install ok installed"; then
  in_root apt-get purge -y -qq flashps >/dev/null
fi
in_root apt-get autoremove --purge -y -qq >/dev/null
"${sudo_cmd[@]}" rm -rf "$root/tmp/flashps-check"
"${sudo_cmd[@]}" mkdir -p "$root/tmp/flashps-check"

step "apt install $(basename "$deb") (its declared dependencies only)"
"${sudo_cmd[@]}" cp "$deb" "$repository/tests/packaging/build_and_run_consumers.sh" "$root/tmp/flashps-check/"
installed_before=$(in_root dpkg-query -W -f='${Package}\n' | sort)
in_root apt-get update -qq
in_root apt-get install -y --no-install-recommends "/tmp/flashps-check/$(basename "$deb")" \
  >"$build_dir/packages-apt.log" 2>&1 || { tail -30 "$build_dir/packages-apt.log"; exit 1; }
new_packages=$(comm -13 <(echo "$installed_before") <(in_root dpkg-query -W -f='${Package}\n' | sort))
root_size() { "${sudo_cmd[@]}" du -shx "$root" 2>/dev/null | cut -f1; }
echo "apt installed $(wc -l <<<"$new_packages") packages ($(root_size) root): $(tr '\n' ' ' <<<"$new_packages")"

step "build and run the consumers in the root"
in_root bash /tmp/flashps-check/build_and_run_consumers.sh /usr/share/flashps/samples /tmp/flashps-check/work \
  /usr/share/flashps/models

step "done: the package builds and runs its consumers on a fresh Debian 12 (root: $(root_size))"
