#!/usr/bin/env bash
# Fresh-machine check of the packages (packaging/packages.cmake): builds them (cpack) from an
# already built tree, checks that the server's packages (flashps, libflashps1) bring no Qt, GTK,
# GIMP or Krita beyond what Debian's libtorch1.13 brings, installs all of them with apt into a clean
# Debian 12 root (debootstrap; only their declared dependencies come in, GIMP and Krita among
# them, plus cmake/gcc/g++/make/pkg-config, Xvfb and desktop-file-utils for the checks), and runs
# there from the installed files only: desktop-file-validate on flashps-paint.desktop; the C and
# C++ consumers (find_package and pkg-config), the sample plugin and samples/plugin_host_consumer, a
# program hosting plugins through FlashPS::plugin_host (tests/packaging/build_and_run_consumers.sh);
# gimp-console-2.10 with the Script-Fu batch on the installed GIMP plug-in
# (tests/integrations/gimp_test.sh --installed); Krita under Xvfb with the installed docker
# against the installed `flashps serve` (tests/integrations/krita_test.sh --installed). Too heavy
# for CI; run it before a release.
#
#   scripts/check-package-debian12.sh            # after scripts/build.sh (the whole tree built,
#                                                # with libgimp2.0-dev and Qt 6 present)
#
# FLASHPS_BUILD_DIR (default build), FLASHPS_DEBIAN_ROOT (default ~/.cache/flashps/debian12-root),
# FLASHPS_DEB_DIR (check the .debs in this folder instead of packaging the build).
# The root is kept for the next run: before installing, the previous run's packages and every
# package apt installed for them are purged, so each run starts from the base system again.
# Needs root (sudo otherwise) and the Debian mirror apt already uses (read from /etc/apt); installs
# debootstrap when missing.
#
# Cost (measured 2026-11-29 on the 2-core development machine, load average 15-19 from other
# builds beside it): a whole run 14.5 min wall, 2.6 min CPU (user 2m07 + sys 0m31): cpack 62 s,
# purging the previous run's 437 packages 3.6 min, the no-Qt simulation 23 s, apt installing the 7
# packages and 437 others from the root's apt cache 5.1 min, the consumers 2.2 min, GIMP 72 s,
# Krita 54 s. The first run adds the root: debootstrap 2 min and the build tools 30 s, and the
# downloads (480 MB of .debs: no measurable time on 2026-11-29's mirror). Disk: the root takes
# 2.7 GB with the packages installed.
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

# The packages (packaging/packages.cmake); a server's needs flashps and libflashps1 only.
packages=(libflashps1 libflashps-dev flashps libflashps-plugin-host flashps-paint gimp-plugin-flashps
          krita-plugin-flashps)
server_packages=(libflashps1 flashps)
# What the checks themselves use beside the packages (Xvfb for Krita, the .desktop validator).
check_tools=(xvfb xauth desktop-file-utils)
if [ -n "${FLASHPS_DEB_DIR:-}" ]; then
  deb_dir=$(cd "$FLASHPS_DEB_DIR" && pwd)
else
  step "packages: cpack -G DEB ($build_dir)"
  deb_dir="$build_dir/packages"
  rm -rf "$deb_dir"
  (cd "$build_dir" && cpack -G DEB -B "$deb_dir" >"$build_dir/packages.log") ||
    { tail -30 "$build_dir/packages.log"; exit 1; }
fi
debs=()
for package in "${packages[@]}"; do
  deb=$(ls "$deb_dir/${package}_"*.deb 2>/dev/null | head -1) ||
    { echo "FAIL: no ${package}_*.deb in $deb_dir (was its part built? gimp-plugin-flashps needs libgimp2.0-dev)"; exit 1; }
  debs+=("$deb")
  echo "$(basename "$deb") ($(du -h "$deb" | cut -f1)): Depends: $(dpkg-deb --field "$deb" Depends)"
done
deb_of() { local deb; for deb in "${debs[@]}"; do [[ $(basename "$deb") == "$1"_* ]] && echo "/tmp/flashps-check/$(basename "$deb")"; done; }

step "back to the base system: purge the previous run's packages and what came with them"
installed=$(in_root dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" "${check_tools[@]}" gimp3-plugin-flashps 2>/dev/null |
            awk '/ installed$/ {print $1}' | tr '\n' ' ' || true)
[ -z "$installed" ] || in_root apt-get purge -y -qq $installed >/dev/null
in_root apt-get autoremove --purge -y -qq >/dev/null
"${sudo_cmd[@]}" rm -rf "$root/tmp/flashps-check"
"${sudo_cmd[@]}" mkdir -p "$root/tmp/flashps-check/tests" "$root/tmp/flashps-check/samples"
# The packages, and the test scripts that exercise them (the product comes from the packages only).
"${sudo_cmd[@]}" cp "${debs[@]}" "$root/tmp/flashps-check/"
"${sudo_cmd[@]}" cp -R tests/integrations tests/packaging "$root/tmp/flashps-check/tests/"
"${sudo_cmd[@]}" cp -R samples/images "$root/tmp/flashps-check/samples/"
in_root apt-get update -qq

step "a server needs no Qt: apt-get install --simulate ${server_packages[*]}"
# Debian 12's libtorch1.13 itself depends on libopencv-highgui406, hence on Qt 5: what FlashPS
# can promise is that its server packages name no Qt and bring nothing of Qt, GTK, GIMP or Krita
# beyond what LibTorch brings.
simulate() { in_root apt-get install --simulate --no-install-recommends "$@" 2>&1 | awk '/^Inst / {print $2}' | sort; }
server_new=$(simulate $(for package in "${server_packages[@]}"; do deb_of "$package"; done))
torch_new=$(simulate libtorch1.13 libopenblas0-openmp)
[ -n "$server_new" ] && [ -n "$torch_new" ] || { echo "FAIL: apt-get install --simulate listed nothing"; exit 1; }
beyond_torch=$(comm -13 <(echo "$torch_new") <(echo "$server_new"))
for package in "${server_packages[@]}"; do
  if dpkg-deb --field "$(ls "$deb_dir/${package}_"*.deb)" Depends | grep -iE 'qt|gtk|gimp|krita'; then
    echo "FAIL: $package depends on the above"; exit 1
  fi
done
if grep -iE '^(libqt|qt6|qt5|libgtk|gimp|krita)' <<<"$beyond_torch" || grep -iE 'qt6' <<<"$server_new"; then
  echo "FAIL: installing ${server_packages[*]} would bring the packages above"
  exit 1
fi
echo "${server_packages[*]} bring $(wc -l <<<"$server_new") packages: $(wc -l <<<"$beyond_torch") beyond Debian's" \
     "libtorch1.13 (itself $(wc -l <<<"$torch_new"), $(grep -c '^libqt5' <<<"$torch_new" || true) of Qt 5 through" \
     "libopencv-highgui406), none of Qt, GTK, GIMP or Krita"

step "apt install ${packages[*]} (their declared dependencies only) and ${check_tools[*]}"
installed_before=$(in_root dpkg-query -W -f='${Package}\n' | sort)
in_root apt-get install -y --no-install-recommends \
  $(for package in "${packages[@]}"; do deb_of "$package"; done) "${check_tools[@]}" \
  >"$build_dir/packages-apt.log" 2>&1 || { tail -30 "$build_dir/packages-apt.log"; exit 1; }
new_packages=$(comm -13 <(echo "$installed_before") <(in_root dpkg-query -W -f='${Package}\n' | sort))
root_size() { "${sudo_cmd[@]}" du -shx "$root" 2>/dev/null | cut -f1; }
echo "apt installed $(wc -l <<<"$new_packages") packages ($(root_size) root)"

step "flashps-paint's menu entry and icon"
in_root desktop-file-validate /usr/share/applications/flashps-paint.desktop
in_root test -s /usr/share/icons/hicolor/scalable/apps/flashps-paint.svg
echo "flashps-paint.desktop is valid; its icon is installed"

step "build and run the consumers in the root: C, C++, a plugin, a program hosting plugins"
in_root bash /tmp/flashps-check/tests/packaging/build_and_run_consumers.sh /usr/share/flashps/samples \
  /tmp/flashps-check/work /usr/share/flashps/models

step "GIMP 2.10: gimp-console-2.10 runs the Script-Fu batch on the installed plug-in"
in_root env FLASHPS_THREADS=2 bash /tmp/flashps-check/tests/integrations/gimp_test.sh --installed

step "Krita under Xvfb: the installed docker against the installed flashps serve"
# Krita in the root sometimes took just over the test's 30 s to quit after the scenario on the
# loaded 2-core machine (its event loop still running, the windows closed): 120 s here.
in_root env FLASHPS_THREADS=2 FLASHPS_KRITA_QUIT_SECONDS=120 bash /tmp/flashps-check/tests/integrations/krita_test.sh --installed

step "done: the packages install and work on a fresh Debian 12 (root: $(root_size))"
