// Opening the activation store's index so that a damaged, read-only or full store degrades
// instead of blocking every command:
//   - a folder this process cannot write opens read-only (reads work; writes are refused with
//     a message saying how to make it writable);
//   - a full disk opens the index exclusively, which needs no new -shm file, so eviction and
//     removal (which free space before they write) still run;
//   - an unreadable index, or an index path that is not a regular file (a directory, a FIFO, a
//     link to nothing), is moved aside with the segments it indexed, never deleted, and an
//     empty index takes its place; when it cannot be moved, the store opens without an index
//     (read-only, empty) and says how to recover.
// Each degradation leaves a note naming the command that recovers from it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "cache/sqlite_db.h"

namespace flashps::cache {

struct OpenedIndex {
  std::unique_ptr<SqliteDb> db;
  bool read_only = false;
  std::string read_only_reason;    // why, and how to make it writable ("" when writable)
  std::vector<std::string> notes;  // what was found and done, each naming the way out
};

// Opens (creating if needed) <directory>/index.sqlite and its segments folder, migrating the
// schema when writable. Throws SqliteError (corrupt()) for an unreadable index: see below.
OpenedIndex open_store_index(const std::string& directory, bool read_only_requested);

// Moves an unreadable index to index.sqlite.corrupt-<time> (with its -wal/-shm) and the segment
// files it indexed, which nothing can read without it, to unindexed-<time>/; returns the note
// saying so. Serialised between processes; does nothing (returns "") when another process
// repaired the index meanwhile. Throws IoError when the files cannot be moved.
std::string set_aside_damaged_index(const std::string& directory, const SqliteError& problem);
// The same for an index path that is `problem` (e.g. "it is a directory, not a file"). With
// `probe`, an index that reads cleanly is left (repaired meanwhile); without, one that is a
// regular file again is.
std::string set_aside_index(const std::string& directory, const std::string& problem, bool probe);

}  // namespace flashps::cache
