/* FROZEN at plugin ABI version 1: a byte-for-byte copy of flashps/plugin.h as version 1 shipped.
 * It must never change: test plugins built against it prove that plugins built for version 1 keep
 * loading, and abi_v1_layout.c checks that later headers only append fields. */
/* FlashPS plugin ABI, version 1: filters that any FlashPS host (flashps plugin run, flashps-paint,
 * your own program through flashps/plugin_host.hpp) loads from a shared library.
 *
 * The model is Photoshop's filter plugins: the library exports one function that returns a
 * descriptor (name, parameters, needs); the host then calls the descriptor's `main` with a
 * selector, in this order, handing it a filter record whose suites are the host's services:
 *
 *   PREPARE     allocate your state in record->instance; check the inputs; ask for a bigger canvas
 *               (parameter values can already be read here)
 *   PARAMETERS  read your parameter values (already checked against your schema) and validate them
 *   START       begin the work
 *   ADVANCE     called again and again while you return FLASHPS_PLUGIN_OK, until you return
 *               FLASHPS_PLUGIN_DONE (one variation, one band of rows per call)
 *   FINISH      always called once PREPARE has run, after success, error or cancel (even when
 *               PREPARE failed, so record->instance may still be NULL): free your state
 *
 * The host calls every selector on one thread, and the suites may be called from that thread or
 * from threads the plugin's own calls run callbacks on (an edit's progress callback): they are
 * thread-safe.
 * Any selector may return FLASHPS_PLUGIN_CANCELLED (check suites->progress->aborted often) or
 * FLASHPS_PLUGIN_ERROR (say why first, with suites->log->set_error).
 *
 * Quick start, a filter that inverts the selected pixels:
 *
 *   #include <flashps/plugin.h>
 *   static int32_t invert_main(int32_t selector, flashps_filter_record* record) {
 *     const flashps_host_suites* suites = record->suites;
 *     if (selector == FLASHPS_SELECTOR_ADVANCE) return FLASHPS_PLUGIN_DONE;  // all done in START
 *     if (selector != FLASHPS_SELECTOR_START) return FLASHPS_PLUGIN_OK;
 *     flashps_image source, selection, result;
 *     suites->image->source(record->host, &source);
 *     int has_selection = suites->image->selection(record->host, &selection);
 *     if (suites->image->new_result(record->host, source.width, source.height, &result) != 0)
 *       return FLASHPS_PLUGIN_ERROR;
 *     for (uint32_t i = 0; i < source.width * source.height; ++i)
 *       for (uint32_t c = 0; c < source.channels; ++c) {
 *         uint8_t value = source.pixels[i * source.channels + c];
 *         int selected = !has_selection || selection.pixels[i] >= 128;
 *         result.pixels[i * source.channels + c] = selected && c < 3 ? 255 - value : value;
 *       }
 *     return FLASHPS_PLUGIN_OK;
 *   }
 *   static const flashps_plugin_descriptor invert = {
 *     sizeof(flashps_plugin_descriptor), FLASHPS_PLUGIN_ABI_VERSION, "example.invert", "Invert",
 *     "1.0", "Example Inc.", "Adjust", "Inverts the selection", 0, NULL, 0, invert_main};
 *   FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi) {
 *     (void)host_abi;
 *     return &invert;
 *   }
 *
 * Compatibility: every struct begins with its size and only grows. A host passes tables at least
 * as large as version 1's; read a field added later only when FLASHPS_PLUGIN_HAS_FIELD says the
 * table holds it. A host refuses a descriptor that asks for a newer ABI than it has.
 *
 * Plugins use only this header and the types of flashps/common.h, editor.h and store.h: the
 * engine suite hands over the public C API's functions, so a plugin links nothing of FlashPS.
 * The host runs third-party plugins in a separate process (flashps-plugin-runner) by default: a
 * plugin that crashes, hangs or runs out of memory stops there, and the host reports it.
 */
#ifndef FLASHPS_PLUGIN_H
#define FLASHPS_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "flashps/common.h"
#include "flashps/editor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLASHPS_PLUGIN_ABI_VERSION 1u
/* The one symbol a plugin library exports (type flashps_plugin_entry_fn). */
#define FLASHPS_PLUGIN_ENTRY_SYMBOL "flashps_plugin_entry"

#if defined(_WIN32)
#define FLASHPS_PLUGIN_EXPORT __declspec(dllexport)
#else
#define FLASHPS_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Whether a size-prefixed table `pointer` (of struct type `type`) holds `field`. */
#define FLASHPS_PLUGIN_HAS_FIELD(pointer, type, field) \
  ((pointer) != NULL && (pointer)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

typedef enum flashps_plugin_selector {
  FLASHPS_SELECTOR_PREPARE = 1,
  FLASHPS_SELECTOR_PARAMETERS = 2,
  FLASHPS_SELECTOR_START = 3,
  FLASHPS_SELECTOR_ADVANCE = 4,
  FLASHPS_SELECTOR_FINISH = 5
} flashps_plugin_selector;

typedef enum flashps_plugin_result {
  FLASHPS_PLUGIN_OK = 0,
  FLASHPS_PLUGIN_DONE = 1,      /* ADVANCE: the work is complete */
  FLASHPS_PLUGIN_CANCELLED = 2, /* the host's abort check said stop */
  FLASHPS_PLUGIN_ERROR = 3      /* failed; the reason was given with log->set_error */
} flashps_plugin_result;

typedef enum flashps_parameter_type {
  FLASHPS_PARAMETER_INT = 1,    /* minimum..maximum, default_number */
  FLASHPS_PARAMETER_FLOAT = 2,  /* minimum..maximum, default_number */
  FLASHPS_PARAMETER_BOOL = 3,   /* default_number 0 or 1 */
  FLASHPS_PARAMETER_STRING = 4, /* default_text; at most maximum bytes of UTF-8 (0: 4096) */
  FLASHPS_PARAMETER_CHOICE = 5  /* choices "a|b|c", default_text one of them */
} flashps_parameter_type;

typedef struct flashps_parameter_spec {
  size_t struct_size;        /* sizeof(flashps_parameter_spec) */
  const char* key;           /* [a-z][a-z0-9_]*, unique within the plugin: --param key=value */
  const char* label;         /* shown in the host's dialog */
  const char* description;   /* a tooltip; may be NULL */
  int32_t type;              /* flashps_parameter_type */
  double minimum, maximum;
  double default_number;
  const char* default_text;
  const char* choices;
} flashps_parameter_spec;

enum {
  FLASHPS_PLUGIN_NEEDS_MASK = 1u << 0,  /* refuses to run without a selection */
  FLASHPS_PLUGIN_NEEDS_MODEL = 1u << 1, /* uses the engine suite (the host opens a model) */
  FLASHPS_PLUGIN_TAKES_TEXT = 1u << 2   /* has a prompt parameter the host may put forward */
};

typedef struct flashps_host_context flashps_host_context; /* opaque: pass it to every suite call */

typedef struct flashps_image_suite {
  size_t struct_size;
  /* The image the filter runs on (RGB or RGBA), after any expand_canvas. The host owns it. */
  void (*source)(flashps_host_context* host, flashps_image* image);
  /* The selection as a 1-channel mask of the source's size (255 = edit, 0 = keep, values between
   * partly); returns 1, or 0 and an empty image when there is none. After expand_canvas the new
   * border is the selection. */
  int32_t (*selection)(flashps_host_context* host, flashps_image* mask);
  /* PREPARE only: grow the canvas by these many pixels on each side (each 0..4096). The host pads
   * the source by repeating its edge pixels and selects the new border. Returns 0, or -1. */
  int32_t (*expand_canvas)(flashps_host_context* host, int32_t left, int32_t top, int32_t right, int32_t bottom);
  /* A new result of this size, with the source's channels, zero-filled, owned by the host; write
   * into result->pixels. Call it again for more results (variations). Returns 0, or -1 when the
   * host refuses the size or has no memory (the reason is logged). */
  int32_t (*new_result)(flashps_host_context* host, uint32_t width, uint32_t height, flashps_image* result);
} flashps_image_suite;

typedef struct flashps_progress_suite {
  size_t struct_size;
  /* `done` of `total` units of the named stage; returns nonzero to go on, 0 when cancelled. */
  int32_t (*report)(flashps_host_context* host, const char* stage, int32_t done, int32_t total);
  /* Nonzero once the user cancelled: return FLASHPS_PLUGIN_CANCELLED soon. */
  int32_t (*aborted)(flashps_host_context* host);
} flashps_progress_suite;

typedef enum flashps_plugin_log_level {
  FLASHPS_PLUGIN_LOG_DEBUG = 0,
  FLASHPS_PLUGIN_LOG_INFO = 1,
  FLASHPS_PLUGIN_LOG_WARNING = 2
} flashps_plugin_log_level;

typedef struct flashps_log_suite {
  size_t struct_size;
  void (*message)(flashps_host_context* host, int32_t level, const char* text);
  /* The reason shown to the user when a selector returns FLASHPS_PLUGIN_ERROR. */
  void (*set_error)(flashps_host_context* host, const char* text);
  /* A line for the result's report ("cache hit", "mask grown by 8 px"). */
  void (*note)(flashps_host_context* host, const char* text);
} flashps_log_suite;

typedef struct flashps_parameter_suite {
  size_t struct_size;
  /* Values the host checked against the schema (defaults where the user gave none). Strings and
   * choices stay valid until FINISH. An unknown key or a wrong type gives 0 / "". */
  int64_t (*get_int)(flashps_host_context* host, const char* key);
  double (*get_float)(flashps_host_context* host, const char* key);
  int32_t (*get_bool)(flashps_host_context* host, const char* key);
  const char* (*get_string)(flashps_host_context* host, const char* key);
} flashps_parameter_suite;

/* The FlashPS edit engine and its template cache: the public C API (flashps/editor.h), handed
 * over so that a plugin links nothing. Edits of an image whose template was registered reuse its
 * captured activations and compute only the selection. */
typedef struct flashps_engine_suite {
  size_t struct_size;
  /* The host's model, opened on first use (seconds; progress is reported as "load"). NULL when
   * the host has none or it failed to open: the reason is in last_error(). Owned by the host. */
  flashps_editor* (*editor)(flashps_host_context* host);
  /* Fills the first params->struct_size bytes (set it to sizeof(flashps_edit_params) first) with
   * the defaults: a fill rather than a returned struct, so a plugin built with an older, smaller
   * flashps_edit_params is never written past its end. */
  void (*edit_default_params)(flashps_edit_params* params);
  flashps_status (*editor_info)(const flashps_editor* editor, flashps_model_info* info);
  flashps_status (*template_lookup)(flashps_editor* editor, const flashps_image* image, const flashps_image* mask,
                                    const flashps_edit_params* params, int* found);
  flashps_status (*template_register_masked)(flashps_editor* editor, const flashps_image* image,
                                             const flashps_image* mask, const flashps_edit_params* params,
                                             int capture_kv, int capture_hidden, flashps_edit_stats* stats);
  flashps_status (*edit)(flashps_editor* editor, const flashps_image* image, const flashps_image* mask,
                         const flashps_edit_params* params, flashps_image* result, flashps_edit_stats* stats);
  void (*image_free)(flashps_image* image);
  const char* (*last_error)(void);
  /* Tells the host how an edit went (cache hit, template, seconds, notes) for its report. */
  void (*report_edit)(flashps_host_context* host, const flashps_edit_stats* stats);
} flashps_engine_suite;

typedef struct flashps_memory_suite {
  size_t struct_size;
  /* Scratch memory counted against the run's budget and freed by the host after FINISH; NULL
   * when over budget. */
  void* (*allocate)(flashps_host_context* host, size_t bytes);
  void (*release)(flashps_host_context* host, void* memory);
} flashps_memory_suite;

typedef struct flashps_host_suites {
  size_t struct_size;
  const flashps_image_suite* image;
  const flashps_progress_suite* progress;
  const flashps_log_suite* log;
  const flashps_parameter_suite* parameters;
  const flashps_engine_suite* engine; /* NULL when the host offers no model */
  const flashps_memory_suite* memory;
} flashps_host_suites;

typedef struct flashps_filter_record {
  size_t struct_size;         /* sizeof(flashps_filter_record) of the host */
  uint32_t host_abi_version;  /* FLASHPS_PLUGIN_ABI_VERSION of the host */
  void* instance;             /* yours: set it in PREPARE, free it in FINISH */
  const flashps_host_suites* suites;
  flashps_host_context* host;
} flashps_filter_record;

/* Returns a flashps_plugin_result. */
typedef int32_t (*flashps_plugin_main_fn)(int32_t selector, flashps_filter_record* record);

typedef struct flashps_plugin_descriptor {
  size_t struct_size;        /* sizeof(flashps_plugin_descriptor) */
  uint32_t abi_version;      /* FLASHPS_PLUGIN_ABI_VERSION you built with */
  const char* name;          /* unique id, [a-z0-9._-]: "acme.posterize" */
  const char* title;         /* menu text */
  const char* version;
  const char* vendor;
  const char* category;      /* menu group: "Generative", "Adjust", ... */
  const char* description;
  uint32_t flags;            /* FLASHPS_PLUGIN_NEEDS_MASK | ... */
  const flashps_parameter_spec* parameters;
  uint32_t parameter_count;
  flashps_plugin_main_fn main;
} flashps_plugin_descriptor;

/* The exported entry point: the descriptor (static storage), or NULL when this plugin cannot
 * work with a host of `host_abi_version`. */
typedef const flashps_plugin_descriptor* (*flashps_plugin_entry_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* FLASHPS_PLUGIN_H */
