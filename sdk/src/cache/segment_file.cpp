#include "cache/segment_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cache/durable_io.h"
#include "cache/fault_points.h"
#include "core/diagnostics/error.h"

namespace flashps::cache {
namespace {

std::string system_error(const std::string& path, const std::string& what) {
  return path + ": " + what + ": " + std::strerror(errno) + (errno == ENOSPC ? " (disk full: free space with `flashps cache evict --max-size SIZE`)" : "");
}

}  // namespace

SegmentWriter::SegmentWriter(std::string path) : path_(std::move(path)) {
  // Created under a temporary name and renamed once locked, so recovery never sees the final
  // name unlocked while its writer is alive.
  const std::string temporary = path_ + ".new";
  fd_ = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(system_error(path_, "cannot create segment"));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0 || ::rename(temporary.c_str(), path_.c_str()) != 0) {
    const std::string message = system_error(path_, "cannot lock segment");
    ::unlink(temporary.c_str());
    ::close(fd_);
    fd_ = -1;
    throw Error(message);
  }
  note_file_created(path_);
  reach_fault_point(FaultPoint::segment_created);
}

SegmentWriter::~SegmentWriter() {
  if (!keep_) ::unlink(path_.c_str());
  if (fd_ >= 0) ::close(fd_);  // releases the lock after the unlink: no window for recovery
}

int64_t SegmentWriter::append(const void* data, size_t size) {
  const int64_t offset = size_;
  const auto* bytes = static_cast<const uint8_t*>(data);
  size_t written = 0;
  while (written < size) {
    const int injected = reach_fault_point(FaultPoint::segment_append);
    if (injected != 0) errno = injected;
    const ssize_t result = injected != 0 ? -1 : ::pwrite(fd_, bytes + written, size - written, offset + written);
    if (result < 0) {
      if (errno == EINTR) continue;
      throw Error(system_error(path_, "cannot write activations"));
    }
    written += static_cast<size_t>(result);
  }
  size_ += static_cast<int64_t>(size);
  return offset;
}

// FLASHPS_TEST_BREAK_*: set only by scripts/check-crash-test-catches.sh, which builds the store
// without one durability step to show that the crash test fails (never in a real build).
void SegmentWriter::flush() {
#ifndef FLASHPS_TEST_BREAK_SKIP_DATA_SYNC
  if (sync_file_data(fd_, path_) != 0) throw Error(system_error(path_, "cannot flush activations"));
#endif
  const std::string directory = std::filesystem::path(path_).parent_path().string();
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
#ifndef FLASHPS_TEST_BREAK_SKIP_DIRECTORY_SYNC
    sync_directory(dir_fd, directory);
#endif
    ::close(dir_fd);
  }
}

SegmentReader::SegmentReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(system_error(path_, "cannot open segment"));
}

SegmentReader::~SegmentReader() {
  if (fd_ >= 0) ::close(fd_);
}

void SegmentReader::read(int64_t offset, void* data, size_t size) const {
  auto* bytes = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    const int injected = reach_fault_point(FaultPoint::segment_read);
    if (injected != 0) errno = injected;
    const ssize_t result = injected != 0 ? -1 : ::pread(fd_, bytes + done, size - done, offset + done);
    if (result < 0) {
      if (errno == EINTR) continue;
      throw Error(system_error(path_, "cannot read activations"));
    }
    if (result == 0) throw Error(path_ + ": segment is truncated (entry ends past the file)");
    done += static_cast<size_t>(result);
  }
}

int64_t SegmentReader::size() const {
  struct stat info {};
  return ::fstat(fd_, &info) == 0 ? info.st_size : -1;
}

bool segment_unlocked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool unlocked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return unlocked;
}

}  // namespace flashps::cache
