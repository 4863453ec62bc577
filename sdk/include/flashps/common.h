/* FlashPS public C API: what every other header uses — the export macro, versions, status codes,
 * errors, process-wide initialisation, logging, progress callbacks and 8-bit images.
 *
 * ABI rules (ONNX Runtime's): handles are opaque; every params/stats struct begins with
 * `size_t struct_size` and only grows at its end. Start from the *_default_params() function (or
 * set struct_size = sizeof(the struct)); the library accepts any size from the struct's first
 * published layout up to its own, keeps its defaults for fields past the caller's size, and
 * refuses (FLASHPS_INVALID_ARGUMENT) a size of zero, a size below the first layout, or a larger
 * size whose extra bytes are not all zero.
 *
 * Errors: every call that can fail returns a flashps_status; flashps_last_error() then holds a
 * message for the calling thread that names the file or object and the problem.
 */
#ifndef FLASHPS_COMMON_H
#define FLASHPS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define FLASHPS_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define FLASHPS_EXPORT __attribute__((visibility("default")))
#else
#define FLASHPS_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The C API's version: raised when functions or struct fields are added (never removed). */
#define FLASHPS_API_VERSION 8
/* The ABI's version: raised only by a change that breaks programs built against an older one. */
#define FLASHPS_ABI_VERSION 1

typedef enum flashps_status {
  FLASHPS_OK = 0,
  FLASHPS_ERROR = 1,              /* a failed operation not covered below */
  FLASHPS_CANCELLED = 2,          /* a callback returned 0, or the request was cancelled */
  FLASHPS_INVALID_ARGUMENT = 3,   /* NULL pointer, bad struct_size, value out of range, ... */
  FLASHPS_NOT_FOUND = 4,          /* a file, folder, template or capture that does not exist */
  FLASHPS_IO_ERROR = 5,           /* reading or writing failed (permissions, full disk, ...) */
  FLASHPS_CORRUPT_DATA = 6,       /* a file exists but its content is malformed */
  FLASHPS_OUT_OF_MEMORY = 7,
  FLASHPS_UNSUPPORTED = 8,        /* valid, but not something this build or model does */
  FLASHPS_REJECTED = 9,           /* the serving engine's queue is full or it is shutting down */
  FLASHPS_DEADLINE_EXCEEDED = 10  /* a serving request ran past its deadline */
} flashps_status;

/* "FLASHPS_NOT_FOUND" etc.; never NULL. */
FLASHPS_EXPORT const char* flashps_status_name(flashps_status status);
/* The message of the calling thread's last failed call ("" after a successful one). */
FLASHPS_EXPORT const char* flashps_last_error(void);
/* FLASHPS_API_VERSION and FLASHPS_ABI_VERSION of the library loaded at run time. */
FLASHPS_EXPORT int flashps_api_version(void);
FLASHPS_EXPORT int flashps_abi_version(void);
/* The library's version, e.g. "0.2.0". */
FLASHPS_EXPORT const char* flashps_version_string(void);

typedef enum flashps_log_level {
  FLASHPS_LOG_DEBUG = 0,
  FLASHPS_LOG_INFO = 1,
  FLASHPS_LOG_WARNING = 2,
  FLASHPS_LOG_ERROR = 3
} flashps_log_level;

/* Receives the library's log lines (one line, no trailing newline). Called from any thread the
 * library runs work on; keep it short and thread-safe. */
typedef void (*flashps_log_callback)(flashps_log_level level, const char* message, void* user_data);

/* Process-wide settings. The library changes none of them unless flashps_init() is called:
 * without it LibTorch keeps its own thread count and glibc malloc its defaults. */
typedef struct flashps_runtime_options {
  size_t struct_size;        /* sizeof(flashps_runtime_options) */
  int threads;               /* compute threads; 0: FLASHPS_THREADS if set, else all cores */
  int keep_freed_memory;     /* nonzero: tune malloc to keep freed memory (much faster with LibTorch
                                on CPUs: its large buffers otherwise go back to the OS after every
                                operation); 0: leave malloc alone */
  flashps_log_callback log;  /* NULL: warnings and errors go to stderr */
  void* log_user_data;
  flashps_log_level log_level; /* lines below this level are dropped */
} flashps_runtime_options;

FLASHPS_EXPORT flashps_runtime_options flashps_runtime_default_options(void);
/* Applies the options. May be called again (the thread count and log settings change; the
 * malloc tuning is applied once). Thread-safe, but call it before starting work: changing the
 * thread count while models run on other threads is allowed yet slows them down. */
FLASHPS_EXPORT flashps_status flashps_init(const flashps_runtime_options* options);
/* Threads the library computes with now. */
FLASHPS_EXPORT int flashps_threads(void);

/* Progress of a long operation: stage is "load", "encode", "denoise", "decode", "capture",
 * "verify", "batch", ...; step of total_steps done so far in that stage. Return nonzero to go on,
 * 0 to cancel (the operation then returns FLASHPS_CANCELLED). */
typedef int (*flashps_progress_callback)(const char* stage, int step, int total_steps,
                                         double stage_seconds, void* user_data);

/* 8-bit interleaved pixels, row-major, no padding; channels 1 (mask/grey), 3 (RGB) or 4 (RGBA).
 * Images the library returns own their pixels: release them with flashps_image_free(). */
typedef struct flashps_image {
  uint32_t width;
  uint32_t height;
  uint32_t channels;
  uint8_t* pixels;
} flashps_image;

/* Reads a PNG or JPEG. FLASHPS_NOT_FOUND, FLASHPS_CORRUPT_DATA (also a JPEG whose data ends before
 * the size its header declares), FLASHPS_IO_ERROR name the file. An image over the budget is
 * refused right after its header, before its pixels are allocated (FLASHPS_UNSUPPORTED): 16384
 * pixels a side, 64 million pixels (environment FLASHPS_MAX_IMAGE_PIXELS) and 1 GiB of decoding
 * memory (FLASHPS_MAX_IMAGE_BYTES, in bytes); a malformed value of either is
 * FLASHPS_INVALID_ARGUMENT. An RGBA image stays RGBA; edits keep its alpha. */
FLASHPS_EXPORT flashps_status flashps_image_load(const char* path, flashps_image* image);
/* Decodes PNG or JPEG bytes held in memory; `name` is used in messages. */
FLASHPS_EXPORT flashps_status flashps_image_decode(const void* bytes, size_t size, const char* name,
                                                   flashps_image* image);
/* flashps_image_decode within the caller's pixel budget (API 3): an image whose header declares
 * more than max_pixels (> 0) is refused before its pixels are allocated, with
 * FLASHPS_UNSUPPORTED; the process-wide budgets above still apply. For servers that take images
 * from the network. */
FLASHPS_EXPORT flashps_status flashps_image_decode_bounded(const void* bytes, size_t size, const char* name,
                                                           int64_t max_pixels, flashps_image* image);
/* Encodes into a new buffer (API 3; release it with flashps_buffer_free): format "png" (fast
 * compression, zlib level 1) or "jpeg" (quality 95, alpha dropped). */
FLASHPS_EXPORT flashps_status flashps_image_encode(const flashps_image* image, const char* format, void** bytes,
                                                   size_t* size);
/* Frees a buffer the library returned; NULL is fine. */
FLASHPS_EXPORT void flashps_buffer_free(void* bytes);
/* Writes .png or .jpg/.jpeg (by extension). */
FLASHPS_EXPORT flashps_status flashps_image_save(const char* path, const flashps_image* image);
/* A new image of the given size, all zero (free it). */
FLASHPS_EXPORT flashps_status flashps_image_create(uint32_t width, uint32_t height, uint32_t channels,
                                                   flashps_image* image);
/* Frees pixels the library allocated and zeroes the struct; NULL and empty images are fine. */
FLASHPS_EXPORT void flashps_image_free(flashps_image* image);

#ifdef __cplusplus
}
#endif

#endif /* FLASHPS_COMMON_H */
