/* FlashPS public C API: models — a model's weights, loaded once and shared by the editors and
 * serving engines opened over it (reference-counted: the weights are freed with the last user).
 *
 *   flashps_model* model = NULL;
 *   flashps_model_params params = flashps_model_default_params();
 *   flashps_model_open(NULL, &params, &model);         // NULL: the bundled model
 *   flashps_editor* editor = NULL;  flashps_engine* engine = NULL;
 *   flashps_editor_open_model(model, NULL, &editor);   // both use the same weights
 *   flashps_engine_open_model(model, NULL, &engine);
 *   flashps_model_free(model);                         // they keep their own references
 *
 * The family (Flux, Stable Diffusion 1.x/2.x/XL, ...) is detected from the folder; a model of a
 * family FlashPS does not support is refused with FLASHPS_UNSUPPORTED, naming what it is and what
 * is supported.
 *
 * Single files (API 8): the path may also name one .safetensors checkpoint (the original Stable
 * Diffusion / SDXL keys, Black Forest Labs' or ComfyUI's Flux keys, or a file FlashPS wrote) or a
 * .gguf file. Its type is recognised from its tensors (model_type overrides); the parts it lacks
 * come from the component files in the params (vae_path, ...), and a missing one is refused
 * naming the parameter to set (the CLI's --vae etc.). Pickled checkpoints (.ckpt, .pt, .bin) are
 * refused with FLASHPS_UNSUPPORTED: loading a pickle runs code from the file.
 *
 * Thread safety: a model handle may be used from any thread; editors and engines over one model
 * run at the same time.
 */
#ifndef FLASHPS_MODEL_H
#define FLASHPS_MODEL_H

#include "flashps/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum flashps_model_family {
  FLASHPS_FAMILY_OTHER = 0,            /* a family an embedding program registered (API 6): see family_name */
  FLASHPS_FAMILY_FLUX = 1,             /* FluxTransformer2DModel folders, the bundled model */
  FLASHPS_FAMILY_STABLE_DIFFUSION = 2  /* UNet2DConditionModel folders: SD 1.x, 2.x, XL */
} flashps_model_family;

typedef struct flashps_model_info {
  size_t struct_size;          /* sizeof(flashps_model_info), set by the caller */
  flashps_model_family family;
  const char* model_dir;       /* the folder loaded (owned by the handle described) */
  const char* fingerprint;     /* hash of configs and weight headers (owned by the handle described) */
  const char* device;          /* "cpu", "cuda:0", ... (owned by the handle described) */
  int native_size;             /* pixels per side it was trained at; 0 = any */
  int takes_text;              /* encodes prompts (else prompts are ignored, with a note) */
  int default_steps;           /* steps used when flashps_edit_params.steps is 0 */
  int is_fill;                 /* Fill conditioning / 9-channel inpainting model */
  int unconditional;           /* trained without prompts (the bundled model) */
  int recommends_texture_transfer;
  int bf16;
  /* ---- added in API 6 ---- */
  const char* family_name;     /* the family's registry name: "flux", "stable-diffusion", ... */
} flashps_model_info;

typedef struct flashps_model flashps_model; /* opaque */

/* API 6. */
typedef struct flashps_model_params {
  size_t struct_size;        /* sizeof(flashps_model_params) */
  int bf16;                  /* nonzero: bfloat16 weights and products */
  const char* device;        /* NULL or "cpu"; "cuda" (first GPU), "cuda:N", "auto" (a GPU, else CPU) */
  flashps_progress_callback progress; /* loading progress ("load"); return 0 to cancel */
  void* user_data;
  /* ---- added in API 8: single-file models (all NULL for a diffusers folder) ---- */
  const char* vae_path;            /* a VAE file (Flux ae.safetensors, an SD VAE) or a diffusers vae/ folder */
  const char* text_encoder_path;   /* CLIP-L (clip_l.safetensors) */
  const char* text_encoder_2_path; /* Flux: T5-XXL (t5xxl_fp16 / t5xxl_fp8_e4m3fn); SDXL: CLIP-G */
  /* NULL: recognised from the file. Else one of sd15, sd15-inpaint, sd2 (512 px, epsilon), sd2-v
   * (768 px, v-prediction), sd2-inpaint, sdxl, sdxl-inpaint, flux-dev, flux-schnell, flux-fill;
   * within the family the file's tensors show. */
  const char* model_type;
  const char* tokenizers_dir;      /* a diffusers folder with tokenizer/ (tokenizer_2/); default: beside the file */
} flashps_model_params;

FLASHPS_EXPORT flashps_model_params flashps_model_default_params(void);
/* Loads a model folder or single model file (NULL: flashps_default_model_dir()). */
FLASHPS_EXPORT flashps_status flashps_model_open(const char* model_dir, const flashps_model_params* params,
                                                 flashps_model** model);
/* What a model folder or single file is, without loading its weights (API 8; `flashps model
 * info`): a JSON object as NUL-terminated text in a new buffer (release it with
 * flashps_buffer_free) with keys family, variant, description, parameters, tensor_groups (the
 * stored types of each group's tensors: F16, BF16, F8_E4M3, Q8_0, Q4_K, ...), components (each
 * present, or a message naming the parameter to set: "no VAE in this file: pass --vae FILE"),
 * fingerprint (as flashps_model_info reports it once loaded). params may be NULL; its API-8
 * fields apply. A file FlashPS does not load fails as flashps_model_open would, saying what it
 * looks like. */
FLASHPS_EXPORT flashps_status flashps_model_describe(const char* path, const flashps_model_params* params,
                                                     char** json);
/* Drops this handle's reference; editors and engines opened over the model keep theirs. NULL is fine. */
FLASHPS_EXPORT void flashps_model_free(flashps_model* model);
/* Strings point into the model handle (valid until it is freed). */
FLASHPS_EXPORT flashps_status flashps_model_get_info(const flashps_model* model, flashps_model_info* info);

#ifdef __cplusplus
}
#endif

#endif /* FLASHPS_MODEL_H */
