#!/usr/bin/env bash
# `flashps edit --model FILE` on FlashPS-written random models (`flashps dev random-model --preset
# flux-fill-bench --format folder|single-file|gguf`, one seed: the same weights in each layout):
# the single file (ComfyUI all-in-one keys, configs and tokenizers carried in flashps.files) edits
# with a prompt exactly as the folder does; `model info` describes it; the GGUF split (transformer
# .gguf + ae / clip_l / t5xxl files) names the flag of each missing part and edits once given them.
# Usage: cli_single_file_edit.sh PATH_TO_FLASHPS PATH_TO_FLASHPS_BENCH
set -uo pipefail
flashps="$1"
bench="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
source "$(dirname "$0")/expect_error.sh"

if ! "$bench" dev random-model --help 2>&1 | grep -q -- "--preset"; then
  echo "SKIPPED: this flashps-bench's dev random-model has no --preset (written by issue 44's writer part)"
  exit 0
fi
random() { "$bench" dev random-model "$1" --preset flux-fill-bench --seed 5 --max-sequence-length 16 "${@:2}" >/dev/null; }
random "$work/folder" --format folder || { echo "FAIL: random-model folder"; exit 1; }
random "$work/model.safetensors" --format single-file || { echo "FAIL: random-model single-file"; exit 1; }
random "$work/gguf" --format gguf --quant q8_0 || { echo "FAIL: random-model gguf"; exit 1; }

mask="$(dirname "$0")/../../samples/masks/fig.png"
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
edit() { "$flashps" edit --image "$work/image.png" --mask "$work/mask.png" --steps 2 --seed 4 --cache full -q \
  --prompt "a red cat" "$@"; }
edit --model "$work/folder" --out "$work/folder.png" 2>"$work/folder.err" || fail "folder edit: $(cat "$work/folder.err")"
if edit --model "$work/model.safetensors" --out "$work/file.png" 2>"$work/file.err"; then
  cmp -s "$work/folder.png" "$work/file.png" && pass "the single file edits exactly as its folder" ||
    fail "the single file's edit differs from the folder's"
else
  fail "single-file edit: $(cat "$work/file.err")"
fi

if "$flashps" model info "$work/model.safetensors" --json >"$work/info.json" 2>"$work/info.err"; then
  python3 - "$work/info.json" <<'PY' && pass "model info of the single file" || fail "model info: $(cat "$work/info.json")"
import json, sys
info = json.load(open(sys.argv[1]))
assert info["family"] == "flux" and info["written_by_flashps"], info
assert all(c["present"] for c in info["components"].values()), info["components"]
PY
else
  fail "model info: $(cat "$work/info.err")"
fi

transformer=$(ls "$work"/gguf/*.gguf | head -1)
if [ -n "$transformer" ]; then
  inputs=(edit --image "$work/image.png" --mask "$work/mask.png" --out "$work/g.png" --model "$transformer")
  expect_error "GGUF transformer alone" "no VAE in this file: pass --vae" -- "${inputs[@]}"
  expect_error "GGUF + VAE" "pass --text-encoder FILE" -- "${inputs[@]}" --vae "$work/gguf/ae.safetensors"
  t5=$(ls "$work"/gguf/t5xxl*.safetensors | head -1)
  if edit --model "$transformer" --vae "$work/gguf/ae.safetensors" --text-encoder "$work/gguf/clip_l.safetensors" \
      --text-encoder-2 "$t5" --out "$work/gguf.png" 2>"$work/gguf.err"; then
    pass "the GGUF transformer with ae, clip_l and t5xxl files edits"
  else
    fail "GGUF edit: $(cat "$work/gguf.err")"
  fi
fi

if [ $failures -ne 0 ]; then
  echo "$failures single-file edit checks failed"
  exit 1
fi
echo "all single-file edit checks passed"
