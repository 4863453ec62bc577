#include "models/weights.h"

#include <torch/nn/module.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/safetensors.h"
#include "core/tensor_io.h"

namespace flashps {
namespace {

std::string shape_string(at::IntArrayRef shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

std::string shape_string(const std::vector<int64_t>& shape) {
  return shape_string(at::IntArrayRef(shape));
}

bool is_float_dtype(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F64;
}

// Lists at most `limit` names, then "... and N more", so a wrong model folder gives a readable error.
std::string summarize(const std::vector<std::string>& names, size_t limit = 8) {
  std::ostringstream out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) out << "\n    " << names[i];
  if (names.size() > limit) out << "\n    ... and " << names.size() - limit << " more";
  return out.str();
}

}  // namespace

void load_weights_strict(torch::nn::Module& module, const SafetensorsFile& file,
                         const WeightLoadOptions& options) {
  load_weights_strict(module, std::vector<const SafetensorsFile*>{&file}, options);
}

void load_weights_strict(torch::nn::Module& module,
                         const std::vector<const SafetensorsFile*>& files,
                         const WeightLoadOptions& options) {
  std::map<std::string, std::pair<const SafetensorsFile*, const TensorInfo*>> stored;
  std::string source;
  for (const SafetensorsFile* file : files) {
    source += (source.empty() ? "" : ", ") + file->source_name();
    for (const TensorInfo& info : file->tensors()) stored[info.name] = {file, &info};
  }

  std::vector<at::Tensor> targets;
  std::vector<std::pair<const SafetensorsFile*, const TensorInfo*>> sources;
  std::vector<std::string> missing, mis_shaped, bad_dtype;
  std::set<std::string> used;
  auto visit = [&](const std::string& name, const at::Tensor& target) {
    auto found = stored.find(name);
    if (found == stored.end()) {
      missing.push_back(name);
      return;
    }
    used.insert(name);
    const TensorInfo& info = *found->second.second;
    if (!is_float_dtype(info.dtype)) {
      bad_dtype.push_back(name + " is " + dtype_safetensors_name(info.dtype));
    } else if (!std::equal(info.shape.begin(), info.shape.end(), target.sizes().begin(),
                           target.sizes().end())) {
      mis_shaped.push_back(name + ": file has " + shape_string(info.shape) + ", model expects " +
                           shape_string(target.sizes()));
    } else {
      targets.push_back(target);
      sources.push_back(found->second);
    }
  };
  for (const auto& item : module.named_parameters(/*recurse=*/true)) visit(item.key(), item.value());
  for (const auto& item : module.named_buffers(/*recurse=*/true)) visit(item.key(), item.value());

  std::vector<std::string> unexpected;
  for (const auto& [name, unused] : stored) {
    if (used.count(name)) continue;
    if (std::find(options.ignored_keys.begin(), options.ignored_keys.end(), name) !=
        options.ignored_keys.end())
      continue;
    unexpected.push_back(name);
  }

  if (!missing.empty() || !unexpected.empty() || !mis_shaped.empty() || !bad_dtype.empty()) {
    std::ostringstream message;
    message << source << ": weights do not match the model";
    if (!missing.empty()) message << "\n  missing keys (" << missing.size() << "):" << summarize(missing);
    if (!unexpected.empty())
      message << "\n  unexpected keys (" << unexpected.size() << "):" << summarize(unexpected);
    if (!mis_shaped.empty())
      message << "\n  shape mismatches (" << mis_shaped.size() << "):" << summarize(mis_shaped);
    if (!bad_dtype.empty())
      message << "\n  non-float tensors (" << bad_dtype.size() << "):" << summarize(bad_dtype);
    throw CorruptDataError(message.str());
  }

  at::NoGradGuard no_grad;
  for (size_t i = 0; i < targets.size(); ++i) {
    at::Tensor value = read_tensor(*sources[i].first, *sources[i].second);
    targets[i].set_data(value.to(targets[i].device(), options.dtype).contiguous());
  }
}

}  // namespace flashps
