// FlashPS C++ wrapper, part of <flashps/flashps.hpp> (include that).
// Models: weights loaded once; editors and engines opened over one Model share them.
#ifndef FLASHPS_CPP_MODEL_HPP
#define FLASHPS_CPP_MODEL_HPP

#include <memory>
#include <string>

#include "flashps/cpp/common.hpp"
#include "flashps/cpp/edit.hpp"

namespace flashps::sdk {

struct ModelOptions {
  bool bf16 = false;
  std::string device;         // empty: "cpu"; "cuda", "cuda:N", "auto"
  ProgressFunction progress;  // loading progress
  // Beside a single-file model (flashps_model_params, API 8); empty: none / recognised.
  std::string vae, text_encoder, text_encoder_2, model_type, tokenizers_dir;
};

class Model {
 public:
  Model() = default;
  // model_dir: a diffusers folder or a single .safetensors / .gguf file; empty: default_model_dir().
  static Model open(const std::string& model_dir = "", const ModelOptions& options = {}) {
    flashps_model_params params = flashps_model_default_params();
    params.bf16 = options.bf16 ? 1 : 0;
    params.device = detail::c_str_or_null(options.device);
    params.vae_path = detail::c_str_or_null(options.vae);
    params.text_encoder_path = detail::c_str_or_null(options.text_encoder);
    params.text_encoder_2_path = detail::c_str_or_null(options.text_encoder_2);
    params.model_type = detail::c_str_or_null(options.model_type);
    params.tokenizers_dir = detail::c_str_or_null(options.tokenizers_dir);
    if (options.progress) {
      params.progress = detail::progress_trampoline;
      params.user_data = const_cast<ProgressFunction*>(&options.progress);
    }
    flashps_model* model = nullptr;
    check(flashps_model_open(detail::c_str_or_null(model_dir), &params, &model));
    Model result;
    result.handle_.reset(model, flashps_model_free);
    return result;
  }
  explicit operator bool() const { return static_cast<bool>(handle_); }
  flashps_model* get() const { return handle_.get(); }
  ModelInfo info() const {
    flashps_model_info c{};
    c.struct_size = sizeof(c);
    check(flashps_model_get_info(handle_.get(), &c));
    return ModelInfo::from_c(c);
  }

 private:
  std::shared_ptr<flashps_model> handle_;
};

}  // namespace flashps::sdk

#endif  // FLASHPS_CPP_MODEL_HPP
