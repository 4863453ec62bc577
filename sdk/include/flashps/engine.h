/* FlashPS public C API: the serving engine — submit edits from any thread; one worker per device
 * batches them step by step (continuous batching), a pool prepares and finishes them beside it,
 * and requests are routed across devices by their real cost (mask-aware load balancing).
 *
 *   flashps_engine_params params = flashps_engine_default_params();
 *   flashps_engine* engine = NULL;
 *   flashps_engine_open(NULL, &params, &engine);            // bundled model, one CPU worker
 *   flashps_request* request = NULL;
 *   flashps_engine_submit(engine, &image, &mask, &edit_params, NULL, &request);
 *   flashps_image result = {0};
 *   flashps_request_result(request, -1, &result, NULL);      // waits; the request's outcome
 *   flashps_request_free(request);
 *   flashps_engine_close(engine);
 *
 * Every submitted request resolves exactly once: done, failed, cancelled, or past its deadline
 * (or it is rejected at submission).
 *
 * Thread safety: every function may be called from any thread; a request handle may be waited
 * on, cancelled and read from several threads. Event callbacks run on the engine's single event
 * thread, in the order each request's state changed; keep them short, and do not close the
 * engine from one.
 */
#ifndef FLASHPS_ENGINE_H
#define FLASHPS_ENGINE_H

#include "flashps/common.h"
#include "flashps/editor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flashps_engine flashps_engine;   /* opaque */
typedef struct flashps_request flashps_request; /* opaque */

/* Continuous batching variants (FlashPS §4.3) and load-balancing policies (§4.4). */
typedef enum flashps_batching {
  FLASHPS_BATCHING_CB = 0,          /* continuous batching, pre/post-processing disaggregated */
  FLASHPS_BATCHING_NAIVE_CB = 1,    /* continuous batching, pre/post inline in the step loop */
  FLASHPS_BATCHING_STATIC = 2,      /* batches run to completion together */
  FLASHPS_BATCHING_STATIC_FULL = 3  /* static, and every token computed (no template reuse) */
} flashps_batching;

typedef enum flashps_balance_policy {
  FLASHPS_BALANCE_MASK_AWARE = 0,   /* least predicted finishing time with the mask's real cost */
  FLASHPS_BALANCE_ROUND_ROBIN = 1,
  FLASHPS_BALANCE_REQUEST_COUNT = 2,
  FLASHPS_BALANCE_TOKEN_COUNT = 3
} flashps_balance_policy;

/* Names (API 6; the CLI's --batching): "cb", "naive-cb", "static", "static-full" and "mask-aware",
 * "round-robin", "request-count", "token-count"; NULL for a value outside the enum.
 * The *_from_name functions return FLASHPS_INVALID_ARGUMENT naming the choices for another name. */
FLASHPS_EXPORT const char* flashps_batching_name(flashps_batching batching);
FLASHPS_EXPORT flashps_status flashps_batching_from_name(const char* name, flashps_batching* batching);
FLASHPS_EXPORT const char* flashps_balance_policy_name(flashps_balance_policy policy);
FLASHPS_EXPORT flashps_status flashps_balance_policy_from_name(const char* name, flashps_balance_policy* policy);

/* Bounds of flashps_engine_params, the same for every front end (flashps serve, flashps batch). */
#define FLASHPS_MAX_BATCH 256          /* max_batch: 0 (per device) to this */
#define FLASHPS_MAX_POOL_THREADS 256   /* pool_threads: 0 (1) to this */
#define FLASHPS_MAX_COMPUTE_NICE 19    /* compute_nice: 0 (unchanged) to this */

typedef struct flashps_engine_params {
  size_t struct_size;        /* sizeof(flashps_engine_params) */
  const char* devices;       /* "cpu" (NULL), "cuda" (every GPU), "cuda:0,cuda:1", "auto" */
  int bf16;
  flashps_store* store;      /* shared activation store; NULL: `capture_dir`, else in memory */
  const char* capture_dir;
  flashps_batching batching;
  flashps_balance_policy policy;
  int max_batch;             /* requests denoised together per worker; 0: per device, 1 where its
                                profile's measured steps show batching saves under 10% per request
                                (this project's CPUs), else 8, also when the profile has no
                                batched steps (see `flashps profile`) */
  size_t max_queued;         /* requests waiting to start; more are rejected; 0: 64 */
  int pool_threads;          /* pre/post-processing threads; 0: 1 */
  const char* profile_path;  /* device profile from `flashps profile` for routing; NULL: defaults */
  flashps_progress_callback progress; /* loading progress ("load"); return 0 to cancel */
  void* user_data;
  /* ---- added in API 5 ---- */
  int compute_nice;          /* nice value added to the engine's compute threads (workers, pre/post-
                                processing, and the OpenMP and loader threads they start), so the
                                caller's threads (an HTTP server's, a UI's) get a core first; 0:
                                unchanged, at most 19; Linux only (elsewhere ignored) */
} flashps_engine_params;

typedef enum flashps_request_status {
  FLASHPS_REQUEST_QUEUED = 0,
  FLASHPS_REQUEST_PREPARING = 1, /* image preparation, VAE encode, template lookup */
  FLASHPS_REQUEST_READY = 2,     /* waiting for a batch slot */
  FLASHPS_REQUEST_RUNNING = 3,   /* denoising: step / steps in events */
  FLASHPS_REQUEST_FINISHING = 4, /* VAE decode, paste back */
  FLASHPS_REQUEST_DONE = 5,
  FLASHPS_REQUEST_FAILED = 6,    /* message says why; deadlines end here too */
  FLASHPS_REQUEST_CANCELLED = 7,
  FLASHPS_REQUEST_REJECTED = 8
} flashps_request_status;

typedef struct flashps_event {
  size_t struct_size;          /* sizeof(flashps_event) as the library knows it */
  uint64_t request_id;
  flashps_request_status status;
  int step, steps;             /* denoising progress */
  double seconds;              /* since submission */
  int worker;                  /* device index, -1 before routing */
  const char* message;         /* failures: the error; else "" (valid during the callback) */
  const flashps_image* preview; /* with preview_every_steps: the processed region; else NULL */
} flashps_event;

typedef void (*flashps_event_callback)(const flashps_event* event, void* user_data);

typedef struct flashps_submit_params {
  size_t struct_size;          /* sizeof(flashps_submit_params) */
  double deadline_seconds;     /* after submission; 0: none */
  int preview_every_steps;     /* 0: no previews */
  flashps_event_callback on_event;
  void* user_data;
} flashps_submit_params;

typedef struct flashps_engine_counters {
  size_t struct_size;          /* sizeof(flashps_engine_counters), set by the caller */
  int64_t submitted, done, failed, cancelled, rejected;
  int64_t steps;               /* batched steps run, all workers */
  int workers;
} flashps_engine_counters;

FLASHPS_EXPORT flashps_engine_params flashps_engine_default_params(void);
FLASHPS_EXPORT flashps_submit_params flashps_submit_default_params(void);
FLASHPS_EXPORT const char* flashps_request_status_name(flashps_request_status status);

/* Loads the model (NULL: flashps_default_model_dir()) on every device and starts the workers. */
FLASHPS_EXPORT flashps_status flashps_engine_open(const char* model_dir, const flashps_engine_params* params,
                                                  flashps_engine** engine);
/* An engine over an open model (API 6): workers on the model's device share its weights (and
 * several CPU workers share one copy); workers on other devices load their own. params.bf16 must
 * be 0 or match the model. The engine holds a reference to the model. */
FLASHPS_EXPORT flashps_status flashps_engine_open_model(flashps_model* model, const flashps_engine_params* params,
                                                        flashps_engine** engine);
/* Cancels what is outstanding, joins the engine's threads. NULL is fine. Request handles stay
 * valid (resolved) until freed. */
FLASHPS_EXPORT void flashps_engine_close(flashps_engine* engine);
FLASHPS_EXPORT flashps_status flashps_engine_info(const flashps_engine* engine, flashps_model_info* info);

/* Queues an edit (the progress callback of edit params is not used: events replace it). A full
 * queue gives FLASHPS_REJECTED. The images are copied; `submit` may be NULL. When this returns
 * FLASHPS_OK, `on_event` receives exactly one terminal event (DONE, FAILED or CANCELLED) as its
 * last call for this request — also when the engine closes first — so user_data may be freed
 * then; when it returns an error, `on_event` is never called. */
FLASHPS_EXPORT flashps_status flashps_engine_submit(flashps_engine* engine, const flashps_image* image,
                                                    const flashps_image* mask, const flashps_edit_params* params,
                                                    const flashps_submit_params* submit,
                                                    flashps_request** request);
/* Until every submitted request has resolved and its events were delivered. */
FLASHPS_EXPORT flashps_status flashps_engine_wait_idle(flashps_engine* engine);
FLASHPS_EXPORT flashps_status flashps_engine_counters_get(const flashps_engine* engine,
                                                          flashps_engine_counters* counters);
/* Runs a template in full on the engine's first device and captures it (as
 * flashps_template_register_masked); waits for the engine's running steps, not for its queue. */
FLASHPS_EXPORT flashps_status flashps_engine_register_template(flashps_engine* engine, const flashps_image* image,
                                                               const flashps_image* mask,
                                                               const flashps_edit_params* params,
                                                               flashps_edit_stats* stats);

FLASHPS_EXPORT uint64_t flashps_request_id(const flashps_request* request);
FLASHPS_EXPORT flashps_request_status flashps_request_get_status(const flashps_request* request);
/* Waits up to timeout_seconds (< 0: forever); *resolved = 1 once the request has resolved. */
FLASHPS_EXPORT flashps_status flashps_request_wait(flashps_request* request, double timeout_seconds,
                                                   int* resolved);
/* No effect once resolved. */
FLASHPS_EXPORT flashps_status flashps_request_cancel(flashps_request* request);
/* Waits as flashps_request_wait, then returns the request's outcome: FLASHPS_OK with a new image
 * in `result` (free it) and stats (notes valid until the request is freed); FLASHPS_CANCELLED,
 * FLASHPS_DEADLINE_EXCEEDED, or the edit's error. `result` and `stats` may be NULL. A request
 * still running when the timeout ends gives FLASHPS_ERROR ("still running"). */
FLASHPS_EXPORT flashps_status flashps_request_result(flashps_request* request, double timeout_seconds,
                                                     flashps_image* result, flashps_edit_stats* stats);
/* Frees the handle (the request itself runs on unless cancelled). NULL is fine. */
FLASHPS_EXPORT void flashps_request_free(flashps_request* request);

/* ---- Batch manifests: JSON Lines, one edit per line ----
 *   {"image": "in.jpg", "mask": "mask.png", "output": "out/in.png", "seed": 1, "steps": 8,
 *    "strength": 1.0, "prompt": "...", "prompt_embeds": "embeds.safetensors", "cache": "auto"}
 * Outputs are written atomically (through ".partial-*" files in the output's folder, which the next
 * run removes if a killed run left them); a re-run skips items whose output is a complete image
 * (resume; a 0-byte or truncated file is redone). An output that is a folder fails that item.
 * The SDK installs no signal handlers: to stop a batch on Ctrl+C, set a flag in the host's handler
 * and answer 0 from the progress callback, which is called as items resolve and at least every
 * 0.1 s while edits run. Running edits then stop at their next step boundary, finished outputs
 * are written, the summary and JSON report cover every item, and the call returns
 * FLASHPS_CANCELLED. */
typedef struct flashps_batch_params {
  size_t struct_size;          /* sizeof(flashps_batch_params) */
  int resume;                  /* nonzero (default): skip items whose output is a complete image */
  size_t max_in_flight;        /* submitted and not yet resolved; 0: the engine's max_queued */
  const char* json_report_path; /* NULL: none; else per-item results as JSON */
  flashps_progress_callback progress; /* stage "batch": resolved of total items (repeated while edits
                                          run); 0 cancels the rest */
  void* user_data;
  /* Called once per failed item with its manifest line and error. */
  void (*on_failure)(int line, const char* output, const char* error, void* user_data);
} flashps_batch_params;

typedef struct flashps_batch_summary {
  size_t struct_size;          /* sizeof(flashps_batch_summary), set by the caller */
  int total, done, skipped, failed, cancelled, cache_hits;
  double seconds;
  double throughput;           /* done items per second */
  const char* notes;           /* one per line; valid until the thread's next batch call */
} flashps_batch_summary;

FLASHPS_EXPORT flashps_batch_params flashps_batch_default_params(void);
/* Checks a manifest without running it; FLASHPS_CORRUPT_DATA names the file and line. */
FLASHPS_EXPORT flashps_status flashps_batch_validate(const char* manifest_path, int* items);
/* Runs a manifest through the engine; per-item failures do not stop it (see summary). Cancelled
 * through the progress callback: FLASHPS_CANCELLED, with *summary filled in. */
FLASHPS_EXPORT flashps_status flashps_engine_run_batch(flashps_engine* engine, const char* manifest_path,
                                                       const flashps_batch_params* params,
                                                       flashps_batch_summary* summary);

#ifdef __cplusplus
}
#endif

#endif /* FLASHPS_ENGINE_H */
