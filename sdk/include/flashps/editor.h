/* FlashPS public C API: editors — a loaded model (Flux / Flux Fill, Stable Diffusion 1.x/2.x/XL,
 * or the bundled default model) that edits images one at a time, with template registration for
 * mask-aware edits.
 *
 * Thread safety: an editor may be used from several threads; its calls are serialised (one edit
 * runs at a time per editor; others wait). Two editors run in parallel. For many concurrent
 * edits use the serving engine (flashps/engine.h), which batches them.
 */
#ifndef FLASHPS_EDITOR_H
#define FLASHPS_EDITOR_H

#include "flashps/common.h"
#include "flashps/model.h"
#include "flashps/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One concept, one name everywhere (API, CLI --cache, serving manifests). */
typedef enum flashps_cache_mode {
  FLASHPS_CACHE_AUTO = 0,  /* reuse a registered template when there is one, else compute in full */
  FLASHPS_CACHE_FULL = 1,  /* always compute every token */
  FLASHPS_CACHE_KV = 2,    /* cached keys/values of unmasked tokens (Flux) */
  FLASHPS_CACHE_HIDDEN = 3 /* cached block outputs of unmasked tokens (Flux, Stable Diffusion) */
} flashps_cache_mode;

/* Its name: "auto", "full", "kv", "hidden" (API 6; the CLI's --cache, manifests' and HTTP's
 * "cache"); NULL for a value outside the enum. */
FLASHPS_EXPORT const char* flashps_cache_mode_name(flashps_cache_mode mode);
/* The mode a name means (API 6); FLASHPS_INVALID_ARGUMENT naming the choices otherwise. */
FLASHPS_EXPORT flashps_status flashps_cache_mode_from_name(const char* name, flashps_cache_mode* mode);

typedef struct flashps_editor flashps_editor; /* opaque */

typedef struct flashps_editor_params {
  size_t struct_size;        /* sizeof(flashps_editor_params) */
  int threads;               /* ignored since API 2: threads are set by flashps_init() */
  int bf16;                  /* nonzero: bfloat16 weights and products */
  const char* capture_dir;   /* activation store folder; NULL: captures in memory (unless `store`) */
  const char* device;        /* NULL or "cpu"; "cuda" (first GPU), "cuda:N", "auto" (a GPU, else CPU) */
  /* ---- added in API 2 ---- */
  flashps_store* store;      /* an open store to share (takes precedence over capture_dir) */
  flashps_progress_callback progress; /* loading progress ("load"); return 0 to cancel */
  void* user_data;
} flashps_editor_params;

/* The bounds of flashps_edit_params (API 6): one set for every front end, checked by
 * flashps_edit_params_check (and by every edit). For help text; the messages name them too. */
#define FLASHPS_MAX_STEPS 1000            /* steps: 0 (the model's recommendation) to this */
#define FLASHPS_MAX_GUIDANCE_SCALE 100    /* guidance_scale: 0 to this (< 0: the model's default) */
#define FLASHPS_MAX_MASK_PIXELS 16384     /* grow / feather: 0 to this, and to the image's longer side */
#define FLASHPS_MAX_TOKEN_DILATION 1024   /* token_dilation: 0 to this, and to the token grid's longer side */
#define FLASHPS_MAX_CONTEXT_SIZE 16384    /* context_size: < 0 whole image, 0 native, else 1 to this */
#define FLASHPS_MAX_SEQUENCE_LENGTH 512   /* max_sequence_length: 0 (the model's default) to this */

typedef struct flashps_edit_params {
  size_t struct_size;  /* sizeof(flashps_edit_params) */
  uint64_t seed;
  int steps;               /* 0: the model's recommendation (28 unless its model_index.json names one) */
  float strength;          /* (0, 1] */
  float guidance_scale;    /* < 0: the model's default; else at most FLASHPS_MAX_GUIDANCE_SCALE */
  int mask_grow_pixels;    /* paste-back mask: grow, then feather (pixels, >= 0) */
  int mask_feather_pixels;
  int token_dilation;      /* extra ring of recomputed tokens around the mask (>= 0) */
  flashps_cache_mode cache_mode;
  const char* prompt_embeds_path; /* safetensors with prompt_embeds/pooled_prompt_embeds (Flux) */
  flashps_progress_callback progress;
  void* user_data;
  int texture_transfer;    /* fine detail from the surroundings: -1 as the model recommends, 0 off, 1 on */
  /* ---- added in API 2 ---- */
  const char* prompt;          /* models that take text (flashps_model_info.takes_text); NULL: "" */
  const char* negative_prompt; /* classifier-free guidance; NULL: "" */
  int context_size;        /* edit larger images through a window of this many pixels around the
                              mask: 0 the model's native size, < 0 always the whole image */
  /* ---- added in API 4 ---- */
  /* Flux folders with text encoders: T5 tokens of the prompt (FluxPipeline's max_sequence_length),
   * 1..512; 0 the model's default (512). 64-bit so that it starts past API 3's tail padding, which
   * an API 3 caller's struct_size covers. */
  int64_t max_sequence_length;
} flashps_edit_params;

typedef struct flashps_edit_stats {
  size_t struct_size;  /* sizeof(flashps_edit_stats), set by the caller */
  double total_seconds;
  double denoise_seconds;
  double mask_ratio;   /* masked tokens / tokens */
  int cache_hit;       /* a registered template was reused */
  flashps_cache_mode mode_used;
  int steps_run;
  int64_t cache_bytes; /* bytes read from a capture, or captured by a registration */
  /* ---- added in API 2 ---- */
  double encode_seconds;
  double decode_seconds;
  int width, height;   /* processing size */
  double compute_saving; /* FLOPs of a full step / FLOPs of a step as run */
  int blocks_from_cache, blocks_computed;
  int entries_failed;  /* damaged cache entries that were computed instead */
  /* User-facing notes, one per line (mask resized, template miss, cache fallback, ...); "" if
   * none. Owned by the library: valid until the calling thread's next call that fills stats, or
   * (engine results) until the request is freed. */
  const char* notes;
  int note_count;
  /* The template's key in the store (hex), owned as notes is: set by registrations and by edits
   * that reused a capture; "" otherwise. flashps_store_remove takes it (or a prefix). */
  const char* template_hash;
  /* ---- added in API 4 ---- */
  int prompt_cache_hit; /* the prompt's embeddings came from the store: no text encoder ran */
} flashps_edit_stats;


FLASHPS_EXPORT flashps_editor_params flashps_editor_default_params(void);
FLASHPS_EXPORT flashps_edit_params flashps_edit_default_params(void);
/* Checks params as flashps_edit and flashps_engine_submit do, without an image or a model (API 6),
 * so a front end can answer bad input before loading one: FLASHPS_INVALID_ARGUMENT with a message
 * naming the field, its value and what it must be ("flashps_edit_params.steps is 1001; it must be
 * 0 (the model's recommendation) to 1000"), FLASHPS_NOT_FOUND for a prompt_embeds_path that does
 * not exist. The bounds that depend on the image (grow and feather at most its longer side, token
 * dilation at most the token grid's) are checked by the edit itself. */
FLASHPS_EXPORT flashps_status flashps_edit_params_check(const flashps_edit_params* params);

/* The folder flashps_editor_open(NULL, ...) loads: $FLASHPS_MODEL, else the bundled model
 * (installed under share/flashps/models, or in the source tree of a build), else a random-weight
 * stand-in created once in the cache (with a log warning). Owned by the library; stable. */
FLASHPS_EXPORT const char* flashps_default_model_dir(void);

/* Opens a model folder (diffusers layout; NULL: flashps_default_model_dir()) for this editor
 * alone: flashps_model_open, then flashps_editor_open_model. The family is detected from the
 * folder (flashps/model.h). */
FLASHPS_EXPORT flashps_status flashps_editor_open(const char* model_dir, const flashps_editor_params* params,
                                                  flashps_editor** editor);
/* An editor over an open model (API 6): it holds a reference to the model's weights, so the
 * model handle may be freed at once. params' bf16 and device must be unset (0, NULL) or match
 * the model's; its store or capture_dir is the editor's own. */
FLASHPS_EXPORT flashps_status flashps_editor_open_model(flashps_model* model, const flashps_editor_params* params,
                                                        flashps_editor** editor);
/* NULL is fine. Waits for a call in progress on another thread. */
FLASHPS_EXPORT void flashps_editor_close(flashps_editor* editor);
FLASHPS_EXPORT flashps_status flashps_editor_info(const flashps_editor* editor, flashps_model_info* info);

/* Runs the template in full and captures its activations for later edits of it. `mask` may be
 * NULL (the whole image), or the mask of the edits to come (the same window around it). On a
 * read-only store nothing runs: FLASHPS_OK with an empty stats.template_hash and a note naming
 * the fix (see flashps_store_is_read_only). */
FLASHPS_EXPORT flashps_status flashps_template_register(flashps_editor* editor, const flashps_image* image,
                                                        const flashps_edit_params* params,
                                                        flashps_edit_stats* stats);
/* Registers with a mask (see above); capture_kv / capture_hidden choose what is kept. */
FLASHPS_EXPORT flashps_status flashps_template_register_masked(flashps_editor* editor, const flashps_image* image,
                                                               const flashps_image* mask,
                                                               const flashps_edit_params* params,
                                                               int capture_kv, int capture_hidden,
                                                               flashps_edit_stats* stats);
/* Whether an edit of `image` with `mask` and these params would reuse a registered template
 * (*found = 1) — without running the model. */
FLASHPS_EXPORT flashps_status flashps_template_lookup(flashps_editor* editor, const flashps_image* image,
                                                      const flashps_image* mask,
                                                      const flashps_edit_params* params, int* found);

/* Regenerates the masked region (white = regenerate); `result` receives a new image (free it). */
FLASHPS_EXPORT flashps_status flashps_edit(flashps_editor* editor, const flashps_image* image,
                                           const flashps_image* mask, const flashps_edit_params* params,
                                           flashps_image* result, flashps_edit_stats* stats);

#ifdef __cplusplus
}
#endif

#endif /* FLASHPS_EDITOR_H */
