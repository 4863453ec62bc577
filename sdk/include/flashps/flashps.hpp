// FlashPS C++ wrapper: header-only, over the C API (flashps/flashps.h). RAII handles, exceptions
// that carry the status, std::function callbacks. The names live in flashps::sdk so they never
// collide with the library's internals.
//
//   #include <flashps/flashps.hpp>
//   namespace fps = flashps::sdk;
//   fps::init();                                            // threads, allocator
//   fps::Editor editor = fps::Editor::open();               // the bundled model
//   // (or fps::Model model = fps::Model::open(); then Editor::open(model) and Engine::open(model)
//   //  share its weights)
//   fps::Image image = fps::Image::load("photo.png"), mask = fps::Image::load("mask.png");
//   fps::EditOptions options;
//   options.seed = 42;
//   editor.register_template(image, options);               // once per template (optional)
//   fps::EditResult result = editor.edit(image, mask, options);  // reuses the capture
//   result.image.save("out.png");
//
// Errors throw flashps::sdk::Error (status() says which). Callbacks that throw cancel the
// operation (exceptions never cross the C boundary).
// The wrapper is split by concept under flashps/cpp/; this header includes all of it.
#ifndef FLASHPS_FLASHPS_HPP
#define FLASHPS_FLASHPS_HPP

#include "flashps/cpp/common.hpp"
#include "flashps/cpp/edit.hpp"
#include "flashps/cpp/model.hpp"
#include "flashps/cpp/store.hpp"
#include "flashps/cpp/editor.hpp"
#include "flashps/cpp/engine.hpp"
#include "flashps/cpp/mask.hpp"
#include "flashps/cpp/server.hpp"

#endif  // FLASHPS_FLASHPS_HPP
