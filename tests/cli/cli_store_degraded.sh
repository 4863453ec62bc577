#!/usr/bin/env bash
# A damaged, read-only or full activation store never blocks editing or cleanup: an unreadable
# index is set aside (data kept) and every command runs; `edit --cache full` never opens the
# store; a read-only store serves cache hits and refuses writes naming the fix; on a full disk
# evict/rm/gc free space. Each case checks the exit code, the message and the data kept.
# The read-only and full-disk cases mount file systems in a private mount namespace (unshare);
# where that is not allowed they are skipped, saying so.
# Usage: cli_store_degraded.sh PATH_TO_FLASHPS
set -uo pipefail
flashps="$1"
failures=0
unset FLASHPS_CACHE_DIR FLASHPS_MODEL
export FLASHPS_THREADS=2

pass() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
source "$(dirname "$0")/expect_error.sh"
segments_sum() { (cd "$1" && sha256sum ./*.seg 2>/dev/null | sort); }
edit() { "$flashps" edit -i "$work/a.png" -m "$work/mask.png" -o "$work/out.png" --steps 1 -q "$@"; }

# Run inside the private mount namespace: the read-only and full-disk cases on the outer run's files.
mounted_cases() {
  # 2. A read-only store: a read-only bind mount (it binds root too, unlike permissions).
  cp -r "$work/store" "$work/ro_source"
  mkdir "$work/ro"
  if ! mount --bind "$work/ro_source" "$work/ro" || ! mount -o remount,bind,ro "$work/ro"; then
    echo "skip: read-only and full-disk stores (mount refused)"
    return
  fi
  local index_before ok command
  index_before=$(sha256sum <"$work/ro/index.sqlite")
  ok=1
  for command in "ls" "stats" "verify -q"; do
    # shellcheck disable=SC2086
    "$flashps" cache $command --cache-dir "$work/ro" >/dev/null 2>"$work/err" || ok=0
    grep -q "^flashps: note: .*/ro is read-only (Read-only file system; remount its file system read-write, or use another store with --cache-dir or FLASHPS_CACHE_DIR): cached templates are reused" "$work/err" || ok=0
  done
  [ $ok = 1 ] && pass "cache ls/stats/verify work on a read-only store, with a note naming the fix" ||
    fail "cache commands on a read-only store: $(cat "$work/err")"
  if edit --json --cache-dir "$work/ro" 2>"$work/err" | grep -q '"cache_hit": true'; then
    pass "an edit on a read-only store reuses its template (cache hit)"
  else
    fail "edit on a read-only store: $(cat "$work/err")"
  fi
  expect_error "template register on a read-only store is refused, naming the fix" \
    "ro is read-only, so templates are not registered (Read-only file system; remount" -- \
    template register -i "$work/mask.png" --steps 1 -q --cache-dir "$work/ro"
  expect_error "cache evict on a read-only store" "is read-only, so nothing can be evicted" -- \
    cache evict --max-size 0 --cache-dir "$work/ro"
  expect_error "cache rm on a read-only store" "is read-only, so nothing can be removed" -- \
    cache rm "$hash" --cache-dir "$work/ro"
  expect_error "cache gc on a read-only store" "is read-only, so it cannot be repaired" -- cache gc --cache-dir "$work/ro"
  if [ "$(sha256sum <"$work/ro/index.sqlite")" = "$index_before" ] &&
     [ "$(segments_sum "$work/ro/segments")" = "$original_segments" ]; then
    pass "the read-only store is unchanged"
  else
    fail "the read-only store changed"
  fi

  # 3. A full disk: a small tmpfs holding the store, then filled to the last byte.
  full_store() {
    mkdir -p "$work/$1" && mount -t tmpfs -o size=4m tmpfs "$work/$1" && cp -r "$work/store" "$work/$1/store" &&
      { dd if=/dev/zero of="$work/$1/filler" bs=4k 2>/dev/null; true; } &&
      [ "$(df --output=avail "$work/$1" | tail -1 | tr -d ' ')" = 0 ]
  }
  if ! full_store full1; then
    fail "could not fill a tmpfs"
    return
  fi
  ls_out=$("$flashps" cache ls --cache-dir "$work/full1/store" 2>"$work/err")
  if [ $? -eq 0 ] && grep -q "^1 capture(s)" <<<"$ls_out" &&
     grep -q "note: the disk holding .*/full1/store is full (0 bytes free): .*\`flashps cache evict --max-size SIZE\`" "$work/err"; then
    pass "cache ls on a full disk lists the store, with a note naming the way out"
  else
    fail "cache ls on a full disk: $ls_out $(cat "$work/err")"
  fi
  if edit --json --cache-dir "$work/full1/store" 2>"$work/err" | grep -q '"cache_hit": true'; then
    pass "an edit on a full disk reuses its template"
  else
    fail "edit on a full disk: $(cat "$work/err")"
  fi
  expect_error "template register on a full disk fails naming the way out" \
    "No space left on device (disk full: free space with \`flashps cache evict --max-size SIZE\`)" -- \
    template register -i "$work/mask.png" --steps 1 -q --cache-dir "$work/full1/store"
  [ "$(segments_sum "$work/full1/store/segments")" = "$original_segments" ] &&
    pass "the failed registration left no partial segment" || fail "segments after a failed registration"
  evict_out=$("$flashps" cache evict --max-size 0 --json --cache-dir "$work/full1/store" 2>"$work/err")
  if [ $? -eq 0 ] && grep -q '"bytes_freed":[1-9]' <<<"$evict_out" && [ -z "$(segments_sum "$work/full1/store/segments")" ] &&
     grep -q "^0 capture(s)" <<<"$("$flashps" cache ls --cache-dir "$work/full1/store" 2>/dev/null)"; then
    pass "cache evict empties a store on a full disk"
  else
    fail "cache evict on a full disk: $evict_out $(cat "$work/err")"
  fi

  full_store full2 || fail "could not fill a second tmpfs"
  rm_out=$("$flashps" cache rm "$hash" --cache-dir "$work/full2/store" 2>"$work/err")
  if [ $? -eq 0 ] && grep -q "^removed 1 capture(s)" <<<"$rm_out" && [ -z "$(segments_sum "$work/full2/store/segments")" ]; then
    pass "cache rm removes a template on a full disk"
  else
    fail "cache rm on a full disk: $rm_out $(cat "$work/err")"
  fi

  # gc: an orphan segment (a writer that died) on a full disk goes; the committed capture stays.
  mkdir -p "$work/full3" && mount -t tmpfs -o size=4m tmpfs "$work/full3" && cp -r "$work/store" "$work/full3/store"
  head -c 500000 /dev/urandom >"$work/full3/store/segments/00000000deadbeef.seg"
  dd if=/dev/zero of="$work/full3/filler" bs=4k 2>/dev/null
  gc_out=$("$flashps" cache gc --cache-dir "$work/full3/store" 2>"$work/err")
  if [ $? -eq 0 ] && [ ! -e "$work/full3/store/segments/00000000deadbeef.seg" ] &&
     [ "$(segments_sum "$work/full3/store/segments")" = "$original_segments" ]; then
    pass "cache gc removes an orphan segment on a full disk and keeps the capture"
  else
    fail "cache gc on a full disk: $gc_out $(cat "$work/err")"
  fi
}

if [ "${FLASHPS_STORE_TEST_NAMESPACE:-}" = 1 ]; then
  work="$STORE_TEST_WORK" hash="$STORE_TEST_HASH" original_segments="$STORE_TEST_SEGMENTS"
  mounted_cases
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
work = sys.argv[1]
png(work + "/a.png", 64, 64, 3, lambda x, y: (4 * x, 4 * y, 128))
png(work + "/mask.png", 64, 64, 1, lambda x, y: (255 if 20 <= x < 44 and 20 <= y < 44 else 0,))
PY

# A store holding one registered template (1 step), copied for each case.
hash=$("$flashps" template register -i "$work/a.png" --steps 1 -q --json --cache-dir "$work/store" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["template"])')
original_segments=$(segments_sum "$work/store/segments")
[ ${#hash} -ge 8 ] && [ -n "$original_segments" ] || fail "template register wrote a capture"

# 1. Garbage in index.sqlite.
cp -r "$work/store" "$work/garbage"
head -c 9000 /dev/urandom >"$work/garbage/index.sqlite"
cp "$work/garbage/index.sqlite" "$work/garbage.bytes"
if edit --cache full --cache-dir "$work/garbage" 2>"$work/err" && cmp -s "$work/garbage/index.sqlite" "$work/garbage.bytes" &&
   ! grep -qi "index.sqlite\|store" "$work/err" && [ -z "$(ls "$work/garbage" | grep -v '^index.sqlite$\|^segments$')" ]; then
  pass "edit --cache full on a damaged store runs and never opens the store"
else
  fail "edit --cache full on a damaged store: $(cat "$work/err")"
fi
ls_out=$("$flashps" cache ls --cache-dir "$work/garbage" 2>"$work/err")
if [ $? -eq 0 ] && grep -q "^0 capture(s)" <<<"$ls_out" &&
   grep -q "^flashps: note: .*index.sqlite was unreadable (not an SQLite database): moved to .*index.sqlite.corrupt-" "$work/err" &&
   grep -q "1 segment file(s) .* kept in .*unindexed-.*\`rm -r .*\`flashps template register\`" "$work/err"; then
  pass "cache ls on a damaged index sets it aside and says how to recover"
else
  fail "cache ls on a damaged index: $ls_out $(cat "$work/err")"
fi
corrupt=$(ls "$work/garbage" | grep '^index.sqlite.corrupt-' | grep -v -- '-wal$\|-shm$')
kept=$(ls -d "$work/garbage"/unindexed-* 2>/dev/null)
if [ -n "$corrupt" ] && [ -n "$kept" ] && cmp -s "$work/garbage/$corrupt" "$work/garbage.bytes" &&
   [ "$(segments_sum "$kept")" = "$original_segments" ]; then
  pass "the damaged index and every segment are kept byte for byte"
else
  fail "data kept after setting the index aside: corrupt='$corrupt' kept='$kept'"
fi
ok=1
for command in "stats" "verify -q" "gc" "evict --max-size 0"; do
  # shellcheck disable=SC2086
  "$flashps" cache $command --cache-dir "$work/garbage" >/dev/null 2>"$work/err" || ok=0
  [ -s "$work/err" ] && ok=0  # the index was repaired once; no more notes
done
[ $ok = 1 ] && pass "cache stats/verify/gc/evict run on the repaired store" || fail "cache commands after repair: $(cat "$work/err")"
cp -r "$work/store" "$work/garbage2"
head -c 5000 /dev/urandom >"$work/garbage2/index.sqlite"
if edit --cache-dir "$work/garbage2" 2>"$work/err" && grep -q "was unreadable" "$work/err"; then
  pass "edit (auto) on a damaged store runs in full after setting the index aside"
else
  fail "edit on a damaged store: $(cat "$work/err")"
fi
head -c 5000 /dev/urandom >"$work/garbage2/index.sqlite"
if "$flashps" cache rm abcd --cache-dir "$work/garbage2" 2>"$work/err"; [ $? -eq 1 ] &&
   grep -q "note: .*was unreadable" "$work/err" && grep -q "error: .*no capture's template hash starts with \"abcd\"" "$work/err"; then
  pass "cache rm on a damaged store repairs it, then reports the template as not found"
else
  fail "cache rm on a damaged store: $(cat "$work/err")"
fi

# 2. and 3. need mounts: run them in a private mount namespace (the mounts vanish with it).
if [ "${FLASHPS_STORE_TEST_NAMESPACE:-}" != 1 ]; then
  unshare_flags="-m --propagation private"
  [ "$(id -u)" -ne 0 ] && unshare_flags="-r $unshare_flags"
  # shellcheck disable=SC2086
  if unshare $unshare_flags true 2>/dev/null; then
    # shellcheck disable=SC2086
    FLASHPS_STORE_TEST_NAMESPACE=1 STORE_TEST_WORK="$work" STORE_TEST_HASH="$hash" STORE_TEST_SEGMENTS="$original_segments" \
      unshare $unshare_flags bash "$0" "$flashps"
    failures=$((failures + $?))
  else
    echo "skip: read-only and full-disk stores (cannot create a mount namespace here)"
  fi
  [ $failures -eq 0 ] && echo "all store degradation checks passed" || echo "$failures failure(s)"
  exit $((failures > 0))
fi
