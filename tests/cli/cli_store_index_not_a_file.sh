#!/usr/bin/env bash
# An index path that is not a regular file (a directory, a FIFO, a link to nothing where
# index.sqlite should be) never blocks a command: it is moved aside like an unreadable index
# (kept, named in the note) and an empty index started; where it cannot be moved (a read-only
# store: a read-only bind mount in a private mount namespace, skipped where refused) the store
# opens without an index, says how to recover, and every command still runs. Commands checked:
# cache ls/stats/verify/gc/evict, template register and serve (its /healthz).
# Usage: cli_store_index_not_a_file.sh PATH_TO_FLASHPS
set -uo pipefail
flashps="$1"
failures=0
unset FLASHPS_CACHE_DIR FLASHPS_MODEL
export FLASHPS_THREADS=2

pass() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
source "$(dirname "$0")/expect_error.sh"
segments_sum() { (cd "$1" && sha256sum ./*.seg 2>/dev/null | sort); }

# run_serve STORE: starts `flashps serve` on the store, asks /healthz, stops it; exit 0 if it answered.
run_serve() {
  local dir="$1" port_file="$work/port.$RANDOM" pid answered=1 waited=0
  "$flashps" serve --listen 127.0.0.1:0 --port-file "$port_file" --cache-dir "$dir" --quiet >/dev/null 2>"$work/err" &
  pid=$!
  while [ ! -s "$port_file" ] && kill -0 $pid 2>/dev/null && [ $waited -lt 600 ]; do
    sleep 0.2
    waited=$((waited + 1))
  done
  if [ -s "$port_file" ] && curl -sf --max-time 10 "http://127.0.0.1:$(cat "$port_file")/healthz" >/dev/null; then
    answered=0
  fi
  kill -TERM $pid 2>/dev/null
  wait $pid 2>/dev/null
  return $answered
}

# Run inside the private mount namespace: the store that cannot be changed.
read_only_cases() {
  mkdir "$work/ro"
  if ! mount --bind "$work/ro_source" "$work/ro" || ! mount -o remount,bind,ro "$work/ro"; then
    echo "skip: an index path that cannot be moved aside (mount refused)"
    return
  fi
  local command ok=1
  for command in "cache ls" "cache stats" "cache verify -q"; do
    # shellcheck disable=SC2086
    "$flashps" $command --cache-dir "$work/ro" >"$work/out" 2>"$work/err" || ok=0
    grep -q "note: the store opened without an index, .*index.sqlite is a directory, not the index, .*\`mv .*index.sqlite .*index.sqlite.aside\`.*\`flashps cache gc\`" "$work/err" || ok=0
  done
  [ $ok = 1 ] && pass "cache ls/stats/verify run on a read-only store whose index is a directory, naming the way out" ||
    fail "cache commands, index a directory on a read-only store: $(cat "$work/out" "$work/err")"
  expect_error "cache gc there is refused naming the way out" "so it cannot be repaired (.*is a directory, not the index.*\`mv " -- \
    cache gc --cache-dir "$work/ro"
  expect_error "cache evict there is refused naming the way out" "so nothing can be evicted (.*is a directory, not the index" -- \
    cache evict --max-size 0 --cache-dir "$work/ro"
  expect_error "template register there is refused naming the way out" \
    "so templates are not registered (.*is a directory, not the index" -- \
    template register -i "$work/a.png" --steps 1 -q --cache-dir "$work/ro"
  run_serve "$work/ro" && pass "serve starts and answers /healthz on that store" || fail "serve on that store: $(cat "$work/err")"
  if [ -d "$work/ro/index.sqlite" ] && [ "$(cat "$work/ro/index.sqlite/keep")" = kept ] &&
     [ "$(segments_sum "$work/ro/segments")" = "$original_segments" ]; then
    pass "the read-only store is unchanged"
  else
    fail "the read-only store changed"
  fi
}

if [ "${FLASHPS_STORE_TEST_NAMESPACE:-}" = 1 ]; then
  work="$STORE_TEST_WORK" original_segments="$STORE_TEST_SEGMENTS"
  read_only_cases
  exit $failures
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import struct, sys, zlib
def png(path, width, height, channels, pixel):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    colour = {1: 0, 3: 2}[channels]
    raw = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)) +
                           chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
png(sys.argv[1] + "/a.png", 64, 64, 3, lambda x, y: (4 * x, 4 * y, 128))
PY

# A store holding one registered template, then its index replaced by a directory holding a file.
"$flashps" template register -i "$work/a.png" --steps 1 -q --cache-dir "$work/store" >/dev/null || fail "template register"
original_segments=$(segments_sum "$work/store/segments")
[ -n "$original_segments" ] || fail "template register wrote a segment"
rm -f "$work/store/index.sqlite" "$work/store/index.sqlite-wal" "$work/store/index.sqlite-shm"
mkdir "$work/store/index.sqlite"
echo kept >"$work/store/index.sqlite/keep"

# broken NAME: a fresh copy of that store for one command.
broken() { cp -r "$work/store" "$work/$1" && echo "$work/$1"; }
moved_aside_note="note: .*index.sqlite was unreadable (it is a directory, not a file): moved to .*index.sqlite.corrupt-"
kept_intact() {  # STORE: the directory (with its file) and every segment kept
  local moved kept
  moved=$(ls -d "$1"/index.sqlite.corrupt-* 2>/dev/null | grep -v -- '-wal$\|-shm$')
  kept=$(ls -d "$1"/unindexed-* 2>/dev/null)
  [ -n "$moved" ] && [ "$(cat "$moved/keep" 2>/dev/null)" = kept ] && [ -n "$kept" ] &&
    [ "$(segments_sum "$kept")" = "$original_segments" ] && [ -f "$1/index.sqlite" ]
}

for command in "cache ls" "cache stats" "cache verify -q" "cache gc" "cache evict --max-size 0"; do
  dir=$(broken "case$RANDOM")
  # shellcheck disable=SC2086
  if "$flashps" $command --cache-dir "$dir" >"$work/out" 2>"$work/err" && grep -q "$moved_aside_note" "$work/err" &&
     kept_intact "$dir"; then
    pass "$command with a directory for its index: moved aside (kept), an empty index started"
  else
    fail "$command with a directory for its index: $(cat "$work/out" "$work/err")"
  fi
done
dir=$(broken register)
if "$flashps" template register -i "$work/a.png" --steps 1 -q --cache-dir "$dir" >/dev/null 2>"$work/err" &&
   grep -q "$moved_aside_note" "$work/err" && kept_intact "$dir" &&
   grep -q "^1 capture(s)" <<<"$("$flashps" cache ls --cache-dir "$dir" 2>/dev/null)"; then
  pass "template register with a directory for its index registers into a new index"
else
  fail "template register with a directory for its index: $(cat "$work/err")"
fi
dir=$(broken serve)
if run_serve "$dir" && kept_intact "$dir"; then
  pass "serve with a directory for its index starts and answers /healthz"
else
  fail "serve with a directory for its index: $(cat "$work/err")"
fi

# Other things that are not a file: a FIFO (SQLite would block reading it) and a link to nothing.
for kind in fifo dangling; do
  dir=$(broken "$kind")
  rm -r "$dir/index.sqlite"
  if [ $kind = fifo ]; then mkfifo "$dir/index.sqlite"; else ln -s "$work/nowhere" "$dir/index.sqlite"; fi
  expected=$([ $kind = fifo ] && echo "a FIFO" || echo "a symbolic link to nothing")
  if timeout 60 "$flashps" cache ls --cache-dir "$dir" >"$work/out" 2>"$work/err" &&
     grep -q "index.sqlite was unreadable (it is $expected, not a file): moved to" "$work/err" &&
     [ -f "$dir/index.sqlite" ]; then
    pass "cache ls with $expected for its index: moved aside"
  else
    fail "cache ls with $expected for its index: $(cat "$work/out" "$work/err")"
  fi
done

# A store where it cannot be moved: needs a read-only mount, in a private mount namespace.
cp -r "$work/store" "$work/ro_source"
unshare_flags="-m --propagation private"
[ "$(id -u)" -ne 0 ] && unshare_flags="-r $unshare_flags"
# shellcheck disable=SC2086
if unshare $unshare_flags true 2>/dev/null; then
  # shellcheck disable=SC2086
  FLASHPS_STORE_TEST_NAMESPACE=1 STORE_TEST_WORK="$work" STORE_TEST_SEGMENTS="$original_segments" \
    unshare $unshare_flags bash "$0" "$flashps"
  failures=$((failures + $?))
else
  echo "skip: an index path that cannot be moved aside (cannot create a mount namespace here)"
fi
[ $failures -eq 0 ] && echo "all checks passed" || echo "$failures failure(s)"
exit $((failures > 0))
