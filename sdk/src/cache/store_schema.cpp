#include "cache/store_schema.h"

#include "core/diagnostics/error.h"

namespace flashps::cache {
namespace {

int current_version(SqliteDb& db) {
  db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  Statement query(db, "SELECT MAX(version) FROM schema_version");
  return query.step() ? static_cast<int>(query.integer(0)) : 0;
}

void migrate_to_1(SqliteDb& db) {
  db.execute(R"(
    CREATE TABLE captures (
      id INTEGER PRIMARY KEY,
      template_hash TEXT NOT NULL,
      model_fingerprint TEXT NOT NULL,
      config TEXT NOT NULL,
      segment TEXT NOT NULL UNIQUE,
      bytes INTEGER NOT NULL,
      entries INTEGER NOT NULL,
      created REAL NOT NULL,
      last_access REAL NOT NULL,
      UNIQUE (template_hash, model_fingerprint, config));
    CREATE TABLE entries (
      capture_id INTEGER NOT NULL REFERENCES captures(id) ON DELETE CASCADE,
      step INTEGER NOT NULL,
      block INTEGER NOT NULL,
      slot INTEGER NOT NULL,
      offset INTEGER NOT NULL,
      length INTEGER NOT NULL,
      dtype INTEGER NOT NULL,
      rows INTEGER NOT NULL,
      width INTEGER NOT NULL,
      row_checksums BLOB NOT NULL,
      quarantined INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (capture_id, step, block, slot));
    CREATE INDEX captures_by_access ON captures(last_access);
  )");
}

}  // namespace

void migrate_store_schema(SqliteDb& db) {
  Transaction transaction(db);
  const int version = current_version(db);
  if (version > kStoreSchemaVersion)
    throw Error(db.path() + ": store schema version " + std::to_string(version) +
                " is newer than this build understands (" + std::to_string(kStoreSchemaVersion) + ")");
  if (version < 1) migrate_to_1(db);
  // Later versions add `if (version < N) migrate_to_N(db);` here.
  if (version < kStoreSchemaVersion) {
    db.execute("DELETE FROM schema_version");
    db.execute("INSERT INTO schema_version (version) VALUES (" + std::to_string(kStoreSchemaVersion) + ")");
  }
  transaction.commit();
}

}  // namespace flashps::cache
