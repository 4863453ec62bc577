// Strict loading of a module tree whose parameter paths equal checkpoint keys
// ("transformer_blocks.3.attn.to_q.weight"): loading is a lookup, and every missing, unexpected
// or mis-shaped key is named in one clear error.
#pragma once
#include <c10/core/ScalarType.h>

#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace flashps {

class SafetensorsFile;
class CheckpointTensors;

struct WeightLoadOptions {
  at::ScalarType dtype = at::kFloat;   // parameters are converted to this dtype
  std::vector<std::string> ignored_keys;  // file keys that may be present without a parameter
  // Linear weights the file stores quantized (GGUF Q*) or as float8 stay as stored, memory-mapped,
  // and are decoded block by block when multiplied (LinearImpl::keep_quantized), for a float32 or
  // bfloat16 model on the CPU; other tensors (convolutions, norms, embeddings, biases) and other
  // dtypes or devices are decoded at load as without it. The layers keep the file mapped, so the
  // CheckpointTensors may be dropped after loading (safetensors_tensors_view's files cannot be
  // kept alive: nothing is kept quantized from them). A model moved to a GPU decodes them there
  // (LinearImpl::to). A Linear already holding a quantized weight is not reloaded by name.
  bool keep_quantized = false;
};

// Copies every parameter and buffer of `module` from `file`. Throws Error naming the file and
// listing all problems (missing keys, unexpected keys, shape mismatches, non-float dtypes).
void load_weights_strict(torch::nn::Module& module, const SafetensorsFile& file,
                         const WeightLoadOptions& options = {});

// Same, from several shard files (diffusers' *.safetensors shards with an index).
void load_weights_strict(torch::nn::Module& module,
                         const std::vector<const SafetensorsFile*>& files,
                         const WeightLoadOptions& options = {});

// Same, from any checkpoint seen in the model's keys (a GGUF file, another key layout, ...).
void load_weights_strict(torch::nn::Module& module, const CheckpointTensors& weights,
                         const WeightLoadOptions& options = {});

}  // namespace flashps
