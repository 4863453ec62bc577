// flashps_edit_params judged by the SDK's one set of rules (pipeline/edit_rules.h), and its cache
// mode <-> the engine's. Used by every C API entry that takes the params (edit_request.cpp's
// to_request, flashps_edit_params_check in names_api.cpp). No LibTorch: the HTTP fuzz target's
// stand-in for libflashps (fuzz/public_api_shim.cpp) compiles it as well. Internal.
#pragma once
#include "engine/cache_mode.h"
#include "flashps/editor.h"

namespace flashps::api {

// Checks every field of `params` (already read with read_params, so struct_size is ours): steps,
// strength, guidance_scale, grow/feather, token dilation, context size, max_sequence_length,
// texture_transfer, cache_mode; and that prompt_embeds_path exists (NotFoundError). Throws
// InvalidArgumentError naming the field ("flashps_edit_params.steps is 1001; it must be 0 (the
// model's recommendation) to 1000").
void check_params(const flashps_edit_params& params);

// InvalidArgumentError "flashps_edit_params.cache_mode is 9; ..." for a value outside the enum.
// `mode` read as the int the C caller stored (c_enum.h).
engine::CacheMode to_mode(const flashps_cache_mode& mode);
flashps_cache_mode to_c_mode(engine::CacheMode mode);

}  // namespace flashps::api
