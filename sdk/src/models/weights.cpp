#include "models/weights.h"

#include <ATen/ATen.h>
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

// Weights with Inf or NaN would silently produce a black or wrong fill: refuse them at load.
void require_finite(const at::Tensor& stored, const SafetensorsFile& file, const TensorInfo& info) {
  // Half types are widened first: CPU kernels for them are not complete in every LibTorch.
  const at::Tensor values = stored.element_size() == 2 ? stored.to(at::kFloat) : stored;
  const at::Tensor finite = at::isfinite(values);
  if (values.numel() == 0 || finite.all().item<bool>()) return;
  const int64_t bad = values.numel() - finite.sum().item<int64_t>();
  throw CorruptDataError(file.source_name() + ": tensor " + info.name + " (" + dtype_safetensors_name(info.dtype) +
                         ") holds " + std::to_string(bad) + " Inf/NaN value" + (bad == 1 ? "" : "s") +
                         "; the weights are damaged or stored with the wrong dtype");
}

// BF16 bytes labelled F16 decode to finite values whose exponents all come from the top of BF16's
// exponent: nearly every nonzero magnitude lands in [0.25, 8). Trained weight matrices are spread
// around zero (a normal distribution has ~13% of its magnitudes below a quarter of the median);
// so a matrix whose magnitudes are large and tightly clustered is refused.
void require_plausible_f16(const at::Tensor& stored, const SafetensorsFile& file, const TensorInfo& info) {
  constexpr int64_t kSample = 65536, kMinimum = 1024;
  if (info.dtype != DType::F16 || stored.dim() < 2 || stored.numel() < kMinimum) return;
  at::Tensor sample = stored.flatten();
  if (sample.numel() > kSample) sample = sample.slice(0, 0, sample.numel(), sample.numel() / kSample);
  at::Tensor magnitudes = sample.to(at::kFloat).abs();
  magnitudes = magnitudes.masked_select(magnitudes > 0);
  if (magnitudes.numel() < kMinimum) return;
  const float median = magnitudes.median().item<float>();
  const double below_quarter = (magnitudes < median / 4).to(at::kFloat).mean().item<double>();
  if (median < 0.25f || below_quarter >= 0.01) return;
  std::ostringstream message;
  message << file.source_name() << ": tensor " << info.name << " is labelled F16 but looks like BF16 bytes (median "
          << "magnitude " << median << ", " << 100 * below_quarter << "% of values below a quarter of it; "
          << "weights are spread around zero); re-export it with its real dtype";
  throw CorruptDataError(message.str());
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
    require_finite(value, *sources[i].first, *sources[i].second);
    require_plausible_f16(value, *sources[i].first, *sources[i].second);
    targets[i].set_data(value.to(targets[i].device(), options.dtype).contiguous());
  }
}

}  // namespace flashps
