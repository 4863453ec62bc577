// A whole file mapped read-only into memory: model files (safetensors, GGUF) are read in place,
// so a loaded checkpoint's pages stay the page cache's and only what is touched is read.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace flashps {

class MappedFile {
 public:
  // Maps `path`. Throws NotFoundError (missing), InvalidArgumentError (not a regular file) or
  // IoError (cannot open, stat or map), each naming the path. An empty file maps to no bytes.
  static MappedFile open(const std::string& path);

  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return static_cast<const uint8_t*>(mapping_); }
  size_t size() const { return size_; }

  // Drops the mapped pages wholly inside [begin, begin + size) (a later read maps them again
  // from the file): reading a model tensor by tensor then holds one tensor's pages at a time.
  void release_pages(const uint8_t* begin, size_t size) const;

 private:
  void* mapping_ = nullptr;
  size_t size_ = 0;
};

}  // namespace flashps
