// Opening models for the C API: what flashps_model_open, flashps_editor_open and
// flashps_engine_open share. Internal (not installed).
#pragma once
#include <memory>

#include "api/handles.h"

namespace flashps::api {

// Detects the family, loads the weights and reports "load" progress; throws on failure.
std::unique_ptr<flashps_model> open_model(const char* model_dir, const flashps_model_params& params);

// Refuses editor or engine params that ask for another precision or device than `model` has.
void check_same_weights(const flashps_model& model, int bf16, const char* device, const char* params_name);

}  // namespace flashps::api
