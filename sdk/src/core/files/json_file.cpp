#include "core/files/json_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/diagnostics/error.h"

namespace flashps {

nlohmann::json read_json_file(const std::string& path) {
  // An ifstream opens a directory without complaint on Linux, then reads nothing.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw InvalidArgumentError(path + ": is a directory, not a JSON file");
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    if (errno == ENOENT) throw NotFoundError(path + ": file not found");
    throw IoError(path + ": cannot open: " + std::strerror(errno));
  }
  std::ostringstream contents;
  contents << stream.rdbuf();
  if (stream.bad()) throw IoError(path + ": cannot read: " + std::strerror(errno));
  try {
    return nlohmann::json::parse(contents.str());
  } catch (const nlohmann::json::exception& error) {
    throw CorruptDataError(path + ": invalid JSON: " + error.what());
  }
}

void write_json_file(const std::string& path, const nlohmann::json& json) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << json.dump(2) << "\n";
    if (!out) throw IoError(path + ": cannot write");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw IoError(path + ": cannot write: " + error.message());
}

}  // namespace flashps
