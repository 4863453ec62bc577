/* FlashPS: fast mask-aware generative image editing — the public C API.
 *
 * Quick start (C or C++; link libflashps, e.g. find_package(FlashPS) or pkg-config flashps):
 *
 *   flashps_runtime_options runtime = flashps_runtime_default_options();
 *   flashps_init(&runtime);                                  // threads, allocator: explicit
 *   flashps_editor* editor = NULL;
 *   flashps_editor_params editor_params = flashps_editor_default_params();
 *   if (flashps_editor_open(NULL, &editor_params, &editor) != FLASHPS_OK) {  // NULL: bundled model
 *     fprintf(stderr, "%s\n", flashps_last_error());
 *     return 1;
 *   }
 *   flashps_image image = {0}, mask = {0}, result = {0};
 *   flashps_image_load("photo.png", &image);         // RGB(A) template
 *   flashps_image_load("mask.png", &mask);           // white = regenerate
 *   flashps_edit_params params = flashps_edit_default_params();
 *   params.seed = 42;
 *   flashps_template_register(editor, &image, &params, NULL);  // once per template (optional)
 *   flashps_edit(editor, &image, &mask, &params, &result, NULL);  // reuses the template capture
 *   flashps_image_save("out.png", &result);
 *   flashps_image_free(&result); flashps_image_free(&mask); flashps_image_free(&image);
 *   flashps_editor_close(editor);
 *
 * The headers, one concept each:
 *   flashps/common.h  versions, status codes, errors, flashps_init, logging, progress, images
 *   flashps/model.h   models: weights loaded once, shared by editors and engines; families
 *   flashps/editor.h  single edits, template registration and lookup
 *   flashps/store.h   the activation store: list, stats, verify, evict, remove, gc
 *   flashps/engine.h  the serving engine (continuous batching, events, cancel, deadlines), batches
 *   flashps/mask.h    mask painting: brush strokes, rectangle/lasso fills, effective masks
 *   flashps/server.h  the HTTP server: OpenAI-compatible and native edit APIs, metrics
 *   flashps/flashps.hpp  a header-only C++ wrapper (RAII handles, exceptions, std::function)
 *
 * Conventions: every function that can fail returns a flashps_status; on failure
 * flashps_last_error() (per thread) names the file and the problem. Parameter structs begin with
 * their size and only grow: always start from the *_default_params() function. Callbacks carry
 * user_data; progress callbacks return 0 to cancel (the operation returns FLASHPS_CANCELLED).
 * Each header documents the thread safety of its handles.
 */
#ifndef FLASHPS_FLASHPS_H
#define FLASHPS_FLASHPS_H

#include "flashps/common.h"
#include "flashps/editor.h"
#include "flashps/engine.h"
#include "flashps/mask.h"
#include "flashps/model.h"
#include "flashps/server.h"
#include "flashps/store.h"

#endif /* FLASHPS_FLASHPS_H */
