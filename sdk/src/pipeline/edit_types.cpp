#include "pipeline/edit_types.h"

#include <ATen/ATen.h>

#include "core/diagnostics/error.h"
#include "core/files/tensor_io.h"

namespace flashps {

Conditioning load_conditioning(const std::string& path) {
  auto tensors = load_safetensors(path);
  auto take = [&](const char* name, int64_t dims) {
    auto found = tensors.find(name);
    if (found == tensors.end()) throw Error(path + ": no tensor '" + name + "'");
    at::Tensor tensor = found->second.to(at::kFloat);
    if (tensor.dim() == dims + 1 && tensor.size(0) == 1) tensor = tensor.squeeze(0);
    if (tensor.dim() != dims)
      throw Error(path + ": '" + name + "' must have " + std::to_string(dims) + " dimensions");
    return tensor;
  };
  Conditioning conditioning;
  conditioning.prompt_embeds = take("prompt_embeds", 2);
  conditioning.pooled_prompt_embeds = take("pooled_prompt_embeds", 1);
  conditioning.source = path;
  return conditioning;
}

TemplateInfo skipped_registration(const std::string& why_unwritable) {
  TemplateInfo skipped;
  skipped.stats.notes.push_back(why_unwritable);
  return skipped;
}

}  // namespace flashps
