#!/usr/bin/env python3
"""Reference values for FlashPS's K-quant decoders (tests/core/test_ggml_blocks.cpp).

The golden GGUF fixtures have no K-quants (gguf-py cannot quantize to them at the fixtures'
sizes), so the test decodes blocks built here and compares with gguf-py's own dequantizer:

    GGUF_PY=/path/to/llama.cpp/gguf-py python3 tools/reference/ggml_kquant_reference.py \
        > tests/core/data/ggml_kquant_reference.json

Blocks are random bytes (numpy's MT19937, seed below) whose F16 scale fields are set to finite
values of a few sizes, three blocks per type. Needs numpy and llama.cpp's gguf-py (not a FlashPS
dependency: only this generator uses it).
"""
import json
import os
import sys

import numpy as np

if os.environ.get("GGUF_PY"):
    sys.path.insert(0, os.environ["GGUF_PY"])
import gguf  # noqa: E402  (llama.cpp's gguf-py)

SEED = 20261129
BLOCKS_PER_TYPE = 3
# Byte offsets of each type's F16 scale fields within a block (ggml's block_qN_K structs).
SCALE_FIELDS = {"Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}


def main():
    rng = np.random.RandomState(SEED)
    out = {"generator": "tools/reference/ggml_kquant_reference.py", "seed": SEED,
           "reference": "gguf-py gguf.quants.dequantize", "types": {}}
    for name, fields in SCALE_FIELDS.items():
        qtype = gguf.GGMLQuantizationType[name]
        block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
        blocks = rng.randint(0, 256, size=(BLOCKS_PER_TYPE, type_size)).astype(np.uint8)
        for b in range(BLOCKS_PER_TYPE):
            for offset in fields:
                scale = np.float16(rng.normal() * (0.001, 0.1, 3.0)[b])
                blocks[b, offset:offset + 2] = np.frombuffer(scale.tobytes(), dtype=np.uint8)
        values = gguf.quants.dequantize(blocks.reshape(-1), qtype).astype(np.float32).reshape(-1)
        assert values.size == BLOCKS_PER_TYPE * block_size and np.all(np.isfinite(values))
        out["types"][name] = {
            "blocks_hex": blocks.tobytes().hex(),
            # repr of a float32 widened to float64 is exact, so the test can compare bitwise.
            "values": [float(v) for v in values],
        }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
