#include "models/loading/weights.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/diagnostics/error.h"
#include "core/files/safetensors.h"
#include "core/files/tensor_io.h"
#include "core/quant/quantized_matrix.h"
#include "models/common/layers.h"
#include "models/loading/checkpoint_tensors.h"

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

// Lists at most `limit` names, then "... and N more", so a wrong model folder gives a readable error.
std::string summarize(const std::vector<std::string>& names, size_t limit = 8) {
  std::ostringstream out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) out << "\n    " << names[i];
  if (names.size() > limit) out << "\n    ... and " << names.size() - limit << " more";
  return out.str();
}

// Weights with Inf or NaN would silently produce a black or wrong fill: refuse them at load.
void require_finite(const at::Tensor& stored, const std::string& key, const CheckpointEntry& entry) {
  // In slices of 4M values: half types are widened first (CPU kernels for them are not complete
  // in every LibTorch), and a whole-tensor copy would be a 0.5 GB transient for T5 XXL's embedding.
  constexpr int64_t kSlice = int64_t(1) << 22;
  const at::Tensor flat = stored.reshape({-1});
  int64_t bad = 0;
  for (int64_t at = 0; at < flat.numel(); at += kSlice) {
    const at::Tensor slice = flat.narrow(0, at, std::min(kSlice, flat.numel() - at));
    const at::Tensor values = slice.element_size() == 2 ? slice.to(at::kFloat) : slice;
    bad += values.numel() - at::isfinite(values).sum().item<int64_t>();
  }
  if (bad == 0) return;
  throw CorruptDataError(entry.origin + ": tensor " + key + " (" + entry.stored_as +
                         ") holds " + std::to_string(bad) + " Inf/NaN value" + (bad == 1 ? "" : "s") +
                         "; the weights are damaged or stored with the wrong dtype");
}

// BF16 bytes labelled F16 decode to finite values whose exponents all come from the top of BF16's
// exponent: nearly every nonzero magnitude lands in [0.25, 8). Trained weight matrices are spread
// around zero (a normal distribution has ~13% of its magnitudes below a quarter of the median);
// so a matrix whose magnitudes are large and tightly clustered is refused.
void require_plausible_f16(const at::Tensor& stored, const std::string& key, const CheckpointEntry& entry) {
  constexpr int64_t kSample = 65536, kMinimum = 1024;
  if (entry.stored_as != "F16" || stored.scalar_type() != at::kHalf || stored.dim() < 2 || stored.numel() < kMinimum) return;
  at::Tensor sample = stored.flatten();
  if (sample.numel() > kSample) sample = sample.slice(0, 0, sample.numel(), sample.numel() / kSample);
  at::Tensor magnitudes = sample.to(at::kFloat).abs();
  magnitudes = magnitudes.masked_select(magnitudes > 0);
  if (magnitudes.numel() < kMinimum) return;
  const float median = magnitudes.median().item<float>();
  const double below_quarter = (magnitudes < median / 4).to(at::kFloat).mean().item<double>();
  if (median < 0.25f || below_quarter >= 0.01) return;
  std::ostringstream message;
  message << entry.origin << ": tensor " << key << " is labelled F16 but looks like BF16 bytes (median "
          << "magnitude " << median << ", " << 100 * below_quarter << "% of values below a quarter of it; "
          << "weights are spread around zero); re-export it with its real dtype";
  throw CorruptDataError(message.str());
}

}  // namespace

void load_weights_strict(torch::nn::Module& module, const SafetensorsFile& file,
                         const WeightLoadOptions& options) {
  load_weights_strict(module, *safetensors_tensors_view({&file}), options);
}

void load_weights_strict(torch::nn::Module& module,
                         const std::vector<const SafetensorsFile*>& files,
                         const WeightLoadOptions& options) {
  load_weights_strict(module, *safetensors_tensors_view(files), options);
}

void load_weights_strict(torch::nn::Module& module, const CheckpointTensors& weights,
                         const WeightLoadOptions& options) {
  const std::map<std::string, CheckpointEntry>& stored = weights.entries();
  // Linear layers by weight key: where keep_quantized attaches stored blocks.
  std::map<std::string, LinearImpl*> linear_layers;
  const bool keep_quantized =
      options.keep_quantized && (options.dtype == at::kFloat || options.dtype == at::kBFloat16);
  if (keep_quantized) {
    if (auto* layer = dynamic_cast<LinearImpl*>(&module)) linear_layers["weight"] = layer;
    for (const auto& item : module.named_modules("", /*include_self=*/false))
      if (auto* layer = dynamic_cast<LinearImpl*>(item.value().get())) linear_layers[item.key() + ".weight"] = layer;
  }
  std::vector<std::pair<LinearImpl*, std::shared_ptr<const QuantizedMatrix>>> kept;  // and their keys:
  std::vector<std::string> kept_keys;
  std::vector<at::Tensor> targets;
  std::vector<std::pair<std::string, const CheckpointEntry*>> sources;
  std::vector<std::string> missing, mis_shaped, bad_dtype;
  std::set<std::string> used;
  auto visit = [&](const std::string& name, const at::Tensor& target) {
    auto found = stored.find(name);
    if (found == stored.end()) {
      missing.push_back(name);
      return;
    }
    used.insert(name);
    const CheckpointEntry& entry = found->second;
    if (!entry.floating) {
      bad_dtype.push_back(name + " is " + entry.stored_as);
    } else if (!std::equal(entry.shape.begin(), entry.shape.end(), target.sizes().begin(),
                           target.sizes().end())) {
      mis_shaped.push_back(name + ": file has " + shape_string(entry.shape) + ", model expects " +
                           shape_string(target.sizes()));
    } else if (const auto layer = linear_layers.find(name);
               entry.quantized && layer != linear_layers.end() && target.device().is_cpu()) {
      std::shared_ptr<const QuantizedMatrix> matrix = weights.read_quantized(name);
      if (matrix) {  // (its placeholder, never written, takes no memory; keep_quantized drops it)
        kept.emplace_back(layer->second, std::move(matrix));
        kept_keys.push_back(name);
      } else {
        targets.push_back(target);
        sources.emplace_back(name, &entry);
      }
    } else {
      targets.push_back(target);
      sources.emplace_back(name, &entry);
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
    message << weights.source() << ": weights do not match the model";
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
  // The module's placeholders go first, in allocation order, so the allocator gets them back as one
  // block: a large model built in float32 and loaded in bfloat16 would otherwise leave holes that
  // each tensor's conversion touches and the heap keeps (T5 XXL: +0.5x of its weights resident).
  for (at::Tensor& target : targets) target.set_data(at::empty({0}, target.options()));
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& [key, entry] = sources[i];
    // Converted straight from the file's mapping, whose pages are dropped afterwards: a bfloat16
    // load of a float32 checkpoint holds the bfloat16 model and one tensor's file pages, never a
    // float32 copy of the model.
    const at::Tensor stored_tensor = weights.read(key);
    require_finite(stored_tensor, key, *entry);
    require_plausible_f16(stored_tensor, key, *entry);
    const at::Device device = targets[i].device();
    at::Tensor value = stored_tensor.scalar_type() == options.dtype && device.is_cpu()
                           ? stored_tensor.clone()  // own the bytes
                           : stored_tensor.to(device, options.dtype);
    targets[i].set_data(value.contiguous());
    weights.release(key);
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    kept[i].second->require_finite();  // decodes once; the pages are dropped again below
    kept[i].first->keep_quantized(kept[i].second, options.dtype);
    weights.release(kept_keys[i]);
  }
}

}  // namespace flashps
