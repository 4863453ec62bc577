/* FlashPS public C API: the HTTP server (API 3) — the serving engine behind a network API: the
 * OpenAI-compatible POST /v1/images/edits and FlashPS's native edit, progress (Server-Sent
 * Events), cancel, result, template, health and Prometheus endpoints (docs/http-api.md).
 *
 *   flashps_engine* engine = NULL;
 *   flashps_engine_open(NULL, &engine_params, &engine);
 *   flashps_server_params params = flashps_server_default_params();   // 127.0.0.1:8188
 *   flashps_server* server = NULL;
 *   flashps_server_start(engine, &params, &server);                   // serves on its own threads
 *   ...                                                                // until SIGTERM, say
 *   flashps_server_drain(server, 30.0, NULL);                          // finish what runs
 *   flashps_server_close(server);
 *   flashps_engine_close(engine);
 *
 * Secure by default: it listens on loopback unless `listen` names another address, and then it
 * requires API keys (`Authorization: Bearer <key>`, compared in constant time). Every limit is
 * answered with a JSON error in the OpenAI shape: 401 (key), 413 (body, image pixels), 422
 * (prompt length, n), 429 (queue full), 503 (connections, draining).
 *
 * Thread safety: every function may be called from any thread; the server runs its own threads.
 */
#ifndef FLASHPS_SERVER_H
#define FLASHPS_SERVER_H

#include "flashps/common.h"
#include "flashps/engine.h"
#include "flashps/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flashps_server flashps_server; /* opaque */

/* One line per HTTP request, JSON: {"time","request_id","remote","method","path","status",
 * "bytes_in","bytes_out","ms"} (and "edits": the edit ids it made). Never image bytes or keys.
 * Called on the connection's thread. */
typedef void (*flashps_access_log_callback)(const char* line, void* user_data);

typedef struct flashps_server_params {
  size_t struct_size;          /* sizeof(flashps_server_params) */
  const char* listen;          /* "host:port" ("[::1]:8188" for IPv6); NULL: "127.0.0.1:8188";
                                  port 0 picks a free one (flashps_server_port) */
  const char* api_key_file;    /* keys, one per line ('#' comments); required unless `listen` is
                                  a loopback address; NULL: none */
  int threads;                 /* connection threads; 0: 16 */
  int max_connections;         /* connections served at once (streams included); more get 503;
                                  0 (and at most): threads, as each holds one */
  int64_t max_body_bytes;      /* request body; larger gets 413; 0: 64 MiB */
  int64_t max_pixels;          /* per image (width x height); larger gets 413; 0: 16777216 */
  int max_prompt_chars;        /* longer gets 422; 0: 4000 */
  int max_images;              /* OpenAI `n` at most; more gets 422; 0: 4 */
  int keep_results;            /* finished edits kept for status and result; 0: 256 */
  double keep_results_seconds; /* and for at most this long; 0: 600 */
  const char* model_name;      /* reported as `model`; NULL: the model folder's name */
  flashps_store* store;        /* the engine's store, listed by GET /v1/templates (borrowed: keep
                                  it open while the server runs); NULL: the endpoint answers 501 */
  flashps_access_log_callback access_log; /* NULL: none */
  void* user_data;
  /* ---- added in API 7 ---- */
  int listen_fd;               /* > 0: serve on this socket, already bound and listening (TCP,
                                  IPv4 or IPv6), e.g. the one systemd's socket activation passes
                                  as fd 3 (LISTEN_FDS); `listen` is then ignored, and keys are
                                  required unless the socket's own address is loopback. The
                                  server takes it over once started (and closes it at
                                  flashps_server_close); a failed start leaves it open.
                                  0: bind `listen` */
} flashps_server_params;

typedef struct flashps_server_stats {
  size_t struct_size;          /* sizeof(flashps_server_stats), set by the caller */
  int port;                    /* the port listened on */
  int connections;             /* open now */
  int queued;                  /* edits submitted and not yet denoising */
  int running;                 /* edits denoising now (the running batches' size) */
  int64_t http_requests;       /* answered so far, all endpoints */
  int64_t edits_done, edits_failed, edits_cancelled, edits_rejected;
  int draining;                /* 1 after flashps_server_drain started */
  /* ---- added in API 8 ---- */
  int template_captures;       /* template captures (POST /v1/templates) running now */
} flashps_server_stats;

FLASHPS_EXPORT flashps_server_params flashps_server_default_params(void);

/* Checks the params (a non-loopback `listen` without keys is FLASHPS_INVALID_ARGUMENT; an
 * unreadable or empty key file names the file), binds and starts serving. The engine must
 * outlive the server. A port in use gives FLASHPS_IO_ERROR naming it. */
FLASHPS_EXPORT flashps_status flashps_server_start(flashps_engine* engine, const flashps_server_params* params,
                                                   flashps_server** server);
/* The port listened on (useful with port 0); -1 for NULL. */
FLASHPS_EXPORT int flashps_server_port(const flashps_server* server);
FLASHPS_EXPORT flashps_status flashps_server_get_stats(const flashps_server* server, flashps_server_stats* stats);
/* Stops taking edits (new ones get 503, /readyz says draining), waits up to `seconds` for the
 * edits in flight, then cancels the rest and waits for them to resolve; *cancelled (may be NULL)
 * receives how many were cancelled. Status, result and event requests are still answered. */
FLASHPS_EXPORT flashps_status flashps_server_drain(flashps_server* server, double seconds, int* cancelled);
/* Stops listening, cancels what is outstanding, closes connections and joins the threads. NULL is
 * fine. The engine stays open. */
FLASHPS_EXPORT void flashps_server_close(flashps_server* server);

#ifdef __cplusplus
}
#endif

#endif /* FLASHPS_SERVER_H */
