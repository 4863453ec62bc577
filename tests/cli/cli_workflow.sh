#!/usr/bin/env bash
# The flashps CLI end to end on the bundled model, on the public API: an edit writes an image; a
# registered template is reused by the next edit; the cache commands on a temporary store
# (an ambiguous template prefix refused unless --all-matching); argument checks (--threads,
# --max-size); developer commands forwarded to flashps-bench.
# Usage: cli_workflow.sh PATH_TO_FLASHPS [PATH_TO_FLASHPS_BENCH]
set -uo pipefail
flashps="$1"
flashps_bench="${2:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
store="$work/store"
unset FLASHPS_CACHE_DIR FLASHPS_MODEL

pass() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

source "$(dirname "$0")/expect_error.sh"

# A 64x64 photo-like gradient per seed, and a mask with a white square (Python's zlib; no PIL).
python3 - "$work" <<'PY'
import struct, sys, zlib
def png(path, width, height, channels, pixel):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    colour = {1: 0, 3: 2}[channels]
    raw = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    open(path, "wb").write(data)
work = sys.argv[1]
png(work + "/a.png", 64, 64, 3, lambda x, y: (4 * x, 4 * y, 128))
png(work + "/b.png", 64, 64, 3, lambda x, y: (255 - 4 * y, 90, 4 * x))
png(work + "/mask.png", 64, 64, 1, lambda x, y: (255 if 20 <= x < 44 and 20 <= y < 44 else 0,))
PY

# 1. An edit with the bundled model (the default) writes a PNG.
if "$flashps" --threads 2 edit -i "$work/a.png" -m "$work/mask.png" -o "$work/out.png" --steps 1 -q \
     --cache-dir "$store" && [ "$(head -c 4 "$work/out.png" | tail -c 3)" = "PNG" ]; then
  pass "edit on the bundled model writes an image"
else
  fail "edit on the bundled model did not write $work/out.png"
fi

# 2. template register, then an edit of that template reports the cache hit.
hash_a=$("$flashps" --threads 2 template register -i "$work/a.png" --steps 1 -q --json --cache-dir "$store" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["template"])')
edit_json=$("$flashps" --threads 2 edit -i "$work/a.png" -m "$work/mask.png" -o "$work/hit.png" --steps 1 -q --json \
  --cache-dir "$store")
if [ ${#hash_a} -ge 8 ] && grep -q '"cache_hit": true' <<<"$edit_json" &&
   grep -q "\"template\": \"$hash_a\"" <<<"$edit_json"; then
  pass "template register ($hash_a) then edit reports cache_hit true"
else
  fail "template register then edit: template '$hash_a', edit: $edit_json"
fi
hash_b=$("$flashps" --threads 2 template register -i "$work/b.png" --steps 1 -q --json --cache-dir "$store" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["template"])')

captures() { "$flashps" cache ls --json --cache-dir "$store" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }

# 3. The cache commands on that store.
ls_text=$("$flashps" cache ls --cache-dir "$store")
if [ "$(captures)" = 2 ] && grep -q "^${hash_a:0:12} " <<<"$ls_text" && grep -q "^2 capture(s)" <<<"$ls_text"; then
  pass "cache ls lists both templates"
else
  fail "cache ls: $ls_text"
fi
stats_json=$("$flashps" cache stats --json --cache-dir "$store")
if python3 -c 'import json, sys; s = json.loads(sys.argv[1]); assert s["captures"] == 2 and s["bytes"] > 0, s' "$stats_json"; then
  pass "cache stats counts the captures"
else
  fail "cache stats: $stats_json"
fi
verify_text=$("$flashps" cache verify -q --cache-dir "$store")
if [ $? -eq 0 ] && grep -q "entries checked, 0 damaged" <<<"$verify_text"; then
  pass "cache verify finds no damage"
else
  fail "cache verify: $verify_text"
fi
gc_text=$("$flashps" cache gc --cache-dir "$store")
if [ $? -eq 0 ] && grep -q "^removed 0 orphan segment(s)" <<<"$gc_text"; then pass "cache gc"; else fail "cache gc: $gc_text"; fi

# 4. cache rm: a prefix naming two templates is refused; --all-matching removes both. Two real
# hashes rarely share the 4-character minimum, so the second template's index row is renamed.
prefix="${hash_a:0:4}"
sqlite3 "$store/index.sqlite" \
  "UPDATE captures SET template_hash = '$prefix' || substr(template_hash, 5) WHERE template_hash = '$hash_b'"
expect_error "cache rm refuses an ambiguous prefix" "$prefix" -- cache rm "$prefix" --cache-dir "$store"
if [ "$(captures)" = 2 ]; then pass "the refused rm removed nothing"; else fail "the refused rm removed captures"; fi
rm_text=$("$flashps" cache rm "$prefix" --all-matching --cache-dir "$store")
if [ $? -eq 0 ] && grep -q "removed 2 capture(s)" <<<"$rm_text" && [ "$(captures)" = 0 ]; then
  pass "cache rm --all-matching removes every match"
else
  fail "cache rm --all-matching: $rm_text"
fi
expect_error "cache rm of an unknown template" "$prefix" -- cache rm "$prefix" --cache-dir "$store"

# 5. cache evict to 0 empties the store.
"$flashps" --threads 2 template register -i "$work/a.png" --steps 1 -q --cache-dir "$store"
evict_json=$("$flashps" cache evict --max-size 0 --json --cache-dir "$store")
if python3 -c 'import json, sys; assert json.loads(sys.argv[1])["bytes_freed"] > 0' "$evict_json" &&
   [ "$(captures)" = 0 ]; then
  pass "cache evict --max-size 0 empties the store"
else
  fail "cache evict: $evict_json"
fi
for size in -1 0x10 inf nan 1e3 12Q 99999999999G ""; do
  expect_error "cache evict refuses --max-size '$size'" "--max-size" -- cache evict --max-size "$size" --cache-dir "$store"
done

# 6. --threads: 0 is the default; nonsense and more than 4x the cores are refused.
for threads in abc -1 0x4 2.5 99999 99999999999999999999; do
  expect_error "--threads '$threads' refused" "--threads" -- --threads "$threads" cache ls --cache-dir "$store"
done
if "$flashps" --threads 0 cache ls --cache-dir "$store" >/dev/null; then pass "--threads 0 (default)"; else
  fail "--threads 0"; fi

# 7. Developer commands run flashps-bench with the same arguments.
if [ -n "$flashps_bench" ]; then
  help=$("$flashps" bench --help 2>&1)
  if [ $? -eq 0 ] && grep -q "flashps-bench" <<<"$help" && grep -q "quality" <<<"$help"; then
    pass "flashps bench --help is flashps-bench's"
  else
    fail "flashps bench --help: $help"
  fi
  help=$("$flashps" --threads 2 profile --help 2>&1)
  if [ $? -eq 0 ] && grep -q -- "--repeats" <<<"$help"; then pass "flashps --threads 2 profile --help"; else
    fail "flashps profile --help: $help"; fi
fi
# Without flashps-bench next to flashps or on PATH: a clear error.
mkdir "$work/alone"
cp "$flashps" "$work/alone/flashps"
output=$(PATH=/usr/bin:/bin "$work/alone/flashps" bench --help 2>&1)
if [ $? -eq 1 ] && grep -q "flashps-bench, which is not installed" <<<"$output"; then
  pass "a clear error when flashps-bench is missing"
else
  fail "flashps-bench missing: $output"
fi

if [ $failures -ne 0 ]; then
  echo "$failures CLI workflow checks failed"
  exit 1
fi
echo "all CLI workflow checks passed"
