// The memory a host and its runner share for pixels: an anonymous memfd. Both sides copy in and
// out with pread/pwrite rather than mapping it, so a runner that shrinks the file cannot crash
// the host with SIGBUS: a read past the end is an error naming the slot.
#ifndef FLASHPS_PLUGINS_SHARED_MEMORY_H
#define FLASHPS_PLUGINS_SHARED_MEMORY_H

#include <cstddef>
#include <cstdint>

namespace flashps::plugins {

class SharedMemory {
 public:
  static SharedMemory create(uint64_t size);  // close-on-exec; the runner gets a dup
  static SharedMemory adopt(int fd);
  SharedMemory() = default;
  ~SharedMemory();
  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;

  int fd() const { return fd_; }
  uint64_t size() const;
  void resize(uint64_t size);
  // Throw std::runtime_error when out of bounds or on an I/O error.
  void write(uint64_t offset, const void* data, size_t bytes);
  void read(uint64_t offset, void* data, size_t bytes) const;

 private:
  int fd_ = -1;
};

}  // namespace flashps::plugins

#endif
