#!/usr/bin/env bash
# Smoke run of the load-and-abuse benchmark (scripts/bench-http-abuse.sh, tests/http/abuse_client/):
# one keyed server, every phase for 2 s with small bounded abusers. Asserts that the benchmark runs,
# leaves no server behind, and that its report parses into a table with a measurement in every row
# that has to have one (the ordinary clients got edits through with the key, /metrics was read,
# RSS was sampled, every abuser did something). Timings are printed, never judged.
# Usage: http_abuse_smoke.sh FLASHPS_BINARY ABUSE_TOOL
set -euo pipefail
[ $# = 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: $0 FLASHPS_BINARY ABUSE_TOOL" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

FLASHPS_ABUSE_TOOL=$2 FLASHPS_ABUSE_OUT=$out FLASHPS_ABUSE_WARMUP=1 FLASHPS_ABUSE_RUN_TIMEOUT=240 \
  bash "$repo/scripts/bench-http-abuse.sh" "$1" --phase-seconds 2 --grace-seconds 20 --settle-seconds 10 \
  --clients 1 --flood-connections 1 --flood-mb 4 --slowloris-connections 4 --disconnect-clients 1 \
  --huge-body-gib 1 --huge-body-mb 16

fail() {
  echo "FAIL: $*"
  exit 1
}
table=$out/table.txt
[ -s "$table" ] || fail "no table"
cat "$table"
grep -q '^flashps: stopped' "$out/run1-A.server.err" || fail "the server was not stopped cleanly: $(tail -3 "$out/run1-A.server.err")"

# value PHASE ROW: the number in ROW of PHASE's block
value() {
  awk -v phase="== $1" -v row="$2" '$0 == phase { inside = 1; next } /^== / { inside = 0 }
    inside && index($0, row) == 1 { print $NF; exit }' "$table"
}
# counts PHASE ROW: the "A: kind=n ..." line under ROW of PHASE's block
counts() {
  awk -v phase="== $1" -v row="$2" '$0 == phase { inside = 1; next } /^== / { inside = 0 }
    inside && index($0, row) == 1 { getline; sub(/^ *A: */, ""); print; exit }' "$table"
}
positive() { awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }

for phase in alone header_flood slowloris disconnect huge_body; do
  grep -qx "== $phase" "$table" || fail "no block for phase $phase"
  for row in "RSS max (MB)" "server: edits done" "/healthz p95 (ms)"; do
    v=$(value "$phase" "$row")
    [ -n "$v" ] && [ "$v" != - ] || fail "$phase: no value for '$row'"
  done
done
positive "$(value alone 'ordinary edits answered')" || fail "alone: no ordinary edit answered ($(counts alone 'ordinary errors'))"
positive "$(value alone 'server: edits done')" || fail "alone: /metrics shows no edit done"
positive "$(value header_flood 'flood connections')" || fail "header_flood: no flood connection"
[ "$(counts slowloris 'slow endings')" != "" ] || fail "slowloris: no endings line"
positive "$(value slowloris 'slow connections open (mean)')" || fail "slowloris: no slow connection held open"
counts disconnect 'disconnecter outcomes' | grep -qE '[a-z0-9]=[1-9]' || fail "disconnect: the disconnecters sent nothing"
positive "$(value huge_body 'body MB/connection max')" || fail "huge_body: no body bytes sent"
echo "PASS: the load-and-abuse benchmark ran every phase and its table holds every measurement"
