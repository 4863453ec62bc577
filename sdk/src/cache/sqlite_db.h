// A small RAII layer over sqlite3: one connection (WAL journal, busy timeout so several
// processes can share the database), prepared statements, and transactions. Errors name the
// database file and carry SQLite's result code, so callers can tell damage from a full disk.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/diagnostics/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace flashps::cache {

class SqliteError : public IoError {
 public:
  SqliteError(const std::string& message, int code) : IoError(message), code_(code) {}
  int code() const { return code_; }  // SQLite's primary result code
  bool corrupt() const;               // not a database, or a malformed one
  bool disk_full() const;
  bool read_only() const;             // the file or its folder cannot be written
  bool io_failed() const;             // a read or write of the file failed (a full disk, among others)

 private:
  int code_;
};

// How the connection opens the file:
//   read_write   shared WAL (several processes at once)
//   exclusive    WAL with the wal-index in this process's memory: needs no -shm file, so it
//                opens on a full disk; other processes wait while it is open
//   read_only    a folder we cannot write; `immutable` when no -wal/-shm exist to coordinate through
enum class SqliteOpenMode { read_write, exclusive, read_only, immutable };

class SqliteDb;

class Statement {
 public:
  Statement(SqliteDb& db, const std::string& sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind_blob(int index, const void* data, size_t size);
  bool step();  // true while a row is available
  void run();   // steps to completion
  void reset();

  int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::vector<uint8_t> blob(int column) const;

 private:
  SqliteDb& db_;
  std::string sql_;
  sqlite3_stmt* statement_ = nullptr;
};

class SqliteDb {
 public:
  explicit SqliteDb(const std::string& path, SqliteOpenMode mode = SqliteOpenMode::read_write,
                    int busy_timeout_ms = 15000);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  void execute(const std::string& sql);
  int64_t last_insert_id() const;
  int changes() const;
  const std::string& path() const { return path_; }
  SqliteOpenMode mode() const { return mode_; }
  [[noreturn]] void fail(const std::string& what) const;

  // Serialises this process's threads on the connection; SQLite locks between processes.
  std::recursive_mutex& mutex() { return mutex_; }
  sqlite3* handle() { return db_; }

 private:
  void configure(bool writable);  // pragmas of the open mode
  std::string path_;
  SqliteOpenMode mode_;
  sqlite3* db_ = nullptr;
  std::recursive_mutex mutex_;
};

// BEGIN IMMEDIATE ... COMMIT (rolled back if not committed), holding the connection's mutex.
class Transaction {
 public:
  explicit Transaction(SqliteDb& db);
  ~Transaction();
  void commit();

 private:
  SqliteDb& db_;
  std::unique_lock<std::recursive_mutex> lock_;
  bool done_ = false;
};

}  // namespace flashps::cache
