#!/usr/bin/env bash
# `flashps edit --prompt` on a complete diffusers-layout Flux Fill folder (random weights, written by
# `flashps dev random-model --text-encoders`: transformer, VAE, CLIP + tokenizer, sharded T5 +
# spiece.model, scheduler): the first edit encodes the prompt, the second reuses the store's
# embeddings; a folder without tokenizer_2 is a one-line error naming it.
# Usage: cli_flux_prompt.sh PATH_TO_FLASHPS PATH_TO_FLASHPS_BENCH
set -uo pipefail
flashps="$1"
bench="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
source "$(dirname "$0")/expect_error.sh"

"$bench" dev random-model "$work/flux" --text-encoders --max-sequence-length 16 --seed 3 >/dev/null ||
  { echo "FAIL: dev random-model"; exit 1; }
for part in text_encoder tokenizer text_encoder_2/model.safetensors.index.json tokenizer_2/spiece.model; do
  [ -e "$work/flux/$part" ] && pass "the folder has $part" || fail "the folder lacks $part"
done

# A 64x64 picture and a mask of its middle.
python3 - "$work/image.png" "$work/mask.png" <<'PY'
import sys, zlib, struct
def png(path, width, height, channels, pixel):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    raw = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    color = {1: 0, 3: 2}[channels]
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0))
    open(path, "wb").write(data + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
png(sys.argv[1], 64, 64, 3, lambda x, y: (x * 4, y * 4, (x + y) % 256))
png(sys.argv[2], 64, 64, 1, lambda x, y: (255 if 16 <= x < 48 and 16 <= y < 48 else 0,))
PY

export FLASHPS_CACHE_DIR="$work/store"
edit() { "$flashps" edit --model "$work/flux" --image "$work/image.png" --mask "$work/mask.png" --steps 2 --seed 4 "$@"; }
if edit --prompt "a red cat on a tree" --out "$work/first.png" 2>"$work/first.err" >/dev/null; then
  grep -q "prompt embeddings: encoded" "$work/first.err" && pass "the first edit encodes the prompt" ||
    fail "first edit: $(cat "$work/first.err")"
else
  fail "first edit failed: $(cat "$work/first.err")"
fi
if edit --prompt "a red cat on a tree" --out "$work/second.png" 2>"$work/second.err" >/dev/null; then
  grep -q "reused from the store (no text encoder ran)" "$work/second.err" &&
    pass "the second edit reuses the stored embeddings" || fail "second edit: $(cat "$work/second.err")"
  cmp -s "$work/first.png" "$work/second.png" && pass "the same prompt and seed give the same picture" ||
    fail "the second picture differs"
else
  fail "second edit failed: $(cat "$work/second.err")"
fi
# The T5 length is an option of the edit (and part of the stored embeddings' key).
if edit --prompt "a red cat on a tree" --max-sequence-length 8 --json --out "$work/short.png" \
  >"$work/short.json" 2>"$work/short.err"; then
  grep -q '"prompt_cache_hit": false' "$work/short.json" && pass "another max_sequence_length encodes again" ||
    fail "--max-sequence-length 8: $(cat "$work/short.json")"
  edit --prompt "a red cat on a tree" --max-sequence-length 8 --json --out "$work/short2.png" >"$work/short2.json" 2>/dev/null
  grep -q '"prompt_cache_hit": true' "$work/short2.json" && pass "--json reports the prompt cache hit" ||
    fail "second --max-sequence-length 8 edit: $(cat "$work/short2.json")"
else
  fail "--max-sequence-length 8 failed: $(cat "$work/short.err")"
fi
# Out of range: refused by the option's check (CLI11's usage error), naming the option.
if output=$(edit --prompt "a cat" --max-sequence-length 513 --out "$work/x.png" 2>&1); then
  fail "--max-sequence-length 513 was accepted"
else
  grep -q -- "--max-sequence-length" <<<"$output" && pass "--max-sequence-length 513 is refused, naming the option" ||
    fail "--max-sequence-length 513: $output"
fi

if edit --prompt "the sky with a dog" --out "$work/other.png" 2>/dev/null >/dev/null; then
  cmp -s "$work/first.png" "$work/other.png" && fail "another prompt gave the same picture" ||
    pass "another prompt gives another picture"
else
  fail "edit with another prompt failed"
fi

mv "$work/flux/tokenizer_2" "$work/tokenizer_2.away"
expect_error "a folder without tokenizer_2" "no tokenizer_2/ folder" -- edit --model "$work/flux" \
  --image "$work/image.png" --mask "$work/mask.png" --prompt "a cat" --out "$work/x.png"

echo "$failures failures"
[ "$failures" -eq 0 ]
