#!/usr/bin/env bash
# Every number the flashps CLI takes is validated with a named range (issue 18): threads,
# FLASHPS_THREADS, seed, grow, feather and dilate. Each bad value is one error line naming the
# option and exit 1, never a hang, a stack trace or a silently changed value.
# Usage: cli_bad_numbers.sh PATH_TO_FLASHPS
set -uo pipefail
flashps="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
export FLASHPS_CACHE_DIR="$work/store"

source "$(dirname "$0")/expect_error.sh"

# A 32x32 white image, used as image and mask (every pixel masked).
python3 - "$work/white.png" <<'PY'
import sys, zlib, struct
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
raw = b"".join(b"\x00" + b"\xff" * 32 for _ in range(32))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 32, 32, 8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
edit=(edit --image "$work/white.png" --mask "$work/white.png" --out "$work/out.png" --steps 1 -q)
cores=$(nproc)

# Threads: 1..4x the cores, refused at once (9999 used to hang creating threads).
start=$SECONDS
expect_error "--threads 9999" "^flashps: error: --threads 9999: flashps_init: flashps_runtime_options.threads is 9999; it must be 0 (FLASHPS_THREADS, else every core) to $((4 * cores)) (4 x the $cores hardware threads)$" -- --threads 9999 cache ls
if [ $((SECONDS - start)) -gt 20 ]; then echo "FAIL: --threads 9999 took $((SECONDS - start)) s"; failures=$((failures + 1)); fi
expect_error "--threads -1" "^flashps: error: --threads: '-1' is not a thread count (a whole number, 0 for the default)$" -- --threads -1 cache ls
expect_error "--threads 2x" "'2x' is not a thread count" -- --threads 2x cache ls
FLASHPS_THREADS=abc expect_error "FLASHPS_THREADS=abc" "^flashps: error: FLASHPS_THREADS is \"abc\"; it must be a whole number from 1 to $((4 * cores)) (4 x the $cores hardware threads), or unset for every core$" -- cache ls
FLASHPS_THREADS=0 expect_error "FLASHPS_THREADS=0" "FLASHPS_THREADS is \"0\"; it must be a whole number from 1" -- cache ls
# --threads wins over the variable.
if FLASHPS_THREADS=abc "$flashps" --threads 1 cache ls >/dev/null 2>&1; then echo "ok: --threads overrides FLASHPS_THREADS"; else
  echo "FAIL: --threads 1 with FLASHPS_THREADS=abc"; failures=$((failures + 1)); fi

# Seed: 0..2^64-1 exactly (overflow and -1 used to become 2^64-1 silently).
range="it must be a whole number from 0 to 18446744073709551615"
expect_error "--seed overflow" "^flashps: error: --seed: 99999999999999999999999 is too large; $range$" -- "${edit[@]}" --seed 99999999999999999999999
expect_error "--seed 2^64" "^flashps: error: --seed: 18446744073709551616 is too large; $range$" -- "${edit[@]}" --seed 18446744073709551616
expect_error "--seed -1" "^flashps: error: --seed: '-1' is not a seed; $range$" -- "${edit[@]}" --seed -1
expect_error "--seed 0x10" "^flashps: error: --seed: '0x10' is not a seed; $range$" -- "${edit[@]}" --seed 0x10
if "$flashps" "${edit[@]}" --seed 18446744073709551615 && [ -s "$work/out.png" ]; then echo "ok: --seed 2^64-1 accepted"; else
  echo "FAIL: --seed 18446744073709551615 refused"; failures=$((failures + 1)); fi

# Grow, feather, dilate: the SDK's ranges, named by option (2000000000 used to end in a LibTorch
# stack trace, a huge feather silently returned the input, negative grow silently became 0).
expect_error "--dilate 2000000000" "^flashps: error: --dilate: flashps_edit_params.token_dilation is 2000000000; it must be 0 to 1024$" -- "${edit[@]}" --dilate 2000000000
expect_error "--grow -5" "^flashps: error: --grow: flashps_edit_params.mask_grow_pixels is -5; it must be 0 to 16384$" -- "${edit[@]}" --grow -5
expect_error "--feather 99999999999" "^flashps: error: --feather: 99999999999 is out of range$" -- "${edit[@]}" --feather 99999999999
expect_error "--grow 1.5" "^flashps: error: --grow: '1.5' is not a whole number of pixels$" -- "${edit[@]}" --grow 1.5
expect_error "--grow beyond the image" "^flashps: error: --grow: mask_grow_pixels is 33; for this 32x32 image it must be 0 to 32$" -- "${edit[@]}" --grow 33
expect_error "--feather beyond the image" "^flashps: error: --feather: mask_feather_pixels is 5000; for this 32x32 image it must be 0 to 32$" -- "${edit[@]}" --feather 5000
expect_error "--dilate beyond the token grid" "^flashps: error: --dilate: token_dilation is 5; for this 32x32 image (4x4 tokens) it must be 0 to 4$" -- "${edit[@]}" --dilate 5
if "$flashps" "${edit[@]}" --grow 32 --feather 32 --dilate 4; then echo "ok: grow/feather/dilate at the image's limits"; else
  echo "FAIL: grow 32, feather 32, dilate 4 refused on a 32x32 image"; failures=$((failures + 1)); fi

# Steps, guidance, max_sequence_length and cache names: the SDK's rules (flashps_edit_params_check),
# answered before the model loads, naming the option; the same bounds as the C API and HTTP.
expect_error "--steps 1001" "^flashps: error: --steps: flashps_edit_params.steps is 1001; it must be 0 (the model's recommendation) to 1000$" -- edit --image "$work/white.png" --mask "$work/white.png" --out "$work/out.png" -q --steps 1001
expect_error "--guidance 101" "^flashps: error: --guidance: flashps_edit_params.guidance_scale is 101; it must be 0 to 100 (< 0: the model's default)$" -- "${edit[@]}" --guidance 101
expect_error "--max-sequence-length 513" "^flashps: error: --max-sequence-length: flashps_edit_params.max_sequence_length is 513; it must be 0 (the model's default) to 512$" -- "${edit[@]}" --max-sequence-length 513
expect_error "--strength 0" "^flashps: error: --strength: flashps_edit_params.strength is 0; it must be in (0, 1]$" -- "${edit[@]}" --strength 0
expect_error "--cache sometimes" "^flashps: error: --cache: unknown cache mode 'sometimes' (expected auto, full, kv or hidden)$" -- "${edit[@]}" --cache sometimes

# Model configs: every size bounded, then checked against the weights' headers, before anything
# is allocated (num_layers 1e9 used to end in std::bad_alloc, in_channels 2^31 in a stack trace).
cp -r "$(dirname "$0")/../../samples/models/flashps-fill-small" "$work/model"
config="$work/model/transformer/config.json"
set_field() {
  python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c[sys.argv[2]] = json.loads(sys.argv[3]); json.dump(c, open(sys.argv[1], "w"))' "$config" "$1" "$2"
}
set_field num_layers 1e9
expect_error "num_layers 1e9" "^flashps: error: .*transformer/config.json: num_layers is 1000000000; it must be 0 to 1024$" -- "${edit[@]}" --model "$work/model"
set_field num_layers 2
set_field in_channels 2147483648
expect_error "in_channels 2^31" "^flashps: error: .*transformer/config.json: in_channels is 2147483648; it must be 1 to 16384$" -- "${edit[@]}" --model "$work/model"
set_field in_channels 192
set_field num_layers 3
expect_error "num_layers disagreeing with the weights" "^flashps: error: .*transformer/config.json: num_layers is 3 but .*transformer/diffusion_pytorch_model.safetensors holds 2 transformer_blocks (transformer_blocks.N.\*)$" -- "${edit[@]}" --model "$work/model"
set_field num_layers 2
if "$flashps" "${edit[@]}" --model "$work/model"; then echo "ok: the restored config loads"; else
  echo "FAIL: the copied bundled model does not load"; failures=$((failures + 1)); fi

if [ $failures -ne 0 ]; then
  echo "$failures bad-number checks failed"
  exit 1
fi
echo "all bad-number checks passed"
