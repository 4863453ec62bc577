// The activation store's SQLite schema and its migrations (schema_version table).
//
//   captures(id, template_hash, model_fingerprint, config, segment, bytes, entries,
//            created, last_access)                       one committed capture each
//   entries(capture_id, step, block, slot, offset, length, dtype, rows, width,
//           row_checksums, quarantined)                  one (step, block, slot) tensor each
//
// A capture's tensor bytes live in one append-only segment file (segments/<segment>); each
// entry is a row-major [rows, width] tensor at `offset`, with one XXH3-64 checksum per row so
// partial reads of a few rows are verified without reading the rest.
#pragma once
#include "cache/sqlite_db.h"

namespace flashps::cache {

constexpr int kStoreSchemaVersion = 1;

// Creates or upgrades the schema; throws Error for a database newer than this build.
void migrate_store_schema(SqliteDb& db);

}  // namespace flashps::cache
