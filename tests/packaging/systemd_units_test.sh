#!/usr/bin/env bash
# The systemd units of `flashps serve` (packaging/systemd/): `systemd-analyze verify` finds nothing
# to say about them (it exits 0 on unknown keys and bad values, so any output fails), and
# `systemd-analyze security` rates the service's sandbox OK or better. Neither needs a running
# systemd. verify checks that ExecStart's program exists: the copy checked here names the built
# flashps instead of the installed one, the only change.
# Usage: systemd_units_test.sh PATH_TO_FLASHPS SOURCE_DIR   (exit 77: no systemd-analyze)
set -euo pipefail
[ $# -eq 2 ] && [ -x "$1" ] || { echo "usage: $0 PATH_TO_FLASHPS SOURCE_DIR" >&2; exit 2; }
command -v systemd-analyze >/dev/null || { echo "skipped: needs systemd-analyze (Debian: systemd)" >&2; exit 77; }
flashps=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
units=$2/packaging/systemd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp "$units/flashps.service" "$units/flashps.socket" "$tmp/"
grep -q '^ExecStart=flashps serve ' "$tmp/flashps.service" || { echo "FAIL: ExecStart is not 'flashps serve ...'"; exit 1; }
sed -i "s|^ExecStart=flashps |ExecStart=$flashps |" "$tmp/flashps.service"

said=$(cd "$tmp" && systemd-analyze verify ./flashps.socket ./flashps.service 2>&1) || { echo "FAIL: verify: $said"; exit 1; }
if [ -n "$said" ]; then
  echo "FAIL: systemd-analyze verify has something to say:"
  echo "$said"
  exit 1
fi
echo "ok - systemd-analyze verify: flashps.socket and flashps.service, nothing to report"

# The sandbox settings the service relies on are all there (a unit that lost them still verifies).
for setting in DynamicUser=yes ProtectSystem=strict StateDirectory=flashps ReadOnlyPaths= NoNewPrivileges=yes \
               PrivateTmp=yes ProtectHome=yes 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' \
               EnvironmentFile=-/etc/default/flashps; do
  grep -q "^$setting" "$tmp/flashps.service" || { echo "FAIL: flashps.service lacks $setting"; exit 1; }
done
grep -q '^MemoryDenyWriteExecute=yes' "$tmp/flashps.service" && { echo "FAIL: MemoryDenyWriteExecute breaks oneDNN's JIT"; exit 1; }
echo "ok - the sandbox settings are present"

# systemd's own rating, when this systemd can rate a unit file offline (250 and later).
if rating=$(cd "$tmp" && systemd-analyze security --offline=true ./flashps.service 2>&1); then
  verdict=$(echo "$rating" | sed -n 's/.*Overall exposure level for flashps.service: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p')
  case "$verdict" in
    *" SAFE" | *" OK") echo "ok - systemd-analyze security: exposure $verdict" ;;
    *) echo "FAIL: systemd-analyze security rates the sandbox '$verdict'"; echo "$rating" | tail -n 30; exit 1 ;;
  esac
else
  echo "ok - (systemd-analyze security --offline is not supported here: not rated)"
fi
