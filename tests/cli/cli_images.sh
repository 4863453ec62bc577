#!/usr/bin/env bash
# The flashps CLI on hostile and unusual images: decompression bombs (a PNG header claiming
# 2147483647x1, a JPEG SOF claiming 16000x6000) fail at once with the file named; a JPEG whose SOF
# claims more than its data is truncated, not grey; a bad FLASHPS_MAX_IMAGE_PIXELS is named; an
# RGBA input keeps its alpha in a PNG output and a JPEG output says it was dropped; a 1x1 image's
# note gives the size step the model really uses. Usage: cli_images.sh PATH_TO_FLASHPS
set -uo pipefail
flashps="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
unset FLASHPS_CACHE_DIR FLASHPS_MODEL FLASHPS_MAX_IMAGE_PIXELS FLASHPS_MAX_IMAGE_BYTES
export FLASHPS_CACHE_DIR="$work/store"

pass() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
source "$(dirname "$0")/expect_error.sh"

samples="$(dirname "$0")/../../samples"
python3 - "$work" "$samples/images/fig.jpg" <<'PY'
import struct, sys, zlib
work, jpeg_path = sys.argv[1], sys.argv[2]
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
def png(path, width, height, colour, depth, raw):
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) +
                           chunk(b"IEND", b""))
for depth in (8, 16):  # under 70 bytes each
    png(f"{work}/bomb{depth}.png", 2147483647, 1, 6, depth, b"\0")
# 32x32 RGBA: left half transparent, right half opaque; a mask over the top-left quarter.
png(work + "/rgba.png", 32, 32, 6, 8,
    b"".join(b"\0" + b"".join(bytes((8 * x, 8 * y, 90, 0 if x < 16 else 255)) for x in range(32)) for y in range(32)))
png(work + "/mask.png", 32, 32, 0, 8,
    b"".join(b"\0" + bytes(255 if x < 16 and y < 16 else 0 for x in range(32)) for y in range(32)))
png(work + "/one.png", 1, 1, 2, 8, b"\0\x80\x40\x20")
png(work + "/one_mask.png", 1, 1, 0, 8, b"\0\xff")
jpeg = bytearray(open(jpeg_path, "rb").read())
at = 2
while jpeg[at + 1] not in (0xC0, 0xC1, 0xC2):
    at += 2 + struct.unpack(">H", jpeg[at + 2:at + 4])[0]
height, width = struct.unpack(">HH", jpeg[at + 5:at + 9])
for name, size in (("bomb.jpg", (6000, 16000)), ("sof.jpg", (height * 2, width * 2))):
    struct.pack_into(">HH", jpeg, at + 5, *size)
    open(f"{work}/{name}", "wb").write(jpeg)
PY

for depth in 8 16; do
  start=$(date +%s)
  expect_error "PNG bomb ($depth-bit RGBA)" \
    "$work/bomb$depth.png: image dimensions 2147483647x1 exceed the limit of 16384 pixels per side" \
    -- edit --image "$work/bomb$depth.png" --mask "$work/mask.png" --out "$work/o.png"
  [ $(($(date +%s) - start)) -lt 10 ] || fail "PNG bomb ($depth-bit) took $(($(date +%s) - start)) s"
done
expect_error "JPEG SOF bomb" "$work/bomb.jpg: image dimensions 16000x6000 exceed the limit of 64000000 pixels" \
  -- edit --image "$work/bomb.jpg" --mask "$work/mask.png" --out "$work/o.png"
expect_error "JPEG SOF larger than its data" "$work/sof.jpg: truncated JPEG data" \
  -- edit --image "$work/sof.jpg" --mask "$work/mask.png" --out "$work/o.png"
[ ! -e "$work/o.png" ] || fail "an output was written for a refused input"
FLASHPS_MAX_IMAGE_PIXELS=lots expect_error "bad pixel budget" \
  "FLASHPS_MAX_IMAGE_PIXELS: expected a positive whole number, got 'lots'" \
  -- edit --image "$work/rgba.png" --mask "$work/mask.png" --out "$work/o.png"

# Alpha: kept in a PNG (color type 6 = RGBA), reported dropped for a JPEG.
if "$flashps" --threads 2 edit -i "$work/rgba.png" -m "$work/mask.png" -o "$work/alpha.png" --steps 1 -q &&
   python3 -c 'import sys; sys.exit(0 if open(sys.argv[1], "rb").read()[25] == 6 else 1)' "$work/alpha.png"; then
  pass "an RGBA input gives an RGBA PNG"
else
  fail "an RGBA input lost its alpha in the PNG output"
fi
notes=$("$flashps" --threads 2 edit -i "$work/rgba.png" -m "$work/mask.png" -o "$work/alpha.jpg" --steps 1 -q \
  2>&1 >/dev/null)
if grep -q "note: the input's transparency is not in $work/alpha.jpg: JPEG has no alpha channel" <<<"$notes"; then
  pass "a JPEG output says the alpha was dropped"
else
  fail "no note about the dropped alpha: $notes"
fi

# A 1x1 image: the note names the bundled model's real size step (8 pixels: 4-pixel patches, 2x2 tokens).
notes=$("$flashps" --threads 2 edit -i "$work/one.png" -m "$work/one_mask.png" -o "$work/one_out.png" --steps 1 -q \
  2>&1 >/dev/null)
if grep -q "processed at 8x8 (this model needs sides in multiples of 8 pixels), result resized back" <<<"$notes"; then
  pass "1x1 image note"
else
  fail "1x1 image note: $notes"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all image checks passed"
