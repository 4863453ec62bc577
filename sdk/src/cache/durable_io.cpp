#include "cache/durable_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>

namespace flashps::cache {
namespace {

struct NotedFile {
  bool name_durable = false;
  int64_t durable_bytes = 0;
};

std::atomic<bool> recording{false};
std::mutex notes_mutex;
std::map<std::string, NotedFile> noted_files;

std::string parent_of(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

}  // namespace

int sync_file_data(int fd, const std::string& path) {
  const int result = ::fdatasync(fd);
  struct stat info {};
  if (result == 0 && recording && ::fstat(fd, &info) == 0) {
    std::lock_guard<std::mutex> lock(notes_mutex);
    noted_files[path].durable_bytes = info.st_size;
  }
  return result;
}

int sync_directory(int directory_fd, const std::string& directory) {
  const int result = ::fsync(directory_fd);
  if (result == 0 && recording) {
    std::lock_guard<std::mutex> lock(notes_mutex);
    for (auto& [path, file] : noted_files)
      if (parent_of(path) == directory) file.name_durable = true;
  }
  return result;
}

void note_file_created(const std::string& path) {
  if (!recording) return;
  std::lock_guard<std::mutex> lock(notes_mutex);
  noted_files[path] = NotedFile{};
}

void record_durability(bool on) {
  std::lock_guard<std::mutex> lock(notes_mutex);
  recording = on;
  noted_files.clear();
}

void lose_unsynced_writes() {
  std::lock_guard<std::mutex> lock(notes_mutex);
  for (const auto& [path, file] : noted_files) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) continue;  // removed by the store since
    if (!file.name_durable)
      ::unlink(path.c_str());
    else if (info.st_size > file.durable_bytes)
      (void)::truncate(path.c_str(), file.durable_bytes);
  }
}

}  // namespace flashps::cache
