#include "core/files/scratch_folder.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/diagnostics/error.h"

namespace flashps {

ScratchFolder::ScratchFolder(const std::string& purpose) : purpose_(purpose) {
  std::error_code no_temp;
  std::filesystem::path base = std::filesystem::temp_directory_path(no_temp);
  if (no_temp) base = "/tmp";
  std::string folder_template = (base / "flashps-XXXXXX").string();
  if (!::mkdtemp(folder_template.data()))
    throw IoError("cannot create a temporary folder in " + base.string() + " for " + purpose);
  path_ = folder_template;
}

ScratchFolder::~ScratchFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void ScratchFolder::write_file(const std::string& name, const std::string& bytes) const {
  const std::string file = (std::filesystem::path(path_) / name).string();
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw IoError("cannot write " + file + " (" + purpose_ + "): is the temporary directory full?");
}

}  // namespace flashps
