# shellcheck shell=bash
# Sourced (not run) by the checks that build or install FlashPS in a Debian root made with
# debootstrap: check-debian13.sh and check-package-debian12.sh. What they share: the step log,
# sudo when not root, making the root, and the mounts it needs (undone however the script ends).

started=$(date +%s)
step() { echo "=== [$(( $(date +%s) - started )) s] $*"; }

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)

# make_debian_root ROOT SUITE MIRROR [debootstrap options]: a minimal Debian in ROOT, replacing
# what was there; its log in ROOT.debootstrap.log.
make_debian_root() {
  local root=$1 suite=$2 mirror=$3
  shift 3
  if ! command -v debootstrap >/dev/null; then
    step "install debootstrap"
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends debootstrap
  fi
  step "debootstrap $suite into $root from $mirror"
  "${sudo_cmd[@]}" rm -rf "$root"
  "${sudo_cmd[@]}" mkdir -p "$root"
  "${sudo_cmd[@]}" debootstrap --variant=minbase "$@" "$suite" "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    { tail -30 "$root.debootstrap.log"; exit 1; }
}

# mount_in_root ROOT SOURCE TARGET [remount options]: proc (SOURCE "proc") or a bind mount of
# SOURCE at ROOT/TARGET, unless something is mounted there already.
root_mounts=()
mount_in_root() {
  local root=$1 source=$2 target=$3 options=${4:-}
  "${sudo_cmd[@]}" mkdir -p "$root/$target"
  mountpoint -q "$root/$target" && return 0
  if [ "$source" = proc ]; then "${sudo_cmd[@]}" mount -t proc proc "$root/$target"
  else "${sudo_cmd[@]}" mount --bind "$source" "$root/$target"; fi
  root_mounts+=("$root/$target")
  [ -n "$options" ] && "${sudo_cmd[@]}" mount -o "remount,bind,$options" "$root/$target"
  return 0
}

# Undoes mount_in_root's mounts, newest first; for the caller's EXIT trap.
unmount_root_mounts() {
  local i
  for ((i = ${#root_mounts[@]} - 1; i >= 0; --i)); do "${sudo_cmd[@]}" umount -l "${root_mounts[$i]}" || true; done
}

# mount_system_dirs ROOT: /proc, /dev and its pts and shm, and this machine's resolver, which apt
# and the programs run in the root need.
mount_system_dirs() {
  local root=$1
  mount_in_root "$root" proc proc
  mount_in_root "$root" /dev dev
  mount_in_root "$root" /dev/pts dev/pts
  mount_in_root "$root" /dev/shm dev/shm
  "${sudo_cmd[@]}" cp /etc/resolv.conf "$root/etc/resolv.conf"
}
