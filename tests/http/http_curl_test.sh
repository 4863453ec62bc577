#!/usr/bin/env bash
# `flashps serve` end to end with the real curl, on loopback only: every endpoint (OpenAI
# /v1/images/edits, the native /v1/edits with status, events, cancel and result, templates,
# health, readiness, metrics) and every error answer (the JSON error shape, 400/401/404/409/413/
# 415/422/429/503/504), API keys, the queue and connection caps, draining on SIGTERM and SIGINT
# (exit 0), the access log, and clients that stop mid-upload or never finish their headers.
# One server for most checks, three short-lived ones for options that change its behaviour.
# JSON is read with node (tests/http/http_test_tool.mjs): no python3 or jq needed.
# Usage: http_curl_test.sh PATH_TO_FLASHPS   (exit 77: skipped, a tool is missing)
set -euo pipefail

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 PATH_TO_FLASHPS (an executable)" >&2
  exit 2
fi
FLASHPS=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
samples=$(cd "$here/../../samples" && pwd)
tool=$here/http_test_tool.mjs
image=$samples/images/autumn.jpg      # 768x512 JPEG
white_mask=$samples/masks/autumn.png  # 768x512 grey PNG, white = regenerate (no alpha)
small_mask=$samples/masks/fig.png     # 512x512
export FLASHPS_THREADS=${FLASHPS_THREADS:-2}
unset FLASHPS_CACHE_DIR FLASHPS_MODEL
for needed in curl node timeout base64 gzip; do
  command -v "$needed" >/dev/null || { echo "skipped: needs $needed" >&2; exit 77; }
done

tmp=$(mktemp -d)
# A script's background jobs ignore SIGINT (no job control), and the server rightly keeps an
# ignored SIGINT ignored: give it the default back (GNU env), else stop that server with SIGTERM.
default_signals=() interrupt=TERM
if env --default-signal=INT true 2>/dev/null; then
  default_signals=(env --default-signal=INT)
  interrupt=INT
fi
declare -A server_pid=() server_port=()
background=()  # pids of curls left running in the background
stream_pids=()
checks=0

# ---------------------------------------------------------------- helpers

ok() {
  checks=$((checks + 1))
  echo "ok $checks - $*"
}

# Fails the test: the reason, the last response (status line, headers, body) and the server's stderr.
fail() {
  echo "FAIL: $*"
  if [ -s "$tmp/headers" ]; then
    echo "--- last response headers:"
    tr -d '\r' <"$tmp/headers" | head -n 30
  fi
  if [ -s "$tmp/body" ]; then
    echo "--- last response body:"
    head -c 3000 "$tmp/body" | tr -c '[:print:]\n' '?'
    echo
  fi
  local name
  for name in "${!server_pid[@]}"; do
    if ! kill -0 "${server_pid[$name]}" 2>/dev/null; then
      local rc=0
      wait "${server_pid[$name]}" || rc=$?
      echo "--- server '$name' is no longer running: exit status $rc$( ((rc > 128)) && echo " (signal $((rc - 128)))")"
      unset "server_pid[$name]"
    fi
    if [ -s "$tmp/$name/err" ]; then
      echo "--- server '$name' stderr (tail):"
      tail -n 20 "$tmp/$name/err"
    fi
  done
  exit 1
}

cleanup() {
  local status=$? pid name rc waited
  trap - EXIT
  set +e
  for pid in "${background[@]}"; do kill "$pid" 2>/dev/null; done
  for name in "${!server_pid[@]}"; do
    pid=${server_pid[$name]}
    kill -TERM "$pid" 2>/dev/null
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt 300 ]; do sleep 0.1; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
      echo "FAIL: server '$name' still running 30 s after SIGTERM: killed"
      kill -KILL "$pid" 2>/dev/null
      status=1
    fi
    wait "$pid"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL: server '$name' exited $rc (expected 0 after SIGTERM)"
      status=1
    fi
  done
  wait 2>/dev/null
  rm -rf "$tmp"
  exit $status
}
trap cleanup EXIT

# start_server NAME [serve options...]: starts `flashps serve` on 127.0.0.1, a free port, and
# waits (up to 120 s: the model loads first) for its --port-file. Sets $url to it.
start_server() {
  local name=$1
  shift
  local dir=$tmp/$name port=""
  mkdir -p "$dir"
  "${default_signals[@]}" "$FLASHPS" serve --listen 127.0.0.1:0 --port-file "$dir/port" --cache-dir "$dir/store" \
    --access-log "$dir/access.log" --quiet "$@" >"$dir/out" 2>"$dir/err" &
  server_pid[$name]=$!
  local deadline=$((SECONDS + 120))
  # `read` succeeds only on a whole line: the port and its newline.
  until [ -f "$dir/port" ] && read -r port <"$dir/port" && [[ $port =~ ^[0-9]+$ ]]; do
    kill -0 "${server_pid[$name]}" 2>/dev/null || fail "server '$name' exited before listening: $(tail -n 5 "$dir/err")"
    [ $SECONDS -lt $deadline ] || fail "server '$name' wrote no port file in 120 s"
    sleep 0.2
  done
  server_port[$name]=$port
  use_server "$name"
  ok "server '$name' listening on 127.0.0.1:$port ($*)"
}

use_server() {
  server=$1
  url=http://127.0.0.1:${server_port[$1]}
}

# stop_server NAME SIGNAL MAX_SECONDS: the server exits 0 within MAX_SECONDS of the signal.
stop_server() {
  local name=$1 signal=$2 max=$3 pid=${server_pid[$1]} rc=0
  local start=$SECONDS
  kill -"$signal" "$pid"
  while kill -0 "$pid" 2>/dev/null; do
    [ $((SECONDS - start)) -le "$max" ] || fail "server '$name' still running $max s after SIG$signal"
    sleep 0.1
  done
  wait "$pid" || rc=$?
  unset "server_pid[$name]"
  [ $rc -eq 0 ] || fail "server '$name' exited $rc after SIG$signal (expected 0): $(tail -n 5 "$tmp/$name/err")"
  ok "server '$name' exited 0 $((SECONDS - start)) s after SIG$signal"
}

# request WANT WHAT PATH [curl options...]: one curl to the current server; the body lands in
# $tmp/body, the headers in $tmp/headers. Every request carries an X-Request-Id, recorded per
# server for the access-log check.
request_number=0
request() {
  local want=$1 what=$2 path=$3 code
  shift 3
  request_number=$((request_number + 1))
  request_id=curltest-$request_number
  echo "$request_id" >>"$tmp/$server/request_ids"
  rm -f "$tmp/body" "$tmp/headers"
  code=$(curl -sS -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' --max-time "${curl_seconds:-60}" \
    -H "X-Request-Id: $request_id" "$@" "$url$path" 2>"$tmp/curl_err") || true
  [ "$code" = "$want" ] || fail "$what: expected HTTP $want, got $code $(head -c 300 "$tmp/curl_err")"
  ok "$what: HTTP $code"
}

# The value of a response header (case-insensitive name), or failure when absent.
header_value() {
  tr -d '\r' <"$tmp/headers" | awk -v name="$(tr '[:upper:]' '[:lower:]' <<<"$1")" '
    { split($0, kv, ": "); if (tolower(kv[1]) == name) { sub(/^[^:]*: /, ""); print; found = 1; exit } }
    END { exit !found }'
}

# js EXPR [FILE]: EXPR with j = the response body (or FILE) parsed as JSON.
# (Used inside $(...): it reports on stderr and returns non-zero rather than calling fail.)
js() { node "$tool" eval "${2:-$tmp/body}" "$1"; }

# expect WHAT EXPR [FILE]: EXPR is true of the body.
expect() {
  [ "$(js "$2" "${3:-$tmp/body}")" = true ] || fail "$1: expected $2"
  ok "$1"
}

# error_request STATUS PARAM WHAT PATH [curl options...]: the answer is STATUS with the JSON error
# shape {"error": {"message", "type", "param", "code"}}; PARAM "-" when any param will do.
error_request() {
  local status=$1 param=$2 what=$3
  shift 3
  request "$status" "$what" "$@"
  [ "$(js "typeof j.error === 'object' && typeof j.error.message === 'string' && j.error.message.length > 0 &&
           typeof j.error.type === 'string' && j.error.type.length > 0")" = true ] ||
    fail "$what: the body lacks error.message / error.type"
  if [ "$param" != - ]; then
    [ "$(js "j.error.param")" = "$param" ] || fail "$what: expected error.param '$param', got '$(js j.error.param)'"
  fi
  header_value Content-Type | grep -q '^application/json' || fail "$what: the error is not application/json"
}

# png_size FILE: WIDTHxHEIGHT of a PNG.
png_size() { node "$tool" size "$1" 2>&1 || true; }

# metric NAME_WITH_LABELS: its value in the last /metrics body.
metric() {
  awk -v name="$1" '$1 == name { print $2; found = 1 } END { exit !found }' "$tmp/body" || { echo "no metric $1" >&2; return 1; }
}

# wait_finished ID [SECONDS]: polls the edit's status until finished; its JSON lands in $tmp/body.
wait_finished() {
  local id=$1 deadline=$((SECONDS + ${2:-120}))
  while :; do
    curl -sS -o "$tmp/body" --max-time 10 "$url/v1/edits/$id" || true
    [ "$(js "j.finished === true")" = true ] && return 0
    [ $SECONDS -lt $deadline ] || fail "edit $id not finished after ${2:-120} s"
    sleep 0.2
  done
}

# wait_status ID STATUS [SECONDS]: polls until the edit's status is STATUS.
wait_status() {
  local id=$1 want=$2 deadline=$((SECONDS + ${3:-60}))
  while :; do
    curl -sS -o "$tmp/body" --max-time 10 "$url/v1/edits/$id" || true
    [ "$(js "j.status")" = "$want" ] && return 0
    [ "$(js "j.finished === true")" = true ] && fail "edit $id finished before it was $want"
    [ $SECONDS -lt $deadline ] || fail "edit $id not $want after ${3:-60} s"
    sleep 0.1
  done
}

# submit_json WHAT KEY=VALUE... (@file = base64 of file): POST /v1/edits, expects 202; sets $edit_id.
submit_json() {
  local what=$1
  shift
  node "$tool" json "$tmp/submit.json" "$@"
  request 202 "$what" /v1/edits -H 'Content-Type: application/json' --data-binary @"$tmp/submit.json" \
    "${auth[@]}"
  edit_id=$(js j.id) || fail "$what: no id in the answer"
  [[ $edit_id =~ ^edit_[0-9a-f]{16}$ ]] || fail "$what: id '$edit_id' is not edit_ and 16 hex digits"
}
auth=()

# ---------------------------------------------------------------- inputs

node "$tool" mask 768 512 300 100 500 300 "$tmp/alpha_mask.png"  # transparent = edit (OpenAI)
node "$tool" header 60000 60000 "$tmp/huge.png"                  # declares 3.6 gigapixels
head -c 2000 "$image" >"$tmp/truncated.jpg"
for i in $(seq 1 200); do printf 'this is not an image, '; done >"$tmp/corrupt.bin"
head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' 'a' >"$tmp/two_mb.bin"
printf -- '--XYZ\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nhello\r\n--XYZ\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nunterminated' \
  >"$tmp/bad_multipart.txt"
long_prompt=$(printf 'a%.0s' $(seq 1 101))
# A piece of the image's base64 (from its middle: JPEG headers are alike) the access log must not hold.
image_b64_piece=$(base64 -w0 "$image" | cut -c 50001-50060)

# ---------------------------------------------------------------- a non-loopback address needs keys

rc=0
timeout 120 "$FLASHPS" serve --listen 0.0.0.0:0 --port-file "$tmp/open.port" --cache-dir "$tmp/open_store" --quiet \
  >"$tmp/open.out" 2>"$tmp/open.err" || rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "serve --listen 0.0.0.0:0 without --api-key-file: exit $rc (expected a failure at start)"
grep -q -- '--api-key-file' "$tmp/open.err" "$tmp/open.out" ||
  fail "serve --listen 0.0.0.0:0: the message does not mention --api-key-file: $(cat "$tmp/open.err")"
[ ! -s "$tmp/open.port" ] || fail "serve --listen 0.0.0.0:0 wrote a port file"
ok "serve --listen 0.0.0.0:0 without --api-key-file exits $rc naming --api-key-file"

# ================================================================ the main server

start_server main --max-prompt-chars 100 --max-images 4 --max-batch 1

# ---------------------------------------------------------------- operations

request 200 "GET /healthz" /healthz
expect "/healthz says ok" 'j.status === "ok"'
request 200 "GET /readyz" /readyz
expect "/readyz says ready" 'j.status === "ready"'
[ -n "$(header_value X-Request-Id)" ] || fail "no X-Request-Id header"
[ "$(header_value X-Request-Id)" = "$request_id" ] || fail "X-Request-Id not echoed: $(header_value X-Request-Id)"
ok "the client's X-Request-Id is echoed"
request 200 "GET /metrics" /metrics
for name in flashps_queue_depth flashps_running_batch_size 'flashps_edits_total{outcome="done"}' \
  flashps_step_seconds_bucket flashps_cache_hits_total flashps_cache_bytes_loaded_total; do
  grep -qF "$name" "$tmp/body" || fail "/metrics lacks $name"
done
ok "/metrics has queue depth, batch size, outcomes, step histogram, cache counters"
done_before=$(metric 'flashps_edits_total{outcome="done"}')
request 200 "GET /v1/models" /v1/models
expect "/v1/models lists one model" 'j.object === "list" && j.data.length === 1 && typeof j.data[0].id === "string"'

# ---------------------------------------------------------------- OpenAI /v1/images/edits

request 200 "images/edits b64_json" /v1/images/edits -F image=@"$image" -F mask=@"$tmp/alpha_mask.png" \
  -F prompt=x -F response_format=b64_json
expect "images/edits answers one b64_json image" 'j.data.length === 1 && j.data[0].b64_json.length > 1000 && j.created > 0'
js 'j.data[0].b64_json' | base64 -d >"$tmp/openai.png"
[ "$(png_size "$tmp/openai.png")" = 768x512 ] || fail "b64_json is not a 768x512 PNG: $(png_size "$tmp/openai.png")"
ok "b64_json decodes to a 768x512 PNG"
header_value Server-Timing | grep -q 'edit;dur=' || fail "no Server-Timing header with edit;dur"
ok "images/edits reports Server-Timing"

request 200 "images/edits response_format=url" /v1/images/edits -F image=@"$image" -F mask=@"$tmp/alpha_mask.png" \
  -F prompt=x -F response_format=url
result_url=$(js 'j.data[0].url')
[[ $result_url == http://127.0.0.1:${server_port[main]}/v1/edits/edit_*/result ]] || fail "unexpected url '$result_url'"
request 200 "GET the url answer" "${result_url#"$url"}"
header_value Content-Type | grep -q '^image/png' || fail "the url's result is not image/png: $(header_value Content-Type)"
[ "$(png_size "$tmp/body")" = 768x512 ] || fail "the url's result is not a 768x512 PNG"
ok "the url's result is an image/png of 768x512"

request 200 "images/edits n=2" /v1/images/edits -F image=@"$image" -F mask=@"$tmp/alpha_mask.png" -F prompt=x \
  -F n=2 -F response_format=b64_json
expect "n=2 gives 2 images" 'j.data.length === 2 && j.data.every((d) => d.b64_json.startsWith("iVBORw0KGgo"))'

# stream=true: OpenAI's image edit events, partial images from the step previews, then the result.
request 200 "images/edits stream=true partial_images=2" /v1/images/edits -N -F image=@"$image" \
  -F mask=@"$tmp/alpha_mask.png" -F prompt=x -F stream=true -F partial_images=2 -F steps=4
header_value Content-Type | grep -q '^text/event-stream' || fail "stream=true: not text/event-stream"
summary=$(node "$tool" openai-sse "$tmp/body" 2 768x512 2>&1) || fail "stream=true: $summary"
ok "stream=true: $summary"
error_request 400 n "images/edits stream=true with n=2" /v1/images/edits -F image=@"$image" \
  -F mask=@"$tmp/alpha_mask.png" -F prompt=x -F stream=true -F n=2
error_request 400 partial_images "images/edits partial_images=4" /v1/images/edits -F image=@"$image" \
  -F mask=@"$tmp/alpha_mask.png" -F prompt=x -F stream=true -F partial_images=4

error_request 422 n "images/edits n=99" /v1/images/edits -F image=@"$image" -F mask=@"$tmp/alpha_mask.png" -F prompt=x -F n=99
error_request 422 size "images/edits size=1024x1024 for a 768x512 image" /v1/images/edits -F image=@"$image" \
  -F mask=@"$tmp/alpha_mask.png" -F prompt=x -F size=1024x1024
error_request 400 response_format "images/edits response_format=gif" /v1/images/edits -F image=@"$image" \
  -F mask=@"$tmp/alpha_mask.png" -F prompt=x -F response_format=gif
error_request 400 mask "images/edits with a mask without alpha" /v1/images/edits -F image=@"$image" \
  -F mask=@"$white_mask" -F prompt=x
error_request 400 mask "images/edits with a 512x512 mask for a 768x512 image" /v1/images/edits -F image=@"$image" \
  -F mask=@"$small_mask" -F prompt=x
error_request 400 image "images/edits without an image" /v1/images/edits -F mask=@"$tmp/alpha_mask.png" -F prompt=x
error_request 415 - "images/edits as text/plain" /v1/images/edits -H 'Content-Type: text/plain' --data hello
error_request 400 - "images/edits with a multipart body that never closes" /v1/images/edits \
  -H 'Content-Type: multipart/form-data; boundary=XYZ' --data-binary @"$tmp/bad_multipart.txt"
error_request 400 image "images/edits with a truncated JPEG" /v1/images/edits -F image=@"$tmp/truncated.jpg" \
  -F mask=@"$tmp/alpha_mask.png" -F prompt=x
head -c 2000 "$tmp/openai.png" >"$tmp/truncated.png"
error_request 400 image "images/edits with a truncated PNG" /v1/images/edits -F image=@"$tmp/truncated.png" \
  -F mask=@"$tmp/alpha_mask.png" -F prompt=x
error_request 400 image "images/edits with corrupt bytes" /v1/images/edits -F image=@"$tmp/corrupt.bin" \
  -F mask=@"$tmp/alpha_mask.png" -F prompt=x
error_request 413 image "images/edits with an image declaring 60000x60000" /v1/images/edits -F image=@"$tmp/huge.png" \
  -F prompt=x
error_request 422 prompt "images/edits with a 101-character prompt (--max-prompt-chars 100)" /v1/images/edits \
  -F image=@"$image" -F mask=@"$tmp/alpha_mask.png" -F prompt="$long_prompt"
# A chunked body is read (counted against --max-body-mb as it arrives); bodies without a length
# and compressed ones are not.
request 200 "images/edits with a chunked body" /v1/images/edits -H 'Transfer-Encoding: chunked' \
  -F image=@"$image" -F mask=@"$tmp/alpha_mask.png" -F prompt=x -F steps=1
printf '{"prompt": "x"}' | gzip -c >"$tmp/gzipped.json" 2>/dev/null || printf 'not really gzip' >"$tmp/gzipped.json"
error_request 415 - "POST /v1/edits with Content-Encoding: gzip" /v1/edits -H 'Content-Type: application/json' \
  -H 'Content-Encoding: gzip' --data-binary @"$tmp/gzipped.json"
# raw_http REQUEST_TEXT: sends it on one connection (printf escapes), prints all the server answers.
# (In a subshell ignoring SIGPIPE: the server may close before the whole request is written.)
raw_http() {
  (
    trap '' PIPE
    exec 3<>"/dev/tcp/127.0.0.1/${server_port[$server]}"
    printf %b "$1" >&3 2>/dev/null || true
    timeout 5 cat <&3 | tr -d '\r'
  ) || true
}
raw_http 'POST /v1/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n' >"$tmp/raw.txt"
head -n 1 "$tmp/raw.txt" | grep -q '^HTTP/1.1 411' || fail "a POST without Content-Length: $(head -c 300 "$tmp/raw.txt")"
ok "a POST without Content-Length gets 411"
# A chunked body holding a second request: one answer (415: the body is no form), the body never
# taken as a request; nor are bytes after it.
raw_http 'POST /v1/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n2e\r\nGET /v1/smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n\r\n0\r\n\r\nGET /v1/smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' \
  >"$tmp/raw.txt"
[ "$(grep -c '^HTTP/1.1 ' "$tmp/raw.txt")" = 1 ] && head -n 1 "$tmp/raw.txt" | grep -q '^HTTP/1.1 415' ||
  fail "a chunked body holding a request: expected one 415 answer, got: $(grep '^HTTP/1.1 ' "$tmp/raw.txt")"
ok "a chunked body holding a request gets one answer, its body is not served as a request"
# Both framings at once (how requests are smuggled past a proxy): refused.
raw_http 'POST /v1/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' >"$tmp/raw.txt"
head -n 1 "$tmp/raw.txt" | grep -q '^HTTP/1.1 400' || fail "Content-Length with Transfer-Encoding: $(head -c 300 "$tmp/raw.txt")"
ok "Content-Length and Transfer-Encoding together get 400"
error_request 404 - "GET an unknown route" /v1/nothing-here
error_request 404 - "POST an unknown route" /v1/nothing-here -X POST --data x

# ---------------------------------------------------------------- native /v1/edits

submit_json "POST /v1/edits (JSON, base64 image and white mask)" image=@"$image" mask=@"$white_mask" steps=1 prompt=x
[ "$(header_value Location)" = "/v1/edits/$edit_id" ] || fail "Location '$(header_value Location)' is not /v1/edits/$edit_id"
ok "202 with id $edit_id and its Location"
first_edit=$edit_id
wait_finished "$edit_id"
expect "the edit ends done after >= 1 step" 'j.outcome === "done" && j.status === "done" && j.steps >= 1 && j.stats.steps_run >= 1'
request 200 "GET its result" "/v1/edits/$edit_id/result"
header_value Content-Type | grep -q '^image/png' || fail "the result is not image/png"
[ "$(png_size "$tmp/body")" = 768x512 ] || fail "the result is not a 768x512 PNG: $(png_size "$tmp/body")"
ok "the result is an image/png of 768x512"
request 200 "GET /v1/edits" /v1/edits
expect "the list holds the edit" "j.object === 'list' && j.data.some((e) => e.id === '$first_edit' && e.outcome === 'done')"
error_request 404 id "GET an unknown edit" /v1/edits/edit_0000000000000000
error_request 404 id "GET an unknown edit's result" /v1/edits/edit_0000000000000000/result
error_request 404 id "DELETE an unknown edit" /v1/edits/edit_0000000000000000 -X DELETE
node "$tool" json "$tmp/no_mask.json" image=@"$image" steps=1
error_request 400 mask "POST /v1/edits without a mask" /v1/edits -H 'Content-Type: application/json' \
  --data-binary @"$tmp/no_mask.json"
error_request 400 - "POST /v1/edits with a JSON body that is not JSON" /v1/edits -H 'Content-Type: application/json' \
  --data '{"image": '

request 202 "POST /v1/edits (multipart)" /v1/edits -F image=@"$image" -F mask=@"$white_mask" -F steps=1
edit_id=$(js j.id)
wait_finished "$edit_id"
expect "the multipart edit ends done" 'j.outcome === "done"'

request 200 "GET /metrics after the edits" /metrics
done_after=$(metric 'flashps_edits_total{outcome="done"}')
[ "$done_after" -ge $((done_before + 6)) ] || fail "edits_total{outcome=done} went $done_before -> $done_after (6 edits done)"
ok "edits_total{outcome=\"done\"} went $done_before -> $done_after"

# ---------------------------------------------------------------- cancel, a running edit's result, events
# The server runs one edit at a time (--max-batch 1): an edit submitted while another runs waits,
# so its event stream shows it waiting, then running, then done.

submit_json "POST /v1/edits with 1000 steps" image=@"$image" mask=@"$white_mask" steps=1000
long_id=$edit_id
wait_status "$long_id" running
ok "the 1000-step edit is running"
error_request 409 id "GET the result of a running edit" "/v1/edits/$long_id/result"
submit_json "POST /v1/edits behind it, for its events" image=@"$image" mask=@"$white_mask" steps=4
curl -sS -N --max-time 120 -o "$tmp/events.txt" "$url/v1/edits/$edit_id/events" 2>"$tmp/events.err" &
events_pid=$!
background+=("$events_pid")
deadline=$((SECONDS + 30))
until grep -q '^event: ' "$tmp/events.txt" 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "no event on the stream of $edit_id in 30 s"
  sleep 0.1
done
request 200 "DELETE the running edit" "/v1/edits/$long_id" -X DELETE
wait_finished "$long_id" 60
expect "the deleted edit ends cancelled" 'j.outcome === "cancelled"'
error_request 409 id "GET a cancelled edit's result" "/v1/edits/$long_id/result"
rc=0
wait "$events_pid" || rc=$?
[ $rc -eq 0 ] || fail "the event stream did not end by itself (curl exit $rc): $(head -c 2000 "$tmp/events.txt")"
summary=$(node "$tool" sse "$tmp/events.txt" waiting 2>&1) || fail "events: $summary"
ok "events in order (waiting, running, done last), steps never decrease, the stream ends after done: $summary"

submit_json "POST /v1/edits with deadline_seconds=0.001 and 200 steps" image=@"$image" mask=@"$white_mask" steps=200 \
  deadline_seconds=0.001
wait_finished "$edit_id" 60
expect "the edit ends deadline_exceeded (or failed naming the deadline)" \
  'j.outcome === "deadline_exceeded" || (j.outcome === "failed" && /deadline/i.test(j.error))'
error_request 504 id "GET a deadline-exceeded edit's result" "/v1/edits/$edit_id/result"

# ---------------------------------------------------------------- templates

template_image=$samples/images/dandelions.jpg
node "$tool" json "$tmp/template.json" image=@"$template_image" steps=1
request 201 "POST /v1/templates (image only)" /v1/templates -H 'Content-Type: application/json' \
  --data-binary @"$tmp/template.json"
template_hash=$(js j.template_hash)
[[ $template_hash =~ ^[0-9a-f]{16,64}$ ]] || fail "template_hash '$template_hash' is not hex"
ok "registered template $template_hash"
request 200 "GET /v1/templates" /v1/templates
expect "the list holds the template" "j.data.some((t) => t.template_hash === '$template_hash')"
submit_json "POST /v1/edits of the template's image" image=@"$template_image" mask=@"$samples/masks/dandelions.png" steps=1
wait_finished "$edit_id"
expect "the edit of a registered template reports cache_hit" \
  "j.outcome === 'done' && j.stats.cache_hit === true && j.stats.template_hash === '$template_hash'"
request 200 "GET /metrics after a template hit" /metrics
[ "$(metric flashps_cache_hits_total)" -ge 1 ] || fail "flashps_cache_hits_total stays 0 after a hit"
[ "$(metric flashps_cache_bytes_loaded_total)" -gt 0 ] || fail "flashps_cache_bytes_loaded_total stays 0 after a hit"
ok "cache hits and bytes loaded counted"
request 200 "DELETE /v1/templates/${template_hash:0:8}" "/v1/templates/${template_hash:0:8}" -X DELETE
expect "the template is removed" 'j.removed >= 1'
request 200 "GET /v1/templates after the delete" /v1/templates
expect "the list no longer holds it" "!j.data.some((t) => t.template_hash === '$template_hash')"

# ---------------------------------------------------------------- clients that go away or stall

rc=0
curl -sS -o /dev/null --limit-rate 10k --max-time 1 -F image=@"$tmp/two_mb.bin" -F prompt=x \
  "$url/v1/images/edits" 2>/dev/null || rc=$?
[ $rc -eq 28 ] || fail "a 2 MB upload at 10 kB/s with --max-time 1: curl exit $rc (expected 28, timed out)"
curl_seconds=5 request 200 "GET /healthz after a client left mid-upload" /healthz
# Headers that never end, and headers announcing a body that never comes.
exec {stall_a}<>"/dev/tcp/127.0.0.1/${server_port[main]}"
(trap '' PIPE; printf 'POST /v1/edits HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&"$stall_a") || true
exec {stall_b}<>"/dev/tcp/127.0.0.1/${server_port[main]}"
(trap '' PIPE; printf 'POST /v1/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{' \
  >&"$stall_b") || true
sleep 1
curl_seconds=5 request 200 "GET /healthz while two clients stall" /healthz
curl_seconds=5 request 200 "GET /v1/edits while two clients stall" /v1/edits
exec {stall_a}>&- {stall_b}>&-

# ---------------------------------------------------------------- the access log

log=$tmp/main/access.log
last_id=$request_id
deadline=$((SECONDS + 5))
until grep -qF "\"$last_id\"" "$log" 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "the access log has no line for $last_id 5 s after its answer (not flushed per line?)"
  sleep 0.1
done
ok "the access log is written as requests are answered"
node - "$log" "$tmp/main/request_ids" <<'JS' || fail "access log check failed"
const fs = require('fs');
const [log, idsFile] = process.argv.slice(2);
const lines = fs.readFileSync(log, 'utf8').split('\n').filter((line) => line.length > 0);
const count = new Map();
lines.forEach((line, i) => {
  let entry;
  try { entry = JSON.parse(line); } catch (error) { console.error(`line ${i + 1} is not JSON: ${line}`); process.exit(1); }
  for (const field of ['request_id', 'method', 'path', 'status'])
    if (entry[field] === undefined) { console.error(`line ${i + 1} lacks ${field}: ${line}`); process.exit(1); }
  if (typeof entry.status !== 'number') { console.error(`line ${i + 1}: status is not a number: ${line}`); process.exit(1); }
  count.set(entry.request_id, (count.get(entry.request_id) || 0) + 1);
});
for (const id of fs.readFileSync(idsFile, 'utf8').split('\n').filter(Boolean))
  if (count.get(id) !== 1) { console.error(`request ${id} has ${count.get(id) || 0} access log lines (expected 1)`); process.exit(1); }
JS
ok "every request has one JSON access-log line with request_id, method, path, status ($(wc -l <"$log") lines)"
grep -q '"path":"/v1/images/edits"' "$log" && grep -q '"status":413' "$log" || fail "the access log lacks the images/edits or 413 lines"
! grep -qF "$image_b64_piece" "$log" || fail "the access log holds the image's base64"
ok "the access log holds no image base64"

stop_server main TERM 30

# ================================================================ API keys, body limit, queue cap

api_key=flashps-test-key-0123456789abcde  # 32 characters
[ ${#api_key} -eq 32 ]
printf '# test key\n%s\n' "$api_key" >"$tmp/keys"
start_server guarded --api-key-file "$tmp/keys" --max-body-mb 1 --max-queue 1
request 200 "GET /healthz without a key" /healthz
request 200 "GET /readyz without a key" /readyz
error_request 401 - "GET /v1/models without a key" /v1/models
header_value WWW-Authenticate | grep -q '^Bearer' || fail "401 without 'WWW-Authenticate: Bearer'"
expect "401 is an authentication_error" 'j.error.type === "authentication_error"'
error_request 401 - "GET /v1/models with a wrong key" /v1/models -H "Authorization: Bearer wrong-key-wrong-key-wrong-key-xx"
error_request 401 - "GET /metrics without a key" /metrics
error_request 401 - "POST /v1/edits without a key" /v1/edits -H 'Content-Type: application/json' --data '{}'
auth=(-H "Authorization: Bearer $api_key")
request 200 "GET /v1/models with the key" /v1/models "${auth[@]}"
request 200 "GET /metrics with the key" /metrics "${auth[@]}"
error_request 413 - "POST 2 MB with --max-body-mb 1" /v1/images/edits "${auth[@]}" -F image=@"$tmp/two_mb.bin" -F prompt=x
# Without a key the refusal comes first: nothing about limits or routes for an unknown client.
auth_saved=("${auth[@]}")
auth=()
error_request 401 - "POST 2 MB without a key (401 before 413)" /v1/images/edits -F image=@"$tmp/two_mb.bin" -F prompt=x
error_request 401 - "POST to an unknown route without a key (401 before 404)" /v1/nothing-here --data x
auth=("${auth_saved[@]}")

# Six slow edits at once with --max-queue 1: some are refused 429 with Retry-After.
node "$tool" json "$tmp/slow.json" image=@"$image" mask=@"$white_mask" steps=1000
pids=()
for i in 1 2 3 4 5 6; do
  curl -sS -o "$tmp/queue_$i.body" -D "$tmp/queue_$i.headers" -w '%{http_code}' --max-time 60 "${auth[@]}" \
    -H "X-Request-Id: queue-$i" -H 'Content-Type: application/json' --data-binary @"$tmp/slow.json" \
    "$url/v1/edits" >"$tmp/queue_$i.code" 2>/dev/null &
  pids+=($!)
done
wait "${pids[@]}" || true
accepted=() refused=0
for i in 1 2 3 4 5 6; do
  code=$(cat "$tmp/queue_$i.code")
  case $code in
    202) accepted+=("$(node "$tool" eval "$tmp/queue_$i.body" j.id)") ;;
    429)
      refused=$((refused + 1))
      cp "$tmp/queue_$i.body" "$tmp/body" 2>/dev/null || : >"$tmp/body"
      cp "$tmp/queue_$i.headers" "$tmp/headers" 2>/dev/null || : >"$tmp/headers"
      [ -n "$(header_value Retry-After)" ] || fail "429 without Retry-After"
      expect "429 is a rate_limit_error" 'j.error.type === "rate_limit_error" && j.error.message.length > 0'
      ;;
    *)
      cp "$tmp/queue_$i.body" "$tmp/body" 2>/dev/null || : >"$tmp/body"
      cp "$tmp/queue_$i.headers" "$tmp/headers" 2>/dev/null || : >"$tmp/headers"
      fail "concurrent slow edit $i of 6 with --max-queue 1: HTTP $code (expected 202 or 429)"
      ;;
  esac
done
[ $refused -ge 1 ] || fail "six concurrent edits with --max-queue 1: none refused (${#accepted[@]} accepted)"
ok "six concurrent edits with --max-queue 1: ${#accepted[@]} accepted, $refused refused 429 with Retry-After"
request 200 "GET /metrics after refusals" /metrics "${auth[@]}"
[ "$(metric 'flashps_edits_total{outcome="rejected"}')" -ge $refused ] || fail "edits_total{outcome=rejected} below $refused"
ok "edits_total{outcome=\"rejected\"} counts the refusals"
for id in "${accepted[@]}"; do
  request 200 "DELETE accepted edit $id" "/v1/edits/$id" -X DELETE "${auth[@]}"
done
! grep -qF "$api_key" "$tmp/guarded/access.log" || fail "the access log holds the API key"
ok "the access log holds no API key"
auth=()
stop_server guarded "$interrupt" 30

# ================================================================ connection cap and drain

start_server capped --max-connections 2 --http-threads 2 --drain-seconds 3
submit_json "POST a long edit (1)" image=@"$image" mask=@"$white_mask" steps=1000
long_a=$edit_id
submit_json "POST a long edit (2)" image=@"$image" mask=@"$white_mask" steps=1000
long_b=$edit_id
for i in 1 2 3; do
  id=$long_a
  [ $i -eq 2 ] && id=$long_b
  curl -sS -N --max-time 120 -o "$tmp/stream_$i.txt" "$url/v1/edits/$id/events" 2>/dev/null &
  background+=($!)
  stream_pids[i]=$!
  sleep 0.3
done
# Two streams hold both connection slots (their first event arrived); the third was refused.
deadline=$((SECONDS + 30))
until [ "$(grep -l '^event: ' "$tmp"/stream_*.txt 2>/dev/null | wc -l)" -ge 2 ]; do
  [ $SECONDS -lt $deadline ] || fail "two event streams did not start in 30 s"
  sleep 0.1
done
ok "two event streams are open"
deadline=$((SECONDS + 10))
until [ "$(grep -l too_many_connections "$tmp"/stream_*.txt 2>/dev/null | wc -l)" -eq 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "the third stream was not refused 503 too_many_connections: $(head -c 300 "$tmp"/stream_*.txt)"
  sleep 0.1
done
ok "the third event stream was refused 503 (too_many_connections)"
error_request 503 - "a further request while 2 of --max-connections 2 are held" /v1/models
header_value Retry-After >/dev/null || fail "503 without Retry-After"
ok "503 comes with Retry-After"
# Health, readiness and metrics have their own workers: they answer while the cap is held.
request 200 "GET /healthz while 2 of --max-connections 2 are held" /healthz
request 200 "GET /metrics while 2 of --max-connections 2 are held" /metrics
for i in 1 2 3; do kill "${stream_pids[$i]}" 2>/dev/null || true; done
# The server notices a gone stream at its next event (each step): the slots free.
deadline=$((SECONDS + 30))
until [ "$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "$url/healthz" 2>/dev/null)" = 200 ]; do
  [ $SECONDS -lt $deadline ] || fail "connections not freed 30 s after the streams' clients left"
  sleep 0.2
done
ok "the connection slots free once the streams' clients leave"

# Drain: SIGTERM with two edits running; new edits get 503, /readyz 503, exit 0 within
# --drain-seconds 3 and a margin.
wait_status "$long_a" running
start=$SECONDS
kill -TERM "${server_pid[capped]}"
deadline=$((SECONDS + 5))
until [ "$(curl -sS -o "$tmp/body" -w '%{http_code}' --max-time 5 "$url/readyz" 2>/dev/null)" = 503 ]; do
  [ $SECONDS -lt $deadline ] || fail "/readyz not 503 within 5 s of SIGTERM"
  sleep 0.05
done
expect "/readyz says draining after SIGTERM" 'j.status === "draining"'
error_request 503 - "POST /v1/edits while draining" /v1/edits -F image=@"$image" -F mask=@"$white_mask" -F steps=1
request 200 "GET a running edit's status while draining" "/v1/edits/$long_b"
while kill -0 "${server_pid[capped]}" 2>/dev/null; do
  [ $((SECONDS - start)) -le 25 ] || fail "server still running 25 s after SIGTERM with --drain-seconds 3"
  sleep 0.1
done
rc=0
wait "${server_pid[capped]}" || rc=$?
unset "server_pid[capped]"
[ $rc -eq 0 ] || fail "drained server exited $rc (expected 0): $(tail -n 5 "$tmp/capped/err")"
ok "the draining server exited 0 $((SECONDS - start)) s after SIGTERM (--drain-seconds 3)"

echo "all $checks checks passed"
