#include "cache/sqlite_db.h"

#include <sqlite3.h>

#include <cstdio>

#include "core/diagnostics/error.h"

namespace flashps::cache {

bool SqliteError::corrupt() const { return code_ == SQLITE_CORRUPT || code_ == SQLITE_NOTADB; }
bool SqliteError::disk_full() const { return code_ == SQLITE_FULL; }
bool SqliteError::read_only() const {
  return code_ == SQLITE_READONLY || code_ == SQLITE_CANTOPEN || code_ == SQLITE_PERM;
}
bool SqliteError::io_failed() const { return code_ == SQLITE_IOERR || code_ == SQLITE_FULL; }

namespace {

// What the user can do about an index error, appended to its message.
std::string recovery_hint(int code) {
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
    return " (the index is damaged: the next command that opens the store, e.g. `flashps cache gc`, moves it aside "
           "and starts a new one)";
  if (code == SQLITE_FULL)
    return " (the disk is full: free space with `flashps cache evict --max-size SIZE` or `flashps cache rm TEMPLATE`)";
  return "";
}

}  // namespace

SqliteDb::SqliteDb(const std::string& path, SqliteOpenMode mode, int busy_timeout_ms) : path_(path), mode_(mode) {
  const bool writable = mode == SqliteOpenMode::read_write || mode == SqliteOpenMode::exclusive;
  int flags = (writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_FULLMUTEX;
  std::string name = path;
  if (mode == SqliteOpenMode::immutable) {
    // Only a URI can say `immutable`; the path is percent-encoded where URIs need it.
    flags |= SQLITE_OPEN_URI;
    name = "file:";
    for (const char c : path) {
      char escaped[4];
      std::snprintf(escaped, sizeof(escaped), "%%%02X", static_cast<unsigned char>(c));
      name += c == '%' || c == '?' || c == '#' ? std::string(escaped) : std::string(1, c);
    }
    name += "?immutable=1";
  }
  if (sqlite3_open_v2(name.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    const int code = db_ ? sqlite3_errcode(db_) & 0xff : SQLITE_NOMEM;
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(path + ": cannot open the store index: " + message, code);
  }
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  try {
    configure(writable);
  } catch (...) {
    sqlite3_close(db_);  // the destructor does not run for a constructor that throws
    db_ = nullptr;
    throw;
  }
}

void SqliteDb::configure(bool writable) {
  if (!writable) {
    execute("PRAGMA query_only=1");
    return;
  }
  // Set before the first access: the wal-index then lives in heap memory, never in a -shm file.
  if (mode_ == SqliteOpenMode::exclusive) execute("PRAGMA locking_mode=EXCLUSIVE");
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
  const int code = sqlite3_errcode(db_) & 0xff;
  throw SqliteError(path_ + ": " + what + ": " + sqlite3_errmsg(db_) + recovery_hint(code), code);
}

void SqliteDb::execute(const std::string& sql) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    const int code = sqlite3_errcode(db_) & 0xff;
    throw SqliteError(path_ + ": " + text + " (in: " + sql.substr(0, 60) + ")" + recovery_hint(code), code);
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
