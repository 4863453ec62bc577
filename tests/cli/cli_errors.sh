#!/usr/bin/env bash
# The flashps CLI on bad input: a clear one-line error naming the file and a non-zero exit,
# never a crash. Usage: cli_errors.sh PATH_TO_FLASHPS
set -uo pipefail
flashps="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

source "$(dirname "$0")/expect_error.sh"

printf 'not an image' >"$work/text.png"
mkdir -p "$work/model/transformer"
echo '{"_class_name": "FluxTransformer2DModel"}' >"$work/model/transformer/config.json"
# A safetensors file whose header claims far more bytes than the file has.
printf '\x00\x10\x00\x00\x00\x00\x00\x00{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}' \
  >"$work/model/transformer/diffusion_pytorch_model.safetensors"
python3 - "$work/mask.png" <<'PY' 2>/dev/null || cp "$(dirname "$0")/../../samples/masks/fig.png" "$work/mask.png"
import sys, zlib, struct
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
raw = b"".join(b"\x00" + b"\xff" * 32 for _ in range(32))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 32, 32, 8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY

expect_error "missing image" "missing.png" -- edit --image "$work/missing.png" --mask "$work/mask.png" --out "$work/o.png" --model "$work/model"
expect_error "not an image" "not a PNG or JPEG" -- edit --image "$work/text.png" --mask "$work/mask.png" --out "$work/o.png" --model "$work/model"
expect_error "missing model folder" "does not exist" -- edit --image "$work/mask.png" --mask "$work/mask.png" --out "$work/o.png" --model "$work/nowhere"
expect_error "not a model folder" "no transformer/config.json" -- edit --image "$work/mask.png" --mask "$work/mask.png" --out "$work/o.png" --model "$work"
expect_error "truncated safetensors" "diffusion_pytorch_model.safetensors" -- edit --image "$work/mask.png" --mask "$work/mask.png" --out "$work/o.png" --model "$work/model"
expect_error "bad fixture folder" "$work/nofixture" -- dev run-fixture "$work/nofixture"

# The fixture runner passes on every golden folder, whatever kinds and however many there are,
# when ../shared is there (skipped otherwise).
fixtures="${FLASHPS_FIXTURES_DIR:-$(dirname "$0")/../../../shared/fixtures}"
if [ -d "$fixtures" ]; then
  ran=0
  for fixture in "$fixtures"/*/; do
    fixture=${fixture%/}
    ran=$((ran + 1))
    if "$flashps" dev run-fixture "$fixture" > "$work/fixture.txt" 2>&1 && grep -q "^PASS" "$work/fixture.txt"; then
      echo "ok: run-fixture PASS on $(basename "$fixture") ($(tail -1 "$work/fixture.txt"))"
    elif grep -q "^SKIP: .* not .* yet" "$work/fixture.txt"; then
      # A fixture kind for a capability not built yet (the runner names it; every other kind must pass).
      echo "skipped: $(basename "$fixture"): $(tail -1 "$work/fixture.txt")"
    else
      echo "FAIL: run-fixture on $fixture"; cat "$work/fixture.txt"; failures=$((failures + 1))
    fi
  done
  [ "$ran" -gt 0 ] || { echo "FAIL: no fixture folders in $fixtures"; failures=$((failures + 1)); }
else
  echo "skipped: run-fixture (no fixtures at $fixtures)"
fi

# A template registered by one process is reused by the next (the activation store on disk).
export FLASHPS_CACHE_DIR="$work/store"
image="$(dirname "$0")/../../samples/images/fig.jpg"
if "$flashps" --threads 2 template register --image "$image" --steps 4 -q &&
   "$flashps" --threads 2 edit --image "$image" --mask "$(dirname "$0")/../../samples/masks/fig.png" --steps 4 \
     --out "$work/edit.png" -q --json | grep -q '"cache_hit": true'; then
  echo "ok: template register then edit in another process hits the store"
else
  echo "FAIL: the stored template was not reused"; failures=$((failures + 1))
fi
if "$flashps" cache ls --json | grep -q '"template"' && "$flashps" cache verify -q >/dev/null; then
  echo "ok: cache ls / verify"
else
  echo "FAIL: cache ls / verify"; failures=$((failures + 1))
fi
expect_error "bad cache size" "not a size" -- cache evict --max-size lots

# flashps batch: a bad manifest line is named; a good manifest runs, a second run resumes.
printf '{"image": "a.png", "mask": "m.png", "output": "o.png", "step": 3}\n' >"$work/typo.jsonl"
expect_error "batch manifest typo" "typo.jsonl:1: unknown key \"step\"" -- batch "$work/typo.jsonl"
samples="$(dirname "$0")/../../samples"
printf '{"image": "%s/images/fig.jpg", "mask": "%s/masks/fig.png", "output": "%s/batch/fig.png", "steps": 2}\n{"image": "%s/missing.jpg", "mask": "%s/masks/fig.png", "output": "%s/batch/missing.png", "steps": 2}\n' \
  "$samples" "$samples" "$work" "$samples" "$samples" "$work" >"$work/batch.jsonl"
expect_error "batch on an unknown device" "unknown device \"gpu\"" -- batch "$work/batch.jsonl" --devices gpu
output=$("$flashps" --threads 2 batch "$work/batch.jsonl" -q 2>&1)
status=$?
if [ $status -eq 2 ] && [ -f "$work/batch/fig.png" ] && grep -q "batch.jsonl:2: .*missing.jpg" <<<"$output" &&
   grep -q "1 done, 0 skipped (already written), 1 failed" <<<"$output"; then
  echo "ok: batch runs the good item and reports the bad one"
else
  echo "FAIL: batch: exit $status, output: $output"; failures=$((failures + 1))
fi
output=$("$flashps" --threads 2 batch "$work/batch.jsonl" -q 2>&1)
if grep -q "0 done, 1 skipped" <<<"$output"; then
  echo "ok: batch resumes, skipping written outputs"
else
  echo "FAIL: batch did not skip the written output"; failures=$((failures + 1))
fi

if [ $failures -ne 0 ]; then
  echo "$failures CLI error checks failed"
  exit 1
fi
echo "all CLI error checks passed"
