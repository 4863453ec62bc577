#!/usr/bin/env bash
# `flashps serve` under load and faults, with the bundled model on loopback:
#   (a) a server on a fresh store; templates registered over HTTP, so edits read the store
#   (b) a warm-up through the load client; the server's RSS
#   (c) round 1: FLASHPS_LOAD_REQUESTS requests (default 500) from FLASHPS_LOAD_CLIENTS client
#       threads (default 32) with random cancels, disconnects (mid-upload, mid-event-stream, during
#       a blocking OpenAI edit) and deadlines: every request ends exactly once with the right
#       statuses, /metrics agrees with the client's counts (tests/http/load_client/)
#   (d) round 2, the same load: RSS after it within 10% of RSS after round 1 (once round 1 has
#       filled the server's window of 256 kept results: see below); /metrics' edit outcomes over
#       the server's life equal the edits the clients created
#   (e) SIGTERM during a load: the server drains (503 draining for new edits) and exits 0
#   (f) a restart on the same store, a load with template registrations, SIGKILL in the middle;
#       another restart: `flashps cache verify` finds no damage, /readyz answers 200, an edit
#       succeeds and still reuses a template registered in (a); SIGTERM exits 0
# Under AddressSanitizer (detected in the binary, or FLASHPS_ASAN=1) every server's stderr must be
# free of ASan/LSan/UBSan reports (the SIGKILLed one cannot report leaks; the SIGTERMed ones exit
# through the leak check).
# Usage: http_load_faults.sh FLASHPS_BINARY LOAD_CLIENT_BINARY
# Knobs: FLASHPS_LOAD_REQUESTS (500), FLASHPS_LOAD_CLIENTS (32), FLASHPS_LOAD_SEED (1),
#        FLASHPS_LOAD_WARMUP (20), FLASHPS_LOAD_KILL_AFTER (5 s), FLASHPS_LOAD_IDLE_SECONDS (5),
#        FLASHPS_LOAD_KEEP_RESULTS (256: the server's kept results), FLASHPS_LOAD_KEEP_TMP=1 keeps
#        the temporary folder. Needs curl.
set -euo pipefail

if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
  echo "usage: $0 FLASHPS_BINARY LOAD_CLIENT_BINARY (both executable)" >&2
  exit 2
fi
command -v curl >/dev/null || { echo "http_load_faults.sh needs curl" >&2; exit 2; }
FLASHPS=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
CLIENT=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
image=$repo/samples/images/autumn.jpg  # 768x512
mask=$repo/samples/masks/autumn.png    # white = regenerate
requests=${FLASHPS_LOAD_REQUESTS:-500}
clients=${FLASHPS_LOAD_CLIENTS:-32}
seed=${FLASHPS_LOAD_SEED:-1}
warmup=${FLASHPS_LOAD_WARMUP:-20}
kill_after=${FLASHPS_LOAD_KILL_AFTER:-5}
idle_seconds=${FLASHPS_LOAD_IDLE_SECONDS:-5}
unset FLASHPS_CACHE_DIR FLASHPS_MODEL  # the bundled model, and only the store named here

tmp=$(mktemp -d)
store=$tmp/store
server_pid="" server_port="" server_name=""
background=()  # pids of background jobs this script started (clients, registration loop)
t0=$(date +%s.%N)

# ---------------------------------------------------------------- sanitizers

asan=0
# (grep without -q: with pipefail, a grep that quits early makes nm fail with SIGPIPE)
if [ "${FLASHPS_ASAN:-0}" = 1 ] || nm -D "$FLASHPS" 2>/dev/null | grep '__asan_init' >/dev/null ||
  ldd "$FLASHPS" 2>/dev/null | grep 'libasan' >/dev/null; then
  asan=1
fi
server_env=()
# How long an edit may take before the client calls it unfinished: 32 clients share one engine, so
# the slowest edit waits behind dozens of others, several times longer under AddressSanitizer.
edit_timeout=${FLASHPS_LOAD_EDIT_TIMEOUT:-300}
[ $asan = 1 ] && edit_timeout=${FLASHPS_LOAD_EDIT_TIMEOUT:-1200}
if [ $asan = 1 ]; then
  server_env=(env "ASAN_OPTIONS=detect_leaks=1:halt_on_error=1"
    "LSAN_OPTIONS=suppressions=$repo/tests/sanitizers/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
fi

# ---------------------------------------------------------------- helpers

elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
step() { echo; echo "=== [$(elapsed "$t0") s] $*"; }
ok() { echo "ok - $*"; }

fail() {
  echo "FAIL: $*"
  local name
  for name in "$tmp"/*.err; do
    [ -s "$name" ] || continue
    echo "--- $(basename "$name") (tail):"
    tail -n 25 "$name"
  done
  exit 1
}

cleanup() {
  local status=$? pid waited
  trap - EXIT
  set +e
  for pid in ${background[@]+"${background[@]}"}; do kill "$pid" 2>/dev/null; done
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null
    waited=0
    while kill -0 "$server_pid" 2>/dev/null && [ $waited -lt 300 ]; do sleep 0.1; waited=$((waited + 1)); done
    kill -KILL "$server_pid" 2>/dev/null
  fi
  wait 2>/dev/null
  if [ "${FLASHPS_LOAD_KEEP_TMP:-0}" = 1 ] || [ $status -ne 0 ]; then
    echo "(files kept in $tmp)"
  else
    rm -rf "$tmp"
  fi
  exit $status
}
trap cleanup EXIT

# Starts a server named $1 on the store, waits until it listens and is ready.
start_server() {
  server_name=$1
  local started
  started=$(date +%s.%N)
  rm -f "$tmp/$1.port"
  ${server_env[@]+"${server_env[@]}"} "$FLASHPS" serve --listen 127.0.0.1:0 --port-file "$tmp/$1.port" --cache-dir "$store" \
    --max-queue 64 --http-threads 48 --drain-seconds 30 --access-log "$tmp/$1.access.log" --quiet \
    >"$tmp/$1.out" 2>"$tmp/$1.err" &
  server_pid=$!
  local waited=0
  until [ -s "$tmp/$1.port" ]; do
    kill -0 "$server_pid" 2>/dev/null || fail "server '$1' exited before listening"
    [ $waited -lt 1800 ] || fail "server '$1' not listening after 180 s"
    sleep 0.1
    waited=$((waited + 1))
  done
  server_port=$(cat "$tmp/$1.port")
  [ "$(http_code "/readyz")" = 200 ] || fail "server '$1': /readyz is not 200"
  ok "server '$1' (pid $server_pid) listening on port $server_port after $(elapsed "$started") s"
  grep '^flashps: note' "$tmp/$1.err" || true  # what the store said when it opened
}

http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 60 "http://127.0.0.1:$server_port$1"; }
metrics() { curl -sf --max-time 60 "http://127.0.0.1:$server_port/metrics"; }
metric() { metrics | awk -v name="$1" '$1 == name { printf "%d", $2; found = 1 } END { if (!found) printf "0" }'; }
edits_total() {
  local text
  text=$(metrics)
  awk '$1 ~ /^flashps_edits_total\{outcome="(done|cancelled|failed|deadline_exceeded)"\}$/ { sum += $2 }
       END { printf "%d", sum }' <<<"$text"
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status"; }
# After a failed RSS check, tells a leak from memory the allocator keeps: malloc_trim(0) called in
# the server through gdb (when gdb can attach) returns glibc's free pages to the system. RSS that
# falls back near round 1's level was free memory cached in malloc arenas, not live data.
trim_diagnosis() {
  command -v gdb >/dev/null || return 0
  local before after
  before=$(rss_kb)
  timeout 60 gdb -p "$server_pid" -batch -ex 'call (int) malloc_trim(0)' >/dev/null 2>&1 || return 0
  after=$(rss_kb)
  echo "diagnosis: malloc_trim(0) in the server (through gdb) takes RSS from $before kB to $after kB"
}
report_value() { sed -n "s/^  \"$2\": \\(-\\{0,1\\}[0-9][0-9]*\\),\\{0,1\\}\$/\\1/p" "$1"; }

# Sends SIGTERM, waits for the exit (status 0 required), checks the sanitizers' reports.
stop_server() {
  local started rc=0 waited=0
  started=$(date +%s.%N)
  kill -TERM "$server_pid"
  while kill -0 "$server_pid" 2>/dev/null; do
    [ $waited -lt 1200 ] || fail "server '$server_name' still running 120 s after SIGTERM"
    sleep 0.1
    waited=$((waited + 1))
  done
  wait "$server_pid" || rc=$?
  server_pid=""
  check_sanitizers "$server_name"  # first: a leak report also makes the exit status non-zero
  [ $rc = 0 ] || fail "server '$server_name' exited with status $rc after SIGTERM (0 expected)"
  ok "server '$server_name' drained and exited 0 after $(elapsed "$started") s: $(grep '^flashps: stopped' "$tmp/$server_name.err")"
}

check_sanitizers() {
  if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp/$1.err"; then
    grep -nE -A 30 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp/$1.err" | head -n 80
    fail "server '$1': sanitizer report in its stderr"
  fi
  if [ $asan = 1 ]; then ok "server '$1': no ASan/LSan/UBSan report"; fi
}

# Runs the load client in the foreground: load NAME REQUESTS CLIENTS SEED [client options...]
load() {
  local name=$1 count=$2 threads=$3 load_seed=$4 rc=0 started
  shift 4
  started=$(date +%s.%N)
  "$CLIENT" --port "$server_port" --requests "$count" --clients "$threads" --seed "$load_seed" --image "$image" \
    --mask "$mask" --report "$tmp/$name.json" --edit-timeout "$edit_timeout" "$@" || rc=$?
  [ $rc = 0 ] || fail "load '$name': the client found violations (exit $rc); reproduce with: $CLIENT --port PORT --requests $count --clients $threads --seed $load_seed --image $image --mask $mask $*"
  kill -0 "$server_pid" 2>/dev/null || fail "load '$name': the server is gone"
  ok "load '$name': $count requests from $threads clients in $(elapsed "$started") s"
}

# One native edit through curl; sets view to the finished edit's JSON. Fails unless it ends done.
plain_edit() {
  local answer id waited=0
  answer=$(curl -sf --max-time 60 "http://127.0.0.1:$server_port/v1/edits" -F image=@"$image" -F mask=@"$mask" \
    -F steps=1 -F seed=5) || fail "POST /v1/edits failed"
  id=$(grep -o '"id":"edit_[0-9a-f]*"' <<<"$answer" | cut -d'"' -f4)
  [ -n "$id" ] || fail "POST /v1/edits: no id in $answer"
  until view=$(curl -sf --max-time 60 "http://127.0.0.1:$server_port/v1/edits/$id") && grep -q '"finished":true' <<<"$view"; do
    [ $waited -lt 1200 ] || fail "edit $id not finished after 120 s: $view"
    sleep 0.1
    waited=$((waited + 1))
  done
  grep -q '"outcome":"done"' <<<"$view" || fail "edit $id did not end done: $view"
  [ "$(curl -s -o "$tmp/result.png" -w '%{http_code}' "http://127.0.0.1:$server_port/v1/edits/$id/result")" = 200 ] ||
    fail "GET /v1/edits/$id/result is not 200"
  [ "$(head -c 4 "$tmp/result.png" | tail -c 3)" = PNG ] || fail "the result of $id is not a PNG"
}

register_template() {  # image mask steps
  local answer
  answer=$(curl -s -w '\n%{http_code}' --max-time 120 "http://127.0.0.1:$server_port/v1/templates" -F image=@"$1" \
    -F mask=@"$2" -F steps="$3")
  [ "$(tail -n 1 <<<"$answer")" = 201 ] && grep -q '"template_hash":"[0-9a-f]' <<<"$answer" ||
    fail "POST /v1/templates ($(basename "$1"), steps $3): $answer"
}

echo "http_load_faults: $requests requests x 2 rounds, $clients clients, seed $seed; $FLASHPS$([ $asan = 1 ] && echo " (AddressSanitizer)")"

# ---------------------------------------------------------------- (a) server, templates

step "(a) server on a fresh store; templates over HTTP"
start_server main
started=$(date +%s.%N)
for steps in 1 2 3; do register_template "$image" "$mask" "$steps"; done
ok "3 templates registered (steps 1-3) in $(elapsed "$started") s"
plain_edit
grep -q '"cache_hit":true' <<<"$view" || fail "an edit after registration did not reuse the template: $view"
ok "an edit reuses the registered template (reads the store)"
client_edits=1  # the edits the clients (and plain_edit) created, to compare with /metrics

# ---------------------------------------------------------------- (b) warm-up

step "(b) warm-up: $warmup requests"
load warmup "$warmup" $((clients < 8 ? clients : 8)) $((seed + 1000)) --check-metrics
client_edits=$((client_edits + $(report_value "$tmp/warmup.json" accepted_edits)))
sleep "$idle_seconds"
rss_warm=$(rss_kb)
echo "RSS after warm-up: $rss_warm kB"

# ---------------------------------------------------------------- (c), (d) two rounds

step "(c) round 1: $requests requests, $clients clients"
load round1 "$requests" "$clients" "$seed" --check-metrics
client_edits=$((client_edits + $(report_value "$tmp/round1.json" accepted_edits)))
edits_by_round1=$client_edits
sleep "$idle_seconds"
rss_round1=$(rss_kb)
echo "RSS after round 1: $rss_round1 kB"

step "(d) round 2: the same load again"
load round2 "$requests" "$clients" "$seed" --check-metrics
client_edits=$((client_edits + $(report_value "$tmp/round2.json" accepted_edits)))
sleep "$idle_seconds"
rss_round2=$(rss_kb)
echo "RSS after round 2: $rss_round2 kB"

# What the RSS check compares. The issue asks for RSS "back within 10% of its post-warm-up level":
# the steady state once the server is warm. A short warm-up does not reach that state:
#  * the server keeps the most recent finished edits for status and result requests
#    (keep_results: 256, for up to 10 minutes), and each one holds its result (the encoded PNG and,
#    through its engine request, the decoded image: about 2 MB at 768x512). RSS grows with every
#    finished edit until 256 are kept, then stays flat: that is retention, bounded by design;
#  * the first full round grows the allocator's per-thread arenas (48 connection threads) and the
#    engine's batch buffers (up to --max-batch) to their working size, and that memory stays
#    mapped though free.
# So the warm-up value is printed but not asserted on; round 1 is the real warm-up, and the
# assertion is RSS after round 2 <= 1.10 x RSS after round 1, both read once the server is idle:
# the same load again must not need more memory, so a leak per request (an image, a result, a
# connection's state) shows as growth between the two. That holds only once round 1 has filled
# the retention window (at least FLASHPS_LOAD_KEEP_RESULTS edits, the server's 256, created by
# the end of round 1); with fewer (quick runs) the numbers are printed and the check is skipped.
keep_results=${FLASHPS_LOAD_KEEP_RESULTS:-256}
ratio_round=$(awk -v a="$rss_round2" -v b="$rss_round1" 'BEGIN { printf "%.3f", a / b }')
ratio_warm=$(awk -v a="$rss_round2" -v b="$rss_warm" 'BEGIN { printf "%.3f", a / b }')
echo "RSS kB: warm-up $rss_warm, round 1 $rss_round1, round 2 $rss_round2; round2/round1 $ratio_round (asserted <= 1.10), round2/warm-up $ratio_warm (printed only)"
if [ "$edits_by_round1" -ge "$keep_results" ]; then
  if [ $((rss_round2 * 100)) -gt $((rss_round1 * 110)) ]; then
    trim_diagnosis
    fail "RSS grew from $rss_round1 kB after round 1 to $rss_round2 kB after the same load again (more than 10%)"
  fi
  ok "RSS after round 2 within 10% of RSS after round 1"
else
  echo "SKIPPED: the RSS check (only $edits_by_round1 edits by the end of round 1, fewer than the $keep_results finished edits the server keeps: RSS is still growing by design)"
fi

# Over the server's life: every edit the clients created reached exactly one outcome in /metrics.
total=$(edits_total)
[ "$total" = "$client_edits" ] ||
  fail "/metrics counts $total finished edits (done+cancelled+failed+deadline_exceeded), the clients created $client_edits"
[ "$(metric flashps_queue_depth)" = 0 ] && [ "$(metric flashps_running_batch_size)" = 0 ] ||
  fail "the idle server reports queued or running edits: $(metrics | grep -E '^flashps_(queue_depth|running)')"
ok "/metrics: done + cancelled + failed + deadline_exceeded = $total = the edits the clients created"
metrics | grep -E '^flashps_(edits_total|http_requests_total|cache_hits_total|cache_misses_total|http_connections)' | tr '\n' ' '
echo

# ---------------------------------------------------------------- (e) SIGTERM during a load

step "(e) SIGTERM during a load: drain, exit 0"
# The SIGTERM comes once a tenth of 64 requests from 8 clients have ended (the client's first
# progress line): edits are queued and running, and clients keep submitting (they must get 503
# draining); the edits accepted before it finish, and the server exits 0.
"$CLIENT" --port "$server_port" --requests 64 --clients 8 --seed $((seed + 2000)) --image "$image" \
  --mask "$mask" --report "$tmp/drain.json" --edit-timeout "$edit_timeout" --allow-draining >"$tmp/drain.out" 2>&1 &
drain_client=$!
background+=("$drain_client")
waited=0
until grep -q '^progress:' "$tmp/drain.out" || [ $waited -ge 100 ]; do sleep 0.1; waited=$((waited + 1)); done
stop_server
rc=0
wait "$drain_client" || rc=$?
tail -n 14 "$tmp/drain.out"
[ $rc = 0 ] || fail "the client of the drained server found violations (exit $rc)"
refused=$(report_value "$tmp/drain.json" refused_draining)
ok "the drain answered every request correctly ($refused refused with 503 draining)"
[ "${refused:-0}" -gt 0 ] || echo "NOTE: the load ended before the SIGTERM took effect: no request met the drain"

# ---------------------------------------------------------------- (f) SIGKILL, restart, verify

step "(f) restart on the same store; SIGKILL during a load"
start_server killed
"$CLIENT" --port "$server_port" --requests "$requests" --clients "$clients" --seed $((seed + 3000)) --image "$image" \
  --mask "$mask" --report "$tmp/killed.json" --edit-timeout "$edit_timeout" --server-may-die >"$tmp/killed.out" 2>&1 &
killed_client=$!
background+=("$killed_client")
# Store writes in flight at the kill: new templates (other images, step counts) registered in a loop.
(
  i=0
  for i in $(seq 0 200); do
    name=(fig mountains dandelions)
    curl -s -o /dev/null --max-time 60 "http://127.0.0.1:$server_port/v1/templates" \
      -F image=@"$repo/samples/images/${name[i % 3]}.jpg" -F mask=@"$repo/samples/masks/${name[i % 3]}.png" \
      -F steps=$((1 + i / 3)) || true
  done
) &
registrations=$!
background+=("$registrations")
sleep "$kill_after"
kill -0 "$server_pid" 2>/dev/null || fail "server 'killed' died before the SIGKILL"
in_flight=$(metrics | grep -E '^flashps_(queue_depth|running_batch_size|http_connections) ' | tr '\n' ' ' || true)
kill -KILL "$server_pid"
killed_at=$(date +%s.%N)
wait "$server_pid" 2>/dev/null || true
server_pid=""
ok "SIGKILL after $kill_after s of load ($in_flight)"
rc=0
wait "$killed_client" || rc=$?
kill "$registrations" 2>/dev/null || true
wait "$registrations" 2>/dev/null || true
tail -n 14 "$tmp/killed.out"
[ $rc = 0 ] || fail "the client found violations before the kill (exit $rc)"
check_sanitizers killed  # memory errors before the kill would be there; leaks cannot be

step "(f) restart after the SIGKILL"
start_server restarted
echo "restarted $(elapsed "$killed_at") s after the SIGKILL"
started=$(date +%s.%N)
verify_rc=0
verify=$(${server_env[@]+"${server_env[@]}"} "$FLASHPS" cache verify --json --quiet --cache-dir "$store" 2>"$tmp/verify.err") || verify_rc=$?
echo "cache verify: $(tr -d '\n ' <<<"$verify")"
[ $verify_rc = 0 ] || fail "flashps cache verify exited $verify_rc: $verify $(cat "$tmp/verify.err")"
grep -q '"damaged": 0' <<<"$verify" || fail "flashps cache verify found damage after the SIGKILL: $verify"
check_sanitizers verify
ok "the store verifies clean after the SIGKILL ($(elapsed "$started") s)"
"$FLASHPS" cache stats --cache-dir "$store" 2>/dev/null | head -n 5 || true
[ "$(http_code /readyz)" = 200 ] || fail "the restarted server's /readyz is not 200"
plain_edit
grep -q '"cache_hit":true' <<<"$view" || fail "after the restart, an edit did not reuse the template registered in (a): $view"
ok "/readyz 200; a plain edit succeeds and reuses a template registered before the SIGKILL"
load after_restart $((requests / 10 < 16 ? 16 : requests / 10)) 8 $((seed + 4000)) --check-metrics
stop_server

echo
echo "PASS: http_load_faults ($requests requests x 2 rounds, $clients clients) in $(elapsed "$t0") s"
