// Which devices the serving engine runs a worker on (one worker, with its own copy of the model,
// per device): "cpu", "cuda" (every visible GPU), "cuda:N", a comma-separated list of those, or
// "auto" (every visible GPU, else the CPU). "cpu" may be listed more than once: one worker each.
#pragma once
#include <c10/core/Device.h>

#include <string>
#include <vector>

namespace flashps::serve {

// `cuda_devices`: how many CUDA devices are visible. Throws Error naming the spec on anything
// unknown, a GPU listed twice, or not present.
std::vector<at::Device> parse_device_list(const std::string& spec, int cuda_devices);

// parse_device_list with this process's visible CUDA devices (none in a CPU-only LibTorch).
std::vector<at::Device> select_devices(const std::string& spec);

int visible_cuda_devices();

// One device, for a single editor: "cpu", "cuda" (the first GPU), "cuda:N" or "auto" (the first
// GPU, else the CPU); a list is refused.
at::Device parse_device(const std::string& spec, int cuda_devices);
at::Device select_device(const std::string& spec);

}  // namespace flashps::serve
