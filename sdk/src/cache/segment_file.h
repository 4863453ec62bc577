// Append-only segment files holding a capture's tensor bytes. The writer holds an exclusive
// flock for its lifetime, so recovery can tell a live writer's segment from a crashed one's.
#pragma once
#include <cstdint>
#include <string>

namespace flashps::cache {

class SegmentWriter {
 public:
  explicit SegmentWriter(std::string path);  // creates the file (must not exist), locks it
  ~SegmentWriter();                          // closes; removes the file unless kept
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  int64_t append(const void* data, size_t size);  // returns the offset; Error (e.g. disk full)
  void flush();                                   // fdatasync + the directory entry
  void keep() { keep_ = true; }
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
  bool keep_ = false;
};

class SegmentReader {
 public:
  explicit SegmentReader(std::string path);
  ~SegmentReader();
  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;

  // Reads exactly `size` bytes at `offset`; Error if the file is shorter (truncated segment).
  void read(int64_t offset, void* data, size_t size) const;
  int64_t size() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// True if no process holds the segment's writer lock (its writer finished or died).
bool segment_unlocked(const std::string& path);

}  // namespace flashps::cache
