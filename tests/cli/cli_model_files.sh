#!/usr/bin/env bash
# `flashps model info` and `--model FILE` on the fixture model files (single_file_*, gguf_*: every
# .safetensors / .gguf there but cases.*, however many there are), and the files refused with
# what they look like. Usage: cli_model_files.sh PATH_TO_FLASHPS [FIXTURES_DIR]
set -uo pipefail
flashps="$1"
fixtures="${2:-${FLASHPS_FIXTURES_DIR:-$(dirname "$0")/../../../shared/fixtures}}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
source "$(dirname "$0")/expect_error.sh"
if [ ! -d "$fixtures" ]; then
  echo "SKIPPED: fixtures not found at $fixtures (set FLASHPS_FIXTURES_DIR)"
  exit 0
fi

checked=0
for file in "$fixtures"/single_file_*/*.safetensors "$fixtures"/gguf_*/*.gguf; do
  [ -f "$file" ] || continue
  case "$(basename "$file")" in cases*) continue ;; esac
  case "$file" in *flux*) family=flux ;; *) family=stable-diffusion ;; esac
  if ! "$flashps" model info "$file" --json >"$work/info.json" 2>"$work/err"; then
    echo "FAIL: model info $file: $(cat "$work/err")"; failures=$((failures + 1)); continue
  fi
  if python3 - "$work/info.json" "$family" <<'PY'; then echo "ok: model info $(basename "$file")"; else echo "FAIL: model info $file: $(cat "$work/info.json")"; failures=$((failures + 1)); fi
import json, sys
info = json.load(open(sys.argv[1]))
assert info["family"] == sys.argv[2], info["family"]
assert info["variant"] and info["parameters"] > 0
assert isinstance(info["fingerprint"], str) and len(info["fingerprint"]) == 32
assert all(g["stored_as"] for g in info["tensor_groups"])
missing = [c for c in info["components"].values() if not c["present"]]
assert all(("pass " in c["message"]) or ("--tokenizers" in c["message"]) for c in missing), missing
PY
  checked=$((checked + 1))
done
echo "model info on $checked fixture files"
[ $checked -gt 0 ] || { echo "FAIL: no fixture model files found in $fixtures"; failures=$((failures + 1)); }

flux=$(ls "$fixtures"/single_file_flux_fill_tiny/*.safetensors 2>/dev/null | grep -v cases | head -1)
if [ -n "$flux" ]; then
  mask="$(dirname "$0")/../../samples/masks/fig.png"
  expect_error "Flux transformer alone" "no VAE in this file: pass --vae" -- \
    edit --image "$mask" --mask "$mask" --out "$work/o.png" --model "$flux"
  expect_error "Flux file of another --model-type family" "holds a flux model" -- model info "$flux" --model-type sd15
  expect_error "unknown --model-type" "unknown type" -- model info "$flux" --model-type flux-kontext
  expect_error "a missing --vae file" "does not exist" -- model info "$flux" --vae "$work/nowhere.safetensors"
fi
lora=$(ls "$fixtures"/lora_flux_tiny/lora_*.safetensors 2>/dev/null | head -1)
[ -n "$lora" ] && expect_error "a LoRA as a model" "looks like a LoRA" -- model info "$lora"
printf 'PK\003\004 a zip archive' >"$work/model.ckpt"
expect_error "a pickle" "does not load pickles" -- model info "$work/model.ckpt"

if [ $failures -ne 0 ]; then
  echo "$failures model file checks failed"
  exit 1
fi
echo "all model file checks passed"
