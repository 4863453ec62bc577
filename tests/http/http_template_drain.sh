#!/usr/bin/env bash
# `flashps serve` and SIGTERM with a template capture in flight (issue 43): the capture finishes
# and its client gets the 201 with the template's hash, new work gets 503 while the server drains,
# and the server exits 0. (tests/http/test_http_client_gone.cpp checks the drain's timeout, in
# process.)
# Usage: http_template_drain.sh PATH_TO_FLASHPS   (exit 77: curl is missing)
set -euo pipefail
[ $# -eq 1 ] && [ -x "$1" ] || { echo "usage: $0 PATH_TO_FLASHPS" >&2; exit 2; }
flashps=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
samples=$(cd "$(dirname "$0")/../../samples" && pwd)
command -v curl >/dev/null || { echo "skipped: needs curl" >&2; exit 77; }
export FLASHPS_THREADS=${FLASHPS_THREADS:-2}
unset FLASHPS_CACHE_DIR FLASHPS_MODEL FLASHPS_API_KEY_FILE
tmp=$(mktemp -d)
pid= capture=
cleanup() {
  [ -n "$capture" ] && kill "$capture" 2>/dev/null
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- server stderr:"
  cat "$tmp/err" 2>/dev/null || true
  exit 1
}
metric() { curl -s --max-time 10 "$url/metrics" | sed -n "s/^$1 //p"; }

"$flashps" serve --listen 127.0.0.1:0 --port-file "$tmp/port" --cache-dir "$tmp/store" --access-log off \
  --quiet --drain-seconds 300 >/dev/null 2>"$tmp/err" &
pid=$!
for _ in $(seq 1 1200); do
  [ -s "$tmp/port" ] && read -r port <"$tmp/port" && [[ $port =~ ^[0-9]+$ ]] && break
  kill -0 "$pid" 2>/dev/null || fail "the server exited before listening"
  sleep 0.1
done
url=http://127.0.0.1:$port

# A capture of a few full steps; SIGTERM once it runs.
curl -s --max-time 600 -o "$tmp/capture.json" -w '%{http_code}' "$url/v1/templates" \
  -F image=@"$samples/images/autumn.jpg" -F mask=@"$samples/masks/autumn.png" -F steps=4 >"$tmp/capture.code" &
capture=$!
for _ in $(seq 1 600); do
  [ "$(metric flashps_template_captures_running)" = 1 ] && break
  sleep 0.1
done
[ "$(metric flashps_template_captures_running)" = 1 ] || fail "the capture did not start within 60 s"
kill -TERM "$pid"
for _ in $(seq 1 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$url/readyz")" = 503 ] && break
  sleep 0.05
done
late=$(curl -s -o "$tmp/late.json" -w '%{http_code}' --max-time 60 "$url/v1/templates" \
  -F image=@"$samples/images/autumn.jpg" -F steps=1 || true)
[ "$late" = 503 ] && grep -q '"draining"' "$tmp/late.json" || fail "a capture asked for while draining got $late: $(head -c 300 "$tmp/late.json")"
echo "ok - while draining, a new POST /v1/templates gets 503 (draining)"
[ "$(metric flashps_template_captures_running)" = 1 ] || fail "the capture in flight did not outlast the SIGTERM's first moments"
wait "$capture" || true
capture=
[ "$(cat "$tmp/capture.code")" = 201 ] && grep -q '"template_hash":"[0-9a-f]' "$tmp/capture.json" ||
  fail "the capture in flight at SIGTERM answered $(cat "$tmp/capture.code"): $(head -c 300 "$tmp/capture.json")"
echo "ok - the capture in flight at SIGTERM finished and its client got 201 with the template's hash"
status=0
wait "$pid" || status=$?
pid=
[ "$status" = 0 ] || fail "exit status $status after SIGTERM, not 0"
echo "ok - the server exited 0 after the drain"
grep -q "draining 0 edits and 1 template captures" "$tmp/err" ||
  fail "the drain message did not count the capture in flight: $(grep draining "$tmp/err")"
echo "ok - the drain message counts the template capture in flight"
