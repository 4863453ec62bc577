#!/usr/bin/env bash
# `flashps serve` started by socket activation, as flashps.socket starts it: systemd-socket-
# activate (systemd's tool for this) holds the port, starts the server at the first connection and
# passes the socket as fd 3 (LISTEN_PID, LISTEN_FDS). Checked: /healthz answers on that socket (the
# connection that started the server waits in the backlog meanwhile); the socket's own address
# decides whether keys are needed (0.0.0.0 without keys fails naming why, with
# FLASHPS_API_KEY_FILE it asks for them); two sockets are refused; SIGTERM still drains (exit 0).
# Usage: http_socket_activation.sh PATH_TO_FLASHPS   (exit 77: a tool is missing)
set -euo pipefail
[ $# -eq 1 ] && [ -x "$1" ] || { echo "usage: $0 PATH_TO_FLASHPS" >&2; exit 2; }
flashps=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
activate=$(command -v systemd-socket-activate || echo /lib/systemd/systemd-socket-activate)
[ -x "$activate" ] || { echo "skipped: needs systemd-socket-activate (Debian: systemd)" >&2; exit 77; }
command -v curl >/dev/null || { echo "skipped: needs curl" >&2; exit 77; }
export FLASHPS_THREADS=${FLASHPS_THREADS:-2}
unset FLASHPS_CACHE_DIR FLASHPS_MODEL FLASHPS_API_KEY_FILE LISTEN_PID LISTEN_FDS
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- server stderr:"
  cat "$tmp/stderr" 2>/dev/null || true
  exit 1
}

# Starts `systemd-socket-activate -l ADDRESS... flashps serve` in the background on a free port
# (tries random ones: the tool cannot report a port 0 it picked); sets $pid and $port.
activate_on() {  # HOST [SECOND_HOST]
  for _ in $(seq 1 20); do
    port=$((20000 + RANDOM % 40000))
    local listen=(-l "$1:$port")
    [ $# -gt 1 ] && listen+=(-l "$2:$((port + 1))")
    # The tool passes on only the variables named with -E (as a unit's Environment= would).
    local pass=(-E FLASHPS_THREADS)
    [ -n "${FLASHPS_API_KEY_FILE:-}" ] && pass+=(-E FLASHPS_API_KEY_FILE)
    "$activate" "${listen[@]}" "${pass[@]}" "$flashps" serve --quiet --cache-dir "$tmp/store" --access-log off \
      >"$tmp/stdout" 2>"$tmp/stderr" &
    pid=$!
    for _ in $(seq 1 100); do
      grep -q "Listening on" "$tmp/stderr" 2>/dev/null && return 0
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  fail "systemd-socket-activate did not listen on $1 (20 ports tried)"
}

# Waits for the server to end; sets $status.
wait_exit() {
  status=0
  wait "$pid" || status=$?
  pid=
}

# ---- loopback: no key needed; the first connection starts the server and is answered
activate_on 127.0.0.1
answer=$(curl -s --max-time 120 -w ' %{http_code}' "http://127.0.0.1:$port/healthz") || fail "no answer to /healthz"
[ "${answer##* }" = 200 ] || fail "/healthz answered $answer"
grep -q "on http://127.0.0.1:$port (socket from systemd)" "$tmp/stderr" || fail "the startup line does not name the socket"
models=$(curl -s --max-time 60 -w ' %{http_code}' "http://127.0.0.1:$port/v1/models" || true)
[ "${models##* }" = 200 ] || fail "/v1/models answered $models"
echo "ok - the server started by the first connection answers /healthz and /v1/models on the passed socket"
kill -TERM "$pid"
wait_exit
[ "$status" = 0 ] || fail "SIGTERM: exit status $status, not 0"
grep -q "flashps: stopped" "$tmp/stderr" || fail "SIGTERM did not drain and stop"
echo "ok - SIGTERM drains and exits 0"

# ---- every interface without keys: refused, naming the socket's address
activate_on 0.0.0.0
curl -s --max-time 120 "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 || true
wait_exit
[ "$status" = 1 ] || fail "0.0.0.0 without keys: exit status $status, not 1"
grep -q "listening on 0.0.0.0:$port (not loopback) needs API keys" "$tmp/stderr" || fail "the refusal does not say why"
echo "ok - a socket on 0.0.0.0 without keys is refused: $(grep -o 'listening on [^:]*:[0-9]* (not loopback) needs API keys' "$tmp/stderr")"

# ---- every interface with keys (FLASHPS_API_KEY_FILE, as the unit passes them): keys asked for
key=socket-activation-test-key-0123456789
echo "$key" >"$tmp/keys"
export FLASHPS_API_KEY_FILE=$tmp/keys  # what /etc/default/flashps sets for the unit
activate_on 0.0.0.0
health=$(curl -s --max-time 120 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz" || true)
[ "$health" = 200 ] || fail "/healthz with keys configured answered $health"
without=$(curl -s --max-time 60 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/models" || true)
with=$(curl -s --max-time 60 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/models" || true)
[ "$without" = 401 ] && [ "$with" = 200 ] || fail "/v1/models answered $without without the key, $with with it"
grep -q "(socket from systemd) (API key required)" "$tmp/stderr" || fail "the startup line does not say a key is required"
kill -TERM "$pid"
wait_exit
[ "$status" = 0 ] || fail "SIGTERM: exit status $status"
unset FLASHPS_API_KEY_FILE
echo "ok - on 0.0.0.0 with FLASHPS_API_KEY_FILE: /healthz 200, /v1/models 401 without the key, 200 with it"

# ---- two sockets: serve takes one
activate_on 127.0.0.1 127.0.0.1
curl -s --max-time 60 "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 || true
wait_exit
[ "$status" = 1 ] || fail "two sockets: exit status $status, not 1"
grep -q "LISTEN_FDS is '2'.*exactly one socket" "$tmp/stderr" || fail "two sockets: the refusal does not say why"
echo "ok - two sockets are refused, naming LISTEN_FDS"
