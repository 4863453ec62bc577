#!/usr/bin/env bash
# Load-and-abuse benchmark of `flashps serve` (issue 50): the service ordinary clients get alone,
# then beside a header flood, slowloris, disconnecting clients and a declared huge body, with the
# server's RSS over time (tests/http/abuse_client/main.cpp says what is measured).
#
#   scripts/bench-http-abuse.sh FLASHPS_A [FLASHPS_B] [flashps_http_abuse options...]
#
# Builds nothing: give it `flashps` binaries (e.g. an old build and a new one) and build the tool
# first (cmake --build build --target flashps_http_abuse). Each run starts a fresh server on a free
# loopback port with the bundled model, an API key file and a fresh store, warms it up, runs every
# phase against it, and stops it. With two binaries the runs go A B B A on this machine in this
# session, and the table shows each binary's mean (latency maxima: the maximum) beside the other
# and B/A.
# Options after the binaries go to the tool (e.g. --phase-seconds 30 --clients 4 --route native).
#
# Knobs: FLASHPS_ABUSE_TOOL (build/tests/flashps_http_abuse), FLASHPS_ABUSE_OUT (reports and RSS
# series kept there; default a new folder under /tmp), FLASHPS_ABUSE_LABELS (A,B: column names),
# FLASHPS_ABUSE_ORDER (ABBA with two binaries, A with one), FLASHPS_ABUSE_SERVE_ARGS (extra
# `flashps serve` options, e.g. "--http-threads 64"; default: the server's defaults),
# FLASHPS_ABUSE_WARMUP (3: seconds of ordinary edits before measuring), FLASHPS_ABUSE_RUN_TIMEOUT
# (900: seconds one run may take before it is killed).
# Defaults (5 phases of 20 s, 10 s grace) take about 3 minutes a run, 12 for A B B A.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

usage() {
  echo "usage: $0 FLASHPS_A [FLASHPS_B] [flashps_http_abuse options...]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
binaries=()
while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do
  [ -x "$1" ] || { echo "$1 is not an executable flashps" >&2; usage; }
  binaries+=("$(cd "$(dirname "$1")" && pwd)/$(basename "$1")")
  shift
done
[ ${#binaries[@]} -ge 1 ] && [ ${#binaries[@]} -le 2 ] || usage
tool_options=("$@")
tool=${FLASHPS_ABUSE_TOOL:-$repo/build/tests/flashps_http_abuse}
[ -x "$tool" ] || { echo "no $tool: build it (cmake --build build --target flashps_http_abuse) or set FLASHPS_ABUSE_TOOL" >&2; exit 2; }
IFS=, read -r -a labels <<<"${FLASHPS_ABUSE_LABELS:-A,B}"
for label in "${labels[@]}"; do
  [[ $label =~ ^[A-Za-z0-9._-]+$ ]] || { echo "FLASHPS_ABUSE_LABELS: '$label' (letters, digits, . _ - only)" >&2; exit 2; }
done
if [ ${#binaries[@]} = 2 ]; then order=${FLASHPS_ABUSE_ORDER:-ABBA}; else order=${FLASHPS_ABUSE_ORDER:-A}; fi
serve_args=(${FLASHPS_ABUSE_SERVE_ARGS:-})
warmup=${FLASHPS_ABUSE_WARMUP:-3}
run_timeout=${FLASHPS_ABUSE_RUN_TIMEOUT:-900}
image=$repo/samples/images/autumn.jpg  # 768x512; the bundled model edits a window around the mask
mask=$repo/samples/masks/autumn.png
unset FLASHPS_CACHE_DIR FLASHPS_MODEL  # the bundled model, and only the store named here

out=${FLASHPS_ABUSE_OUT:-$(mktemp -d /tmp/flashps-abuse.XXXXXX)}
mkdir -p "$out"
work=$(mktemp -d)
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/keys.txt"
server_pid="" tool_pid=""

# Whatever happens (an error, Ctrl+C, the timeout), nothing this script started stays behind.
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  set +e
  [ -n "$tool_pid" ] && kill -TERM "$tool_pid" 2>/dev/null
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null
  fi
  wait 2>/dev/null
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server BINARY NAME: a fresh keyed server on a free port; sets server_pid and port.
start_server() {
  rm -f "$work/port"
  "$1" serve --listen 127.0.0.1:0 --port-file "$work/port" --cache-dir "$work/store-$2" \
    --api-key-file "$work/keys.txt" --access-log off --quiet ${serve_args[@]+"${serve_args[@]}"} \
    >"$out/$2.server.out" 2>"$out/$2.server.err" &
  server_pid=$!
  for _ in $(seq 1800); do
    [ -s "$work/port" ] && break
    kill -0 "$server_pid" 2>/dev/null || { echo "server $2 exited before listening:" >&2; tail "$out/$2.server.err" >&2; exit 1; }
    sleep 0.1
  done
  [ -s "$work/port" ] || { echo "server $2 not listening after 180 s" >&2; exit 1; }
  port=$(cat "$work/port")
}

stop_server() {
  kill -TERM "$server_pid" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# run_tool ARGS...: the tool in the background (so the trap can stop it), bounded in time.
run_tool() {
  timeout --signal=TERM --kill-after=10 "$run_timeout" "$tool" --port "$port" --server-pid "$server_pid" \
    --api-key-file "$work/keys.txt" --image "$image" --mask "$mask" "$@" &
  tool_pid=$!
  local rc=0
  wait "$tool_pid" || rc=$?
  tool_pid=""
  return $rc
}

declare -A reports
echo "bench-http-abuse: order $order; reports in $out"
for i in "${!binaries[@]}"; do echo "  ${labels[$i]:-$i} = ${binaries[$i]}"; done
run=0
for letter in $(grep -o . <<<"$order"); do
  index=$(($(printf '%d' "'$letter") - 65))
  [ "$index" -ge 0 ] && [ "$index" -lt ${#binaries[@]} ] || { echo "FLASHPS_ABUSE_ORDER names $letter: no such binary" >&2; exit 2; }
  run=$((run + 1))
  label=${labels[$index]:-$letter}
  name=run$run-$label
  echo
  echo "=== run $run: $label (${binaries[$index]})"
  start_server "${binaries[$index]}" "$name"
  if [ "$warmup" != 0 ]; then
    run_tool --phases alone --phase-seconds "$warmup" --grace-seconds 30 >"$out/$name.warmup.txt" ||
      { echo "warm-up failed:" >&2; tail "$out/$name.warmup.txt" >&2; exit 1; }
  fi
  rc=0
  run_tool --label "$label" --report "$out/$name.json" --rss-series "$out/$name.rss.tsv" ${tool_options[@]+"${tool_options[@]}"} \
    >"$out/$name.txt" 2>&1 || rc=$?
  grep '^phase .* ok in' "$out/$name.txt" || true
  stop_server
  [ -s "$out/$name.json" ] || { echo "run $run wrote no report (exit $rc); see $out/$name.txt" >&2; exit 1; }
  reports[$label]=${reports[$label]:+${reports[$label]},}$out/$name.json
done

echo
echo "=== load and abuse: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores; runs in order $order"
table=()
for i in "${!binaries[@]}"; do
  label=${labels[$i]:-$i}
  [ -n "${reports[$label]:-}" ] && table+=("$label=${reports[$label]}")
done
"$tool" table "${table[@]}" | tee "$out/table.txt"
echo
echo "reports, RSS series (*.rss.tsv) and server logs: $out"
