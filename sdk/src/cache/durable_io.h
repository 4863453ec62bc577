// The activation store's two durability calls (fdatasync of a segment, fsync of its directory),
// made here so that a crash test can simulate a power cut. Killing a process cannot show a
// missing flush: the page cache outlives the process. While recording is on (tests only), each
// call is noted, and lose_unsynced_writes() then does to the noted files what a power cut may do.
// The store's SQLite index is not covered: its own journal is SQLite's to make durable.
#pragma once
#include <string>

namespace flashps::cache {

int sync_file_data(int fd, const std::string& path);                 // ::fdatasync, noted
int sync_directory(int directory_fd, const std::string& directory);  // ::fsync, noted
void note_file_created(const std::string& path);  // a new file: its name is not durable yet

void record_durability(bool on);  // off by default: a server keeps no notes
// For every file noted since recording began: one created after its directory's last sync is
// removed (its name may not survive); any other is cut back to the length of its last data sync.
void lose_unsynced_writes();

}  // namespace flashps::cache
