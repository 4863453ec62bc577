#include "shared_memory.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace flashps::plugins {

SharedMemory SharedMemory::create(uint64_t size) {
  SharedMemory memory;
  memory.fd_ = memfd_create("flashps-plugin-pixels", MFD_CLOEXEC);
  if (memory.fd_ < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
  memory.resize(size);
  return memory;
}

SharedMemory SharedMemory::adopt(int fd) {
  SharedMemory memory;
  memory.fd_ = fd;
  return memory;
}

SharedMemory::~SharedMemory() {
  if (fd_ >= 0) ::close(fd_);
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

uint64_t SharedMemory::size() const {
  struct stat status {};
  if (fstat(fd_, &status) != 0) throw std::runtime_error(std::string("shared memory: ") + std::strerror(errno));
  return uint64_t(status.st_size);
}

void SharedMemory::resize(uint64_t size) {
  if (ftruncate(fd_, off_t(size)) != 0)
    throw std::runtime_error("shared memory: cannot grow to " + std::to_string(size) + " bytes: " + std::strerror(errno));
}

void SharedMemory::write(uint64_t offset, const void* data, size_t bytes) {
  const auto* from = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t written = pwrite(fd_, from, bytes, off_t(offset));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw std::runtime_error(std::string("shared memory: write failed: ") + std::strerror(errno));
    from += written;
    offset += uint64_t(written);
    bytes -= size_t(written);
  }
}

void SharedMemory::read(uint64_t offset, void* data, size_t bytes) const {
  if (offset > size() || bytes > size() - offset)
    throw std::runtime_error("shared memory: " + std::to_string(bytes) + " bytes at " + std::to_string(offset) +
                             " lie beyond its " + std::to_string(size()) + " bytes");
  auto* to = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t got = pread(fd_, to, bytes, off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw std::runtime_error("shared memory: read failed (it shrank?)");
    to += got;
    offset += uint64_t(got);
    bytes -= size_t(got);
  }
}

}  // namespace flashps::plugins
