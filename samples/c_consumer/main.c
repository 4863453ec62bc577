/* A C program that uses an installed FlashPS (the C API, flashps/flashps.h):
 *   1. opens the bundled model (flashps_editor_open(NULL, ...)) with an activation store in OUT_DIR,
 *   2. registers a template, then edits it: the edit replays the template's capture (cache hit),
 *   3. cancels an edit from its progress callback (FLASHPS_CANCELLED).
 * Usage: c_consumer OUT_DIR   (OUT_DIR must exist; receives store/ and edited.png)
 * Prints what it did; exits 1 on any unexpected outcome. */
#include <flashps/flashps.h>

#include <stdio.h>
#include <string.h>

/* Reports a failed call with the library's message and makes main() fail. */
static int failed(const char* what, flashps_status status) {
  fprintf(stderr, "c_consumer: %s failed: %s: %s\n", what, flashps_status_name(status), flashps_last_error());
  return 1;
}

/* A 256x256 RGB template (smooth colour ramps with a checkered patch) and a mask over its
 * centre: the program needs no image files. */
static flashps_status make_inputs(flashps_image* image, flashps_image* mask) {
  flashps_status status = flashps_image_create(256, 256, 3, image);
  if (status != FLASHPS_OK) return status;
  status = flashps_image_create(256, 256, 1, mask);
  if (status != FLASHPS_OK) return status;
  for (uint32_t y = 0; y < 256; ++y) {
    for (uint32_t x = 0; x < 256; ++x) {
      uint8_t* pixel = image->pixels + 3 * (y * 256 + x);
      const int checker = ((x / 16 + y / 16) % 2) * 40;
      pixel[0] = (uint8_t)(x * 3 / 4 + checker);
      pixel[1] = (uint8_t)(y * 3 / 4 + checker);
      pixel[2] = (uint8_t)(160 - checker);
      mask->pixels[y * 256 + x] = (x >= 96 && x < 160 && y >= 96 && y < 160) ? 255 : 0;
    }
  }
  return FLASHPS_OK;
}

/* Progress callback of the edit to cancel: returns 0 (cancel) at the first denoising step. */
typedef struct cancel_state {
  int calls;
  char cancelled_at[32];
} cancel_state;

static int cancel_at_denoise(const char* stage, int step, int total_steps, double stage_seconds, void* user_data) {
  cancel_state* state = (cancel_state*)user_data;
  (void)step;
  (void)total_steps;
  (void)stage_seconds;
  ++state->calls;
  if (strcmp(stage, "denoise") != 0) return 1;
  snprintf(state->cancelled_at, sizeof state->cancelled_at, "%s", stage);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_consumer OUT_DIR\n");
    return 2;
  }
  char store_dir[4096], output_path[4096];
  snprintf(store_dir, sizeof store_dir, "%s/store", argv[1]);
  snprintf(output_path, sizeof output_path, "%s/edited.png", argv[1]);

  flashps_status status;
  flashps_runtime_options runtime = flashps_runtime_default_options();
  if ((status = flashps_init(&runtime)) != FLASHPS_OK) return failed("flashps_init", status);
  printf("library: FlashPS %s, API %d, ABI %d\n", flashps_version_string(), flashps_api_version(),
         flashps_abi_version());
  if (flashps_abi_version() != FLASHPS_ABI_VERSION) {
    fprintf(stderr, "c_consumer: built for ABI %d, loaded ABI %d\n", FLASHPS_ABI_VERSION, flashps_abi_version());
    return 1;
  }

  flashps_store* store = NULL;
  flashps_store_params store_params = flashps_store_default_params();
  store_params.directory = store_dir;
  if ((status = flashps_store_open(&store_params, &store)) != FLASHPS_OK) return failed("flashps_store_open", status);

  flashps_editor* editor = NULL;
  flashps_editor_params editor_params = flashps_editor_default_params();
  editor_params.store = store;
  if ((status = flashps_editor_open(NULL, &editor_params, &editor)) != FLASHPS_OK)
    return failed("flashps_editor_open (bundled model)", status);
  flashps_model_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if ((status = flashps_editor_info(editor, &info)) != FLASHPS_OK) return failed("flashps_editor_info", status);
  printf("model: %s (%s, %d px, %d default steps)\n", info.model_dir,
         info.family == FLASHPS_FAMILY_FLUX ? "flux" : "stable diffusion", info.native_size, info.default_steps);

  flashps_image image = {0}, mask = {0}, result = {0};
  if ((status = make_inputs(&image, &mask)) != FLASHPS_OK) return failed("flashps_image_create", status);
  flashps_edit_params params = flashps_edit_default_params();
  params.seed = 7;

  flashps_edit_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  if ((status = flashps_template_register(editor, &image, &params, &stats)) != FLASHPS_OK)
    return failed("flashps_template_register", status);
  printf("template registered: %.2f s, %lld bytes captured\n", stats.total_seconds, (long long)stats.cache_bytes);

  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  if ((status = flashps_edit(editor, &image, &mask, &params, &result, &stats)) != FLASHPS_OK)
    return failed("flashps_edit", status);
  printf("edit: %ux%u, %s, %.2f s, mask ratio %.3f, %d blocks from the cache\n", result.width, result.height,
         stats.cache_hit ? "cache hit" : "cache miss", stats.total_seconds, stats.mask_ratio, stats.blocks_from_cache);
  if (!stats.cache_hit || result.width != image.width || result.height != image.height) {
    fprintf(stderr, "c_consumer: expected a %ux%u result replaying the registered template\n", image.width, image.height);
    return 1;
  }
  if ((status = flashps_image_save(output_path, &result)) != FLASHPS_OK) return failed("flashps_image_save", status);
  printf("saved: %s\n", output_path);
  flashps_image_free(&result);

  cancel_state cancel = {0, ""};
  flashps_edit_params cancel_params = params;
  cancel_params.steps = 4; /* a multi-step edit, cancelled at its first step */
  cancel_params.progress = cancel_at_denoise;
  cancel_params.user_data = &cancel;
  status = flashps_edit(editor, &image, &mask, &cancel_params, &result, NULL);
  if (status != FLASHPS_CANCELLED || cancel.cancelled_at[0] == '\0') {
    fprintf(stderr, "c_consumer: the edit to cancel returned %s after %d progress calls (expected FLASHPS_CANCELLED)\n",
            flashps_status_name(status), cancel.calls);
    flashps_image_free(&result);
    return 1;
  }
  printf("cancel: %s from the progress callback at stage '%s'\n", flashps_status_name(status), cancel.cancelled_at);

  flashps_store_stats store_stats;
  memset(&store_stats, 0, sizeof store_stats);
  store_stats.struct_size = sizeof store_stats;
  if ((status = flashps_store_get_stats(store, &store_stats)) != FLASHPS_OK)
    return failed("flashps_store_get_stats", status);
  printf("store: %s, %lld capture(s), %lld bytes\n", flashps_store_directory(store), (long long)store_stats.captures,
         (long long)store_stats.bytes);
  if (store_stats.captures < 1) {
    fprintf(stderr, "c_consumer: the registered template is not in the store\n");
    return 1;
  }

  flashps_image_free(&mask);
  flashps_image_free(&image);
  flashps_editor_close(editor);
  flashps_store_close(store);
  printf("c_consumer: all checks passed\n");
  return 0;
}
