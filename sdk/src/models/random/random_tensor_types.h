// How random-weight models store each tensor: the float types of safetensors files (fp8 = float8
// e4m3fn matrices with bfloat16 vectors, as fp8 checkpoints keep them) and the tensor types
// ComfyUI-GGUF gives a Flux transformer in a GGUF file of a given type.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/random/streamed_tensor_file.h"

namespace flashps {

// The encoding of one stored tensor from its key and shape.
using EncodingChoice = std::function<TensorEncoding(const std::string& stored_key, const std::vector<int64_t>& shape)>;

// "f32" "f16" "bf16" "fp8"; anything else throws InvalidArgumentError naming `option`.
TensorEncoding random_float_encoding(const std::string& quant, const std::string& option);
EncodingChoice random_float_choice(const std::string& quant, const std::string& option);
// "f32" "f16" "bf16" "q8_0" "q4_0" "q4_1" "q5_0" "q5_1" "q4_k" "q5_k" "q6_k"; else throws naming --quant.
TensorEncoding random_ggml_encoding(const std::string& quant);
// The types of a Flux transformer's BFL keys in a GGUF file of `file_type`, as ComfyUI-GGUF's
// convert.py and llama.cpp patch choose them (the gguf_flux_fill_tiny fixture's README).
EncodingChoice comfyui_gguf_choice(TensorEncoding file_type);
// llama.cpp's general.file_type (LLAMA_FTYPE) of a file whose matrices are `type` (K-quants: the _S mix).
uint32_t llama_file_type(TensorEncoding type);

}  // namespace flashps
