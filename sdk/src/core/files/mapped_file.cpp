#include "core/files/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/diagnostics/error.h"
#include "core/files/file_descriptor.h"

namespace flashps {
MappedFile MappedFile::open(const std::string& path) {
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) throw NotFoundError(path + ": file not found");
    throw IoError(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) throw IoError(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(status.st_mode)) throw InvalidArgumentError(path + ": not a regular file");
  MappedFile file;
  const size_t size = static_cast<size_t>(status.st_size);
  if (size > 0) {
    void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (mapping == MAP_FAILED) throw IoError(path + ": cannot map into memory: " + std::strerror(errno));
    file.mapping_ = mapping;
    file.size_ = size;
  }
  return file;
}

MappedFile::~MappedFile() {
  if (mapping_) ::munmap(mapping_, size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (mapping_) ::munmap(mapping_, size_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release_pages(const uint8_t* begin, size_t size) const {
  if (!mapping_ || size == 0) return;
  // Whole pages inside the range only: a neighbour's pages stay mapped.
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto first_byte = reinterpret_cast<uintptr_t>(begin);
  const uintptr_t first = (first_byte + page - 1) / page * page;
  const uintptr_t last = (first_byte + size) / page * page;
  // The mapping is private and never written, so its pages are the file's: dropping them loses
  // nothing (madvise can only fail on a bad range, which this is not; its result is not needed).
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace flashps
