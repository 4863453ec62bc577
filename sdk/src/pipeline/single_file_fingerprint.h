// The identity of a single-file model for activation captures: every tensor as stored in the
// model file and in each component file given beside it (models/loading/model_files.h
// fingerprint_stored_tensor: name, shape, stored type, sampled bytes), the configs it loads with,
// its model type and which file plays which part. A capture never replays across different
// weights, whether retrained or stored another way (f16, Q8_0, fp8).
#pragma once
#include <string>

#include "pipeline/family_registry.h"

namespace flashps {

std::string single_file_fingerprint(const ModelSource& source);

}  // namespace flashps
