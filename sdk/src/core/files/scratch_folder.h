// A private folder under the system's temporary directory ($TMPDIR, else /tmp), removed with
// everything in it when the object goes: for files a loader needs on disk only for a moment
// (a single file's carried tokenizer files).
#pragma once
#include <string>

namespace flashps {

class ScratchFolder {
 public:
  // Throws IoError naming `purpose` when the folder cannot be made.
  explicit ScratchFolder(const std::string& purpose);
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::string& path() const { return path_; }
  // Writes `bytes` to path()/name; IoError naming `purpose` and the file when it is not all written.
  void write_file(const std::string& name, const std::string& bytes) const;

 private:
  std::string purpose_, path_;
};

}  // namespace flashps
