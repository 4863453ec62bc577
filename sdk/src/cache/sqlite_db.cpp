#include "cache/sqlite_db.h"

#include <sqlite3.h>

#include "core/error.h"

namespace flashps::cache {

SqliteDb::SqliteDb(const std::string& path, int busy_timeout_ms) : path_(path) {
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
    throw Error(path + ": cannot open the store index: " + message);
  }
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  execute("PRAGMA journal_mode=WAL");
  // Index rows are committed only after their bytes are flushed; NORMAL keeps WAL commits
  // durable against process crashes and, with the flushed segments, power loss loses at most
  // the last transactions, never leaves a row pointing at unwritten bytes.
  execute("PRAGMA synchronous=NORMAL");
  execute("PRAGMA foreign_keys=ON");
}

SqliteDb::~SqliteDb() {
  if (db_) sqlite3_close_v2(db_);
}

void SqliteDb::fail(const std::string& what) const {
  throw Error(path_ + ": " + what + ": " + sqlite3_errmsg(db_));
}

void SqliteDb::execute(const std::string& sql) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    throw Error(path_ + ": " + text + " (in: " + sql.substr(0, 60) + ")");
  }
}

int64_t SqliteDb::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
int SqliteDb::changes() const { return sqlite3_changes(db_); }

Statement::Statement(SqliteDb& db, const std::string& sql) : db_(db), sql_(sql) {
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &statement_, nullptr) != SQLITE_OK)
    db.fail("cannot prepare '" + sql.substr(0, 60) + "'");
}

Statement::~Statement() { sqlite3_finalize(statement_); }

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) db_.fail("bind");
  return *this;
}
Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(statement_, index, value) != SQLITE_OK) db_.fail("bind");
  return *this;
}
Statement& Statement::bind(int index, const std::string& value) {
  if (sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    db_.fail("bind");
  return *this;
}
Statement& Statement::bind_blob(int index, const void* data, size_t size) {
  if (sqlite3_bind_blob64(statement_, index, data, size, SQLITE_TRANSIENT) != SQLITE_OK) db_.fail("bind");
  return *this;
}

bool Statement::step() {
  const int result = sqlite3_step(statement_);
  if (result == SQLITE_ROW) return true;
  if (result == SQLITE_DONE) return false;
  db_.fail("query failed (" + sql_.substr(0, 48) + ")");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

int64_t Statement::integer(int column) const { return sqlite3_column_int64(statement_, column); }
double Statement::real(int column) const { return sqlite3_column_double(statement_, column); }
std::string Statement::text(int column) const {
  const auto* text = sqlite3_column_text(statement_, column);
  return text ? std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(statement_, column)) : "";
}
std::vector<uint8_t> Statement::blob(int column) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(statement_, column));
  return data ? std::vector<uint8_t>(data, data + sqlite3_column_bytes(statement_, column)) : std::vector<uint8_t>();
}

Transaction::Transaction(SqliteDb& db) : db_(db), lock_(db.mutex()) { db_.execute("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.execute("ROLLBACK");
    } catch (...) {
    }
  }
}

void Transaction::commit() {
  db_.execute("COMMIT");
  done_ = true;
}

}  // namespace flashps::cache
