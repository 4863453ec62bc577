// The C API's rules for front ends that check input before a model is loaded: names <-> enums of
// cache modes (engine/cache_mode.h), batching and balance policies (serving_names.h), and
// flashps_edit_params_check (edit_request.h). Each delegates to the one definition.
#include <string>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "api/edit_request.h"
#include "api/serving_names.h"
#include "core/diagnostics/error.h"
#include "engine/cache_mode.h"
#include "flashps/engine.h"

namespace {

using flashps::api::guarded;
using flashps::api::invalid;

constexpr flashps_batching kBatchings[] = {FLASHPS_BATCHING_CB, FLASHPS_BATCHING_NAIVE_CB, FLASHPS_BATCHING_STATIC,
                                           FLASHPS_BATCHING_STATIC_FULL};
constexpr flashps_balance_policy kPolicies[] = {FLASHPS_BALANCE_MASK_AWARE, FLASHPS_BALANCE_ROUND_ROBIN,
                                                FLASHPS_BALANCE_REQUEST_COUNT, FLASHPS_BALANCE_TOKEN_COUNT};

// The enum value whose name is `name` (name_of: the one table), else InvalidArgumentError
// "unknown <what> 'x' (a, b, c or d)".
template <typename Enum, size_t N, typename NameOf>
Enum value_named(const std::string& name, const Enum (&values)[N], NameOf name_of, const char* what) {
  std::string choices;
  for (size_t i = 0; i < N; ++i) {
    if (name == name_of(values[i])) return values[i];
    choices += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + name_of(values[i]);
  }
  throw flashps::InvalidArgumentError("unknown " + std::string(what) + " '" + name + "' (" + choices + ")");
}

}  // namespace

extern "C" {

const char* flashps_cache_mode_name(flashps_cache_mode mode) {
  try {
    return flashps::engine::cache_mode_name(flashps::api::to_mode(mode));
  } catch (const flashps::Error&) {
    return nullptr;
  }
}

flashps_status flashps_cache_mode_from_name(const char* name, flashps_cache_mode* mode) {
  if (!name || !mode) return invalid("flashps_cache_mode_from_name", "name and mode must not be NULL");
  return guarded([&] {
    try {
      *mode = flashps::api::to_c_mode(flashps::engine::cache_mode_from_name(name));
    } catch (const flashps::Error& error) {
      throw flashps::InvalidArgumentError(error.what());
    }
  });
}

const char* flashps_batching_name(flashps_batching batching) {
  try {
    return flashps::api::batching_name(batching);
  } catch (const flashps::Error&) {
    return nullptr;
  }
}

flashps_status flashps_batching_from_name(const char* name, flashps_batching* batching) {
  if (!name || !batching) return invalid("flashps_batching_from_name", "name and batching must not be NULL");
  return guarded([&] { *batching = value_named(name, kBatchings, flashps::api::batching_name, "batching"); });
}

const char* flashps_balance_policy_name(flashps_balance_policy policy) {
  try {
    return flashps::serve::balance_policy_name(flashps::api::to_policy(policy));
  } catch (const flashps::Error&) {
    return nullptr;
  }
}

flashps_status flashps_balance_policy_from_name(const char* name, flashps_balance_policy* policy) {
  if (!name || !policy) return invalid("flashps_balance_policy_from_name", "name and policy must not be NULL");
  return guarded([&] {
    *policy = value_named(
        name, kPolicies,
        [](flashps_balance_policy value) { return flashps::serve::balance_policy_name(flashps::api::to_policy(value)); },
        "load-balancing policy");
  });
}

flashps_status flashps_edit_params_check(const flashps_edit_params* given) {
  static constexpr const char* kFunction = "flashps_edit_params_check";
  flashps_edit_params params = flashps_edit_default_params();
  if (!flashps::api::read_params(given, flashps::api::kEditParamsV1Size, params, kFunction, "flashps_edit_params"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] { flashps::api::check_params(params); });
}

}  // extern "C"
