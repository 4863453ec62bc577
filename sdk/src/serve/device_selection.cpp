#include "serve/device_selection.h"

#include <torch/cuda.h>

#include <algorithm>
#include <sstream>

#include "core/diagnostics/error.h"

namespace flashps::serve {
namespace {

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

const char* no_cuda_explanation() {
#ifdef FLASHPS_WITH_CUDA
  return "no CUDA device is visible to this CUDA build of LibTorch";
#else
  return "no CUDA device is visible; this LibTorch is CPU-only";
#endif
}

std::string no_cuda_reason(int cuda_devices) {
  return cuda_devices == 0 ? std::string(" (") + no_cuda_explanation() + ")" : "";
}

}  // namespace

std::vector<at::Device> parse_device_list(const std::string& spec, int cuda_devices) {
  std::vector<at::Device> devices;
  auto add = [&](const at::Device& device, const std::string& item) {
    // A GPU listed twice is a mistake (two model copies on one device); CPU workers may repeat:
    // several workers share the cores, as `--workers N` does.
    if (!device.is_cpu() && std::find(devices.begin(), devices.end(), device) != devices.end())
      throw InvalidArgumentError("devices \"" + spec + "\": " + item + " is listed twice");
    devices.push_back(device);
  };
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    item = trimmed(item);
    if (item == "cpu") {
      add(at::Device(at::kCPU), item);
    } else if (item == "auto") {
      if (cuda_devices == 0) add(at::Device(at::kCPU), item);
      for (int i = 0; i < cuda_devices; ++i) add(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(i)), item);
    } else if (item == "cuda") {
      if (cuda_devices == 0)
        throw UnsupportedError("devices \"" + spec + "\": cuda requested, but " + no_cuda_explanation());
      for (int i = 0; i < cuda_devices; ++i) add(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(i)), item);
    } else if (item.rfind("cuda:", 0) == 0 && item.size() > 5 &&
               item.find_first_not_of("0123456789", 5) == std::string::npos && item.size() <= 8) {
      const int index = std::stoi(item.substr(5));
      if (index >= cuda_devices)
        throw UnsupportedError("devices \"" + spec + "\": " + item + " is not present, " +
                               std::to_string(cuda_devices) + " CUDA devices are visible" +
                               no_cuda_reason(cuda_devices));
      add(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index)), item);
    } else {
      throw InvalidArgumentError("devices \"" + spec + "\": unknown device \"" + item +
                                 "\" (cpu, cuda, cuda:N or auto)");
    }
  }
  if (devices.empty()) throw InvalidArgumentError("devices \"" + spec + "\": no device listed");
  return devices;
}

int visible_cuda_devices() { return static_cast<int>(torch::cuda::device_count()); }

std::vector<at::Device> select_devices(const std::string& spec) { return parse_device_list(spec, visible_cuda_devices()); }

at::Device parse_device(const std::string& spec, int cuda_devices) {
  if (spec.find(',') != std::string::npos)
    throw InvalidArgumentError("device \"" + spec +
                               "\": one device only (lists are for serving workers: flashps batch --devices)");
  return parse_device_list(spec, cuda_devices).front();
}

at::Device select_device(const std::string& spec) { return parse_device(spec, visible_cuda_devices()); }

}  // namespace flashps::serve
