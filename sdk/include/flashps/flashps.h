/* FlashPS: fast mask-aware generative image editing.
 *
 * Quick start (C or C++; link the `flashps` library):
 *
 *   flashps_editor* editor = NULL;
 *   flashps_editor_params editor_params = flashps_editor_default_params();
 *   if (flashps_editor_open("path/to/model", &editor_params, &editor) != FLASHPS_OK) {
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
 * Conventions: every function returns a flashps_status; on failure flashps_last_error() (per
 * thread) names the file and the problem. Parameter structs begin with their size and only grow:
 * always start from the *_default_params() function. Callbacks carry user_data and return 0 to
 * cancel the operation (which then returns FLASHPS_CANCELLED).
 */
#ifndef FLASHPS_FLASHPS_H
#define FLASHPS_FLASHPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLASHPS_API_VERSION 1

typedef enum flashps_status {
  FLASHPS_OK = 0,
  FLASHPS_ERROR = 1,            /* bad input or failed operation: see flashps_last_error() */
  FLASHPS_CANCELLED = 2,        /* a progress callback returned 0 */
  FLASHPS_INVALID_ARGUMENT = 3  /* NULL pointer, wrong struct_size, ... */
} flashps_status;

typedef enum flashps_cache_mode {
  FLASHPS_CACHE_AUTO = 0,  /* reuse a registered template when there is one */
  FLASHPS_CACHE_FULL = 1,  /* always compute every token */
  FLASHPS_CACHE_KV = 2,    /* cached keys/values of unmasked tokens */
  FLASHPS_CACHE_HIDDEN = 3 /* cached block outputs of unmasked tokens */
} flashps_cache_mode;

/* 8-bit interleaved pixels, row-major; channels 1, 3 or 4. Images the library returns own
 * their pixels: release them with flashps_image_free(). */
typedef struct flashps_image {
  uint32_t width;
  uint32_t height;
  uint32_t channels;
  uint8_t* pixels;
} flashps_image;

/* Returns nonzero to continue, 0 to cancel. stage: "encode", "denoise", "decode", ... */
typedef int (*flashps_progress_callback)(const char* stage, int step, int total_steps,
                                         double stage_seconds, void* user_data);

typedef struct flashps_editor_params {
  size_t struct_size;        /* sizeof(flashps_editor_params) */
  int threads;               /* 0: all cores */
  int bf16;                  /* nonzero: bfloat16 weights and products */
  const char* capture_dir;   /* NULL: keep template captures in memory only */
  const char* device;        /* NULL or "cpu"; "cuda" (first GPU), "cuda:N", "auto" (a GPU, else the CPU) */
} flashps_editor_params;

typedef struct flashps_edit_params {
  size_t struct_size;  /* sizeof(flashps_edit_params) */
  uint64_t seed;
  int steps;               /* 0: the model's recommendation (28 unless its model_index.json names one) */
  float strength;          /* (0, 1] */
  float guidance_scale;    /* < 0: the model's default */
  int mask_grow_pixels;
  int mask_feather_pixels;
  int token_dilation;
  flashps_cache_mode cache_mode;
  const char* prompt_embeds_path; /* NULL: the model's stored empty-prompt embeddings */
  flashps_progress_callback progress;
  void* user_data;
  /* Fine detail of the fill copied from the surroundings: -1 as the model's folder recommends
     ("_flashps_texture_transfer"), 0 off, 1 on. Added after the first layout. */
  int texture_transfer;
} flashps_edit_params;

typedef struct flashps_edit_stats {
  size_t struct_size;  /* sizeof(flashps_edit_stats), set by the caller */
  double total_seconds;
  double denoise_seconds;
  double mask_ratio;
  int cache_hit;
  flashps_cache_mode mode_used;
  int steps_run;
  int64_t cache_bytes;  /* bytes read from a capture, or captured by a registration */
} flashps_edit_stats;

typedef struct flashps_editor flashps_editor; /* opaque */

flashps_editor_params flashps_editor_default_params(void);
flashps_edit_params flashps_edit_default_params(void);

flashps_status flashps_editor_open(const char* model_dir, const flashps_editor_params* params,
                                   flashps_editor** editor);
void flashps_editor_close(flashps_editor* editor);

/* Runs the template in full and captures its activations for later edits of it. */
flashps_status flashps_template_register(flashps_editor* editor, const flashps_image* image,
                                         const flashps_edit_params* params, flashps_edit_stats* stats);
/* Regenerates the masked region; `result` receives a new image (free it). */
flashps_status flashps_edit(flashps_editor* editor, const flashps_image* image, const flashps_image* mask,
                            const flashps_edit_params* params, flashps_image* result,
                            flashps_edit_stats* stats);

flashps_status flashps_image_load(const char* path, flashps_image* image);
flashps_status flashps_image_save(const char* path, const flashps_image* image);
void flashps_image_free(flashps_image* image);

const char* flashps_last_error(void);
int flashps_api_version(void);

#ifdef __cplusplus
}
#endif

#endif /* FLASHPS_FLASHPS_H */
