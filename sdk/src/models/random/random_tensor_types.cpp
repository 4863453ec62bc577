#include "models/random/random_tensor_types.h"

#include <map>

#include "core/diagnostics/error.h"

namespace flashps {

TensorEncoding random_float_encoding(const std::string& quant, const std::string& option) {
  if (quant == "f32") return TensorEncoding::F32;
  if (quant == "f16") return TensorEncoding::F16;
  if (quant == "bf16") return TensorEncoding::BF16;
  if (quant == "fp8") return TensorEncoding::F8_E4M3;
  throw InvalidArgumentError(option + ": '" + quant + "' is not a float type here (f32, f16, bf16, fp8)");
}

// fp8 files store matrices as float8 e4m3fn and vectors (biases, norm scales) as bfloat16.
EncodingChoice random_float_choice(const std::string& quant, const std::string& option) {
  const TensorEncoding encoding = random_float_encoding(quant, option);
  return [encoding](const std::string&, const std::vector<int64_t>& shape) {
    return encoding == TensorEncoding::F8_E4M3 && shape.size() < 2 ? TensorEncoding::BF16 : encoding;
  };
}

TensorEncoding random_ggml_encoding(const std::string& quant) {
  static const std::map<std::string, TensorEncoding> known = {
      {"f32", TensorEncoding::F32},   {"f16", TensorEncoding::F16},   {"bf16", TensorEncoding::BF16},
      {"q8_0", TensorEncoding::Q8_0}, {"q4_0", TensorEncoding::Q4_0}, {"q4_1", TensorEncoding::Q4_1},
      {"q5_0", TensorEncoding::Q5_0}, {"q5_1", TensorEncoding::Q5_1}, {"q4_k", TensorEncoding::Q4_K},
      {"q5_k", TensorEncoding::Q5_K}, {"q6_k", TensorEncoding::Q6_K}};
  const auto found = known.find(quant);
  if (found == known.end())
    throw InvalidArgumentError("--quant: '" + quant + "' is not a GGUF type (f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k)");
  return found->second;
}

namespace {

bool is_module_weight(const std::string& key, std::initializer_list<const char*> modules) {
  for (const char* module : modules)
    if (key == std::string(module) + ".weight") return true;
  return false;
}

// The tensor types ComfyUI-GGUF gives a Flux transformer (the gguf_flux_fill_tiny fixture's README):
// float files keep 1-D tensors and tensors of at most 1024 values in F32; quantized files keep 1-D
// tensors and the input / final projections in F32, the small embedders' second layers in F16,
// and matrices whose rows are not whole blocks in F16.
}  // namespace

EncodingChoice comfyui_gguf_choice(TensorEncoding file_type) {
  return [file_type](const std::string& key, const std::vector<int64_t>& shape) {
    int64_t count = 1;
    for (int64_t extent : shape) count *= extent;
    if (!is_ggml_block_encoding(file_type))
      return shape.size() < 2 || count <= 1024 || file_type == TensorEncoding::F32 ? TensorEncoding::F32 : file_type;
    if (shape.size() < 2 ||
        is_module_weight(key, {"img_in", "time_in.in_layer", "vector_in.in_layer", "guidance_in.in_layer", "final_layer.linear"}))
      return TensorEncoding::F32;
    if (is_module_weight(key, {"txt_in", "time_in.out_layer", "vector_in.out_layer", "guidance_in.out_layer",
                        "final_layer.adaLN_modulation.1"}))
      return TensorEncoding::F16;
    const int64_t block = ggml_type_traits(uint32_t(ggml_type_of(file_type)))->block_size;
    return shape.back() % block == 0 ? file_type : TensorEncoding::F16;
  };
}

// llama.cpp's general.file_type (LLAMA_FTYPE) of a file whose matrices are `type`.
uint32_t llama_file_type(TensorEncoding type) {
  switch (type) {
    case TensorEncoding::F32: return 0;
    case TensorEncoding::F16: return 1;
    case TensorEncoding::Q4_0: return 2;
    case TensorEncoding::Q4_1: return 3;
    case TensorEncoding::Q8_0: return 7;
    case TensorEncoding::Q5_0: return 8;
    case TensorEncoding::Q5_1: return 9;
    case TensorEncoding::Q4_K: return 14;  // Q4_K_S
    case TensorEncoding::Q5_K: return 16;  // Q5_K_S
    case TensorEncoding::Q6_K: return 18;
    case TensorEncoding::BF16: return 32;
    default: return 0;
  }
}

}  // namespace flashps
