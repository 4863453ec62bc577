#include "cache/store_index.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "cache/segment_file.h"
#include "cache/store_schema.h"
#include "core/diagnostics/error.h"

namespace flashps::cache {
namespace {

namespace fs = std::filesystem;

std::string index_path(const std::string& directory) { return (fs::path(directory) / "index.sqlite").string(); }

std::string what_is_there_instead_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

bool exists(const std::string& path) {
  std::error_code ignored;
  return fs::exists(path, ignored);
}

// "" when `path` is absent or a regular file (or a link to one), else what it is instead. Such a
// path is never handed to SQLite: a directory fails with "disk I/O error", a FIFO blocks its reads.
std::string what_is_there_instead(const std::string& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0 || S_ISREG(link.st_mode)) return "";
  struct stat target {};
  if (S_ISLNK(link.st_mode)) {
    if (::stat(path.c_str(), &target) != 0) return "a symbolic link to nothing";
    if (S_ISREG(target.st_mode)) return "";
    return "a symbolic link to " + what_is_there_instead_kind(target.st_mode);
  }
  return what_is_there_instead_kind(link.st_mode);
}

int64_t free_bytes(const std::string& directory) {
  struct statvfs info {};
  if (::statvfs(directory.c_str(), &info) != 0) return -1;
  return static_cast<int64_t>(info.f_bavail) * static_cast<int64_t>(info.f_frsize);
}

// A full disk shows as SQLITE_FULL, or as an I/O error creating the -shm file (it cannot grow).
bool disk_full(const SqliteError& error, const std::string& directory) {
  const int64_t available = free_bytes(directory);
  return error.disk_full() || (error.io_failed() && available >= 0 && available < (int64_t{1} << 20));
}

std::string how_to_make_writable(const std::string& directory, int error_number) {
  const std::string other = ", or use another store with --cache-dir or FLASHPS_CACHE_DIR";
  if (error_number == EROFS) return "remount its file system read-write" + other;
  return "make it writable (`chmod -R u+w " + directory + "`)" + other;
}

// "" when this process may create files in `directory`, else why not and what to do.
std::string why_not_writable(const std::string& directory) {
  if (::access(directory.c_str(), W_OK) == 0) return "";
  const int error_number = errno;
  if (error_number == ENOENT) return "";  // created below (or that fails with its own message)
  return std::string(std::strerror(error_number)) + "; " + how_to_make_writable(directory, error_number);
}

int schema_version(SqliteDb& db) {
  Statement query(db, "SELECT MAX(version) FROM schema_version");
  return query.step() ? static_cast<int>(query.integer(0)) : 0;
}

// The store without its index: an empty one in memory, read-only (writes would be lost with it),
// for an index path that holds something else and cannot be moved aside. Editing computes in
// full; the notes and every refused write say how to recover.
OpenedIndex open_without_index(const std::string& why) {
  OpenedIndex opened;
  opened.db = std::make_unique<SqliteDb>(":memory:");
  migrate_store_schema(*opened.db);
  opened.read_only = true;
  opened.read_only_reason = why;
  opened.notes.push_back("the store opened without an index, so no cached template is reused and nothing is "
                         "registered: " + why);
  return opened;
}

OpenedIndex open_read_only(const std::string& directory, const std::string& reason) {
  const std::string path = index_path(directory);
  const std::string instead = what_is_there_instead(path);
  if (!instead.empty())
    return open_without_index(path + " is " + instead + ", not the index, and the store is read-only (" + reason +
                              ") so it is not moved aside: move it away yourself (`mv " + path + " " + path +
                              ".aside`), or make the folder writable and run `flashps cache gc`");
  if (!exists(path))
    throw IoError(directory + ": the store folder cannot be written (" + reason + ") and holds no index yet");
  OpenedIndex opened;
  // With a -wal file, readers coordinate through it; without one (a clean close) no process is
  // writing, and `immutable` reads the file without creating a -shm next to it.
  // A -wal that cannot be coordinated through (no -shm we may map) falls back to the same: the
  // main file as of its last checkpoint.
  const bool has_wal = exists(path + "-wal");
  try {
    try {
      opened.db = std::make_unique<SqliteDb>(path, has_wal ? SqliteOpenMode::read_only : SqliteOpenMode::immutable);
      schema_version(*opened.db);
    } catch (const SqliteError& error) {
      if (error.corrupt() || !has_wal) throw;
      opened.db.reset();
      opened.db = std::make_unique<SqliteDb>(path, SqliteOpenMode::immutable);
    }
    const int version = schema_version(*opened.db);
    if (version != kStoreSchemaVersion)
      throw IoError(path + ": store schema version " + std::to_string(version) + " cannot be read by this build (" +
                    std::to_string(kStoreSchemaVersion) + "), and the folder is read-only so it is not migrated");
  } catch (const SqliteError& error) {
    if (error.corrupt())
      throw CorruptDataError(path + " is unreadable (damaged), and the store folder is read-only so it cannot be "
                             "moved aside: make it writable and run `flashps cache gc`");
    throw;
  }
  opened.read_only = true;
  opened.read_only_reason = reason;
  opened.notes.push_back(directory + " is read-only (" + reason + "): cached templates are reused, but nothing is "
                         "registered, evicted, removed or repaired");
  return opened;
}

}  // namespace

OpenedIndex open_store_index(const std::string& directory, bool read_only_requested) {
  if (directory.empty()) throw Error("activation store: no directory");
  if (read_only_requested) return open_read_only(directory, "opened read-only as asked");
  const std::string reason = why_not_writable(directory);
  if (!reason.empty()) return open_read_only(directory, reason);
  const std::string segments = (fs::path(directory) / "segments").string();
  std::error_code error;
  fs::create_directories(segments, error);
  if (!fs::is_directory(segments, error)) {
    const int error_number = error ? error.value() : 0;
    if (exists(index_path(directory)))
      return open_read_only(directory, error.message() + "; " + how_to_make_writable(directory, error_number));
    throw IoError(directory + ": cannot create the store directory" + (error ? ": " + error.message() : "") +
                  "; give a writable folder with --cache-dir or FLASHPS_CACHE_DIR");
  }
  OpenedIndex opened;
  const std::string instead = what_is_there_instead(index_path(directory));
  if (!instead.empty()) {
    // The same rule as an unreadable index: moved aside, kept, an empty index started.
    try {
      const std::string note = set_aside_index(directory, "it is " + instead + ", not a file", /*probe=*/false);
      if (!note.empty()) opened.notes.push_back(note);
    } catch (const IoError& error) {
      return open_without_index(error.what());
    }
  }
  try {
    opened.db = std::make_unique<SqliteDb>(index_path(directory));
    migrate_store_schema(*opened.db);
    return opened;
  } catch (const SqliteError& failure) {
    opened.db.reset();  // its locks would keep the next connection out
    if (failure.corrupt()) throw;
    if (failure.read_only() && !disk_full(failure, directory))
      return open_read_only(directory, std::string(failure.what()) + "; " + how_to_make_writable(directory, EACCES));
    if (!disk_full(failure, directory)) throw;
  }
  // A full disk: no room for a -shm file. The wal-index then lives in this process's memory.
  opened.db = std::make_unique<SqliteDb>(index_path(directory), SqliteOpenMode::exclusive);
  migrate_store_schema(*opened.db);
  opened.notes.push_back("the disk holding " + directory + " is full (" + std::to_string(free_bytes(directory)) +
                         " bytes free): the store is open for this process alone; free space with `flashps cache "
                         "evict --max-size SIZE` or `flashps cache rm TEMPLATE`");
  return opened;
}

std::string set_aside_damaged_index(const std::string& directory, const SqliteError& failure) {
  return set_aside_index(directory,
                         failure.code() == SQLITE_NOTADB ? "not an SQLite database" : "its pages are malformed",
                         /*probe=*/true);
}

std::string set_aside_index(const std::string& directory, const std::string& problem, bool probe) {
  const std::string path = index_path(directory);
  // One process repairs at a time; a later one finds the index readable again and leaves it.
  const std::string lock_path = (fs::path(directory) / "recovery.lock").string();
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) {
    const std::string reason = std::strerror(errno);
    if (lock >= 0) ::close(lock);
    throw IoError(path + " is unreadable (" + problem + ") and cannot be moved aside (" + reason +
                  "): make the folder writable and run `flashps cache gc`");
  }
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }
  } unlock{lock};
  // Repaired by another process meanwhile? (SQLite never opens what is not a regular file.)
  const bool not_a_file = !what_is_there_instead(path).empty();
  if (!probe && !not_a_file) return "";
  if (probe && !not_a_file) {
    try {
      SqliteDb check_db(path);
      Statement check(check_db, "PRAGMA quick_check");
      if (check.step() && check.text(0) == "ok") return "";
    } catch (const SqliteError& error) {
      if (!error.corrupt()) throw;
    }
  }

  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
  std::string suffix = stamp;
  for (int n = 2; exists(path + ".corrupt-" + suffix) || exists((fs::path(directory) / ("unindexed-" + suffix)).string());
       ++n)
    suffix = std::string(stamp) + "-" + std::to_string(n);
  const std::string moved = path + ".corrupt-" + suffix;
  if (::rename(path.c_str(), moved.c_str()) != 0)
    throw IoError(path + " is unreadable (" + problem + ") and cannot be moved aside (" + std::strerror(errno) +
                  "): make the folder writable and run `flashps cache gc`");
  for (const char* companion : {"-wal", "-shm"})  // the WAL belongs to the file it was written for
    ::rename((path + companion).c_str(), (moved + companion).c_str());

  // Without its index no segment can be read (offsets, types and checksums were there), but
  // none is deleted: they move out of the way of the new index's garbage collection.
  const fs::path kept = fs::path(directory) / ("unindexed-" + suffix);
  int files = 0;
  int64_t bytes = 0;
  std::error_code error;
  for (const auto& file : fs::directory_iterator(fs::path(directory) / "segments", error)) {
    if (file.path().extension() != ".seg" || !segment_unlocked(file.path().string())) continue;  // locked: a live writer
    if (files == 0) fs::create_directory(kept, error);
    const int64_t size = static_cast<int64_t>(file.file_size(error));
    if (::rename(file.path().c_str(), (kept / file.path().filename()).c_str()) != 0) continue;
    ++files;
    bytes += size;
  }
  std::string note = path + " was unreadable (" + problem + "): moved to " + moved + " and started an empty index";
  if (files > 0) {
    char size[32];
    std::snprintf(size, sizeof(size), "%.1f MB", bytes / 1e6);
    note += "; its " + std::to_string(files) + " segment file(s) (" + size + ") cannot be read without it and are "
            "kept in " + kept.string() + ": delete that folder (`rm -r " + kept.string() + "`) to free the space";
  }
  return note + "; register templates again with `flashps template register`";
}

}  // namespace flashps::cache
