// Where the test plugins are (<build>/tests/test_plugins, beside this executable), and a host
// over one group of them with short limits.
#pragma once

#include <flashps/plugin_host.hpp>

#include <string>

namespace flashps::plugins::testing {

std::string test_plugins_dir(const std::string& group);
// The flashps-plugin-runner of this build.
std::string runner_path();
// A host that searches only `group` (bad, good, faulty, ...).
PluginHost host_for(const std::string& group, Isolation isolation = Isolation::automatic, double idle_timeout = 20,
                    int64_t memory_limit = 0);
// A small RGB test picture with a gradient, and a mask selecting the box [x0,x1) x [y0,y1).
sdk::Image test_picture(uint32_t width, uint32_t height);
sdk::Image box_mask(uint32_t width, uint32_t height, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1);
// Under AddressSanitizer (FLASHPS_ASAN=1 in the environment): memory limits cannot apply.
bool under_sanitizer();

}  // namespace flashps::plugins::testing
