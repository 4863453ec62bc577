// FlashPS C++ wrapper, part of <flashps/flashps.hpp> (include that).
// Editors: one model, one edit at a time; template registration and lookup.
#ifndef FLASHPS_CPP_EDITOR_HPP
#define FLASHPS_CPP_EDITOR_HPP

#include <memory>
#include <string>

#include "flashps/cpp/common.hpp"
#include "flashps/cpp/edit.hpp"
#include "flashps/cpp/model.hpp"
#include "flashps/cpp/store.hpp"

namespace flashps::sdk {

// ---- Editors: one model, one edit at a time ----

struct EditorOptions {
  bool bf16 = false;        // open(model_dir) only: an open Model has its own
  std::string device;       // open(model_dir) only; empty: "cpu"; "cuda", "cuda:N", "auto"
  Store store;              // shared store; else capture_dir; else captures in memory
  std::string capture_dir;
  ProgressFunction progress;  // loading progress
};

class Editor {
 public:
  Editor() = default;
  // model_dir empty: default_model_dir().
  static Editor open(const std::string& model_dir = "", const EditorOptions& options = {}) {
    flashps_editor_params params = flashps_editor_default_params();
    params.bf16 = options.bf16 ? 1 : 0;
    params.device = detail::c_str_or_null(options.device);
    params.store = options.store.get();
    params.capture_dir = detail::c_str_or_null(options.capture_dir);
    if (options.progress) {
      params.progress = detail::progress_trampoline;
      params.user_data = const_cast<ProgressFunction*>(&options.progress);
    }
    flashps_editor* editor = nullptr;
    check(flashps_editor_open(detail::c_str_or_null(model_dir), &params, &editor));
    Editor result;
    result.handle_.reset(editor, flashps_editor_close);
    return result;
  }
  // Over an open model, sharing its weights (options' store or capture_dir apply).
  static Editor open(const Model& model, const EditorOptions& options = {}) {
    flashps_editor_params params = flashps_editor_default_params();
    params.store = options.store.get();
    params.capture_dir = detail::c_str_or_null(options.capture_dir);
    flashps_editor* editor = nullptr;
    check(flashps_editor_open_model(model.get(), &params, &editor));
    Editor result;
    result.handle_.reset(editor, flashps_editor_close);
    return result;
  }
  explicit operator bool() const { return static_cast<bool>(handle_); }
  flashps_editor* get() const { return handle_.get(); }

  ModelInfo info() const {
    flashps_model_info c{};
    c.struct_size = sizeof(c);
    check(flashps_editor_info(handle_.get(), &c));
    return ModelInfo::from_c(c);
  }
  EditResult edit(const Image& image, const Image& mask, const EditOptions& options = {}) const {
    const flashps_edit_params params = options.to_c();
    const flashps_image c_image = image.view(), c_mask = mask.view();
    flashps_image result{};
    flashps_edit_stats stats = EditStats::empty_c();
    check(flashps_edit(handle_.get(), &c_image, &c_mask, &params, &result, &stats));
    EditStats edit_stats = EditStats::from_c(stats);
    return {Image::adopt(result), std::move(edit_stats)};
  }
  // Runs the template in full and captures it. With a mask: the same window as the edits to come.
  // Without one (the whole image) both kinds are captured: flashps_template_register_masked, the
  // only call that chooses them, needs the mask.
  EditStats register_template(const Image& image, const EditOptions& options = {}, const Image* mask = nullptr,
                              bool capture_kv = true, bool capture_hidden = true) const {
    const flashps_edit_params params = options.to_c();
    const flashps_image c_image = image.view();
    flashps_edit_stats stats = EditStats::empty_c();
    if (mask) {
      const flashps_image c_mask = mask->view();
      check(flashps_template_register_masked(handle_.get(), &c_image, &c_mask, &params, capture_kv ? 1 : 0,
                                             capture_hidden ? 1 : 0, &stats));
    } else if (capture_kv && capture_hidden) {
      check(flashps_template_register(handle_.get(), &c_image, &params, &stats));
    } else {
      throw Error(FLASHPS_INVALID_ARGUMENT,
                  "register_template: capturing only keys/values or only block outputs needs the mask of the "
                  "edits to come");
    }
    return EditStats::from_c(stats);
  }
  // Whether edit(image, mask, options) would reuse a registered template.
  bool has_template(const Image& image, const Image& mask, const EditOptions& options = {}) const {
    const flashps_edit_params params = options.to_c();
    const flashps_image c_image = image.view(), c_mask = mask.view();
    int found = 0;
    check(flashps_template_lookup(handle_.get(), &c_image, &c_mask, &params, &found));
    return found != 0;
  }

 private:
  std::shared_ptr<flashps_editor> handle_;
};

// ---- The serving engine ----

}  // namespace flashps::sdk

#endif  // FLASHPS_CPP_EDITOR_HPP
