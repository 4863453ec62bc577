/* FlashPS public C API: the activation store — template captures on disk (SQLite index plus
 * append-only segment files) with a host-memory tier. Several processes may share one folder.
 *
 * Thread safety: a store handle may be used from any number of threads at once.
 */
#ifndef FLASHPS_STORE_H
#define FLASHPS_STORE_H

#include "flashps/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flashps_store flashps_store; /* opaque */

typedef struct flashps_store_params {
  size_t struct_size;          /* sizeof(flashps_store_params) */
  const char* directory;       /* NULL: flashps_store_default_directory() */
  int64_t host_capacity_bytes; /* host-memory tier; 0: 1 GiB */
  int64_t disk_quota_bytes;    /* 0: unlimited; else least recently used captures go on commit */
} flashps_store_params;

typedef struct flashps_capture_info {
  size_t struct_size;          /* sizeof(flashps_capture_info) */
  const char* template_hash;   /* strings valid during the callback only */
  const char* model_fingerprint;
  const char* config;          /* size, steps, strength, ... the capture was made with */
  int64_t bytes;
  int64_t entries;
  int64_t quarantined;         /* damaged entries (computed instead when an edit needs them) */
  double created;              /* seconds since the epoch */
  double last_access;
} flashps_capture_info;

/* Called once per capture, most recently used first; return 0 to stop listing. */
typedef int (*flashps_capture_callback)(const flashps_capture_info* capture, void* user_data);

typedef struct flashps_store_stats {
  size_t struct_size;          /* sizeof(flashps_store_stats), set by the caller */
  int64_t captures, entries, bytes, quarantined;
  int64_t segment_files, segment_bytes;
  int64_t host_bytes, host_capacity;
  int64_t disk_quota;
  int64_t recovered_captures;  /* index rows without bytes removed when the store was opened */
  int64_t recovered_segments;  /* orphan segments removed when the store was opened */
} flashps_store_stats;

typedef struct flashps_verify_report {
  size_t struct_size;          /* sizeof(flashps_verify_report), set by the caller */
  int64_t entries_checked;
  int64_t damaged;             /* quarantined by this check */
  const char* problems;        /* one per line; valid until the thread's next store call */
} flashps_verify_report;

typedef struct flashps_gc_report {
  size_t struct_size;          /* sizeof(flashps_gc_report), set by the caller */
  int removed_captures;
  int removed_segments;
  int64_t reclaimed_bytes;
  const char* notes;           /* one per line; valid until the thread's next store call */
} flashps_gc_report;

FLASHPS_EXPORT flashps_store_params flashps_store_default_params(void);
/* ~/.cache/flashps/store ($XDG_CACHE_HOME respected), or $FLASHPS_CACHE_DIR. Valid until the
 * calling thread's next call of this function. */
FLASHPS_EXPORT const char* flashps_store_default_directory(void);

/* Opens (creating if needed) and recovers a store. A damaged or read-only store degrades
 * instead of failing, and flashps_store_notes says how: an unreadable index is moved aside
 * (index.sqlite.corrupt-<time>, its segments kept in unindexed-<time>/) and an empty one started;
 * a folder this process cannot write opens read-only (finding captures works; registering,
 * evict, remove and gc fail with FLASHPS_IO_ERROR); on a full disk the index opens for this
 * process alone, and evict, remove and gc free bytes before they write. */
FLASHPS_EXPORT flashps_status flashps_store_open(const flashps_store_params* params, flashps_store** store);
/* NULL is fine. Editors and engines opened with this store keep it alive until they close. */
FLASHPS_EXPORT void flashps_store_close(flashps_store* store);
/* The folder, valid while the store is open. */
FLASHPS_EXPORT const char* flashps_store_directory(const flashps_store* store);
/* What opening the store found and did, one note per line ("" when nothing; NULL for a NULL
 * store): each names the command that recovers. Valid while the store is open. */
FLASHPS_EXPORT const char* flashps_store_notes(const flashps_store* store);
/* 1 when the store was opened read-only (see flashps_store_open), else 0. */
FLASHPS_EXPORT int flashps_store_is_read_only(const flashps_store* store);

FLASHPS_EXPORT flashps_status flashps_store_list(flashps_store* store, flashps_capture_callback callback,
                                                 void* user_data);
FLASHPS_EXPORT flashps_status flashps_store_get_stats(flashps_store* store, flashps_store_stats* stats);
/* Reads every entry and checks its checksums; damaged entries are quarantined. */
FLASHPS_EXPORT flashps_status flashps_store_verify(flashps_store* store, flashps_progress_callback progress,
                                                   void* user_data, flashps_verify_report* report);
/* Removes least recently used captures until the store holds at most max_bytes (>= 0). */
FLASHPS_EXPORT flashps_status flashps_store_evict(flashps_store* store, int64_t max_bytes,
                                                  int64_t* bytes_freed);
/* Removes the captures whose template hash starts with `prefix` (at least 4 characters). A prefix
 * that matches captures of more than one template is refused (FLASHPS_INVALID_ARGUMENT) unless
 * all_matching is nonzero; FLASHPS_NOT_FOUND when nothing matches. */
FLASHPS_EXPORT flashps_status flashps_store_remove(flashps_store* store, const char* prefix, int all_matching,
                                                   int* removed);
/* Removes orphan segments, then index rows whose bytes are gone (the files go before any index
 * write, so evict, remove and gc work on a full disk). FLASHPS_IO_ERROR on a read-only store. */
FLASHPS_EXPORT flashps_status flashps_store_gc(flashps_store* store, flashps_gc_report* report);

#ifdef __cplusplus
}
#endif

#endif /* FLASHPS_STORE_H */
