#include "core/files/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/diagnostics/error.h"
#include "core/files/file_descriptor.h"

namespace flashps {
namespace {

// Writes all bytes, retrying on EINTR and short writes (large buffers, pipes, near-full disks).
bool write_all(int fd, const char* bytes, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::vector<std::string_view>& pieces) {
  const std::string temporary_path = path + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temporary_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw IoError(path + ": cannot create temporary file '" + temporary_path +
                  "': " + std::strerror(errno));
  }
  auto fail = [&](const std::string& step, int fd_to_close) {
    const std::string reason = std::strerror(errno);
    if (fd_to_close >= 0) ::close(fd_to_close);
    ::unlink(temporary_path.c_str());
    throw IoError(path + ": cannot " + step + ": " + reason);
  };
  for (std::string_view piece : pieces) {
    if (!write_all(fd, piece.data(), piece.size())) fail("write", fd);
  }
  // fsync before rename: otherwise a crash can leave the new name pointing at unwritten blocks.
  if (::fsync(fd) != 0) fail("flush to disk", fd);
  if (::close(fd) != 0) fail("close", -1);
  if (::rename(temporary_path.c_str(), path.c_str()) != 0) fail("rename into place", -1);

  // Make the rename itself durable; best effort, as some filesystems refuse to fsync directories.
  const size_t slash = path.find_last_of('/');
  const std::string directory =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const FileDescriptor directory_fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory_fd.get() >= 0) ::fsync(directory_fd.get());
}

}  // namespace flashps
