#include "serve_tools/batch_outputs.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/diagnostics/error.h"

namespace flashps::serve {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPartialPrefix = ".partial-";

std::string lowercase_extension(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

bool has_bytes_at(std::ifstream& file, std::streamoff offset, std::ios::seekdir from, const std::string& expected) {
  std::string actual(expected.size(), '\0');
  file.seekg(offset, from);
  return file.read(actual.data(), static_cast<std::streamsize>(actual.size())) && actual == expected;
}

// The pid in ".partial-<pid>-<name>"; 0 for names without one (older runs wrote ".partial-<name>").
pid_t writer_of(const std::string& name) {
  const size_t digits_begin = std::char_traits<char>::length(kPartialPrefix);
  size_t end = digits_begin;
  while (end < name.size() && end - digits_begin < 9 && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == digits_begin || end >= name.size() || name[end] != '-') return 0;
  return static_cast<pid_t>(std::stol(name.substr(digits_begin, end - digits_begin)));
}

// A pid that is still running and not this process (which has written nothing yet when this runs).
bool written_by_live_process(const std::string& name) {
  const pid_t writer = writer_of(name);
  if (writer <= 0 || writer == ::getpid()) return false;
  return ::kill(writer, 0) == 0 || errno == EPERM;
}

}  // namespace

bool output_is_complete(const std::string& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return false;
  const auto size = fs::file_size(path, error);
  if (error || size == 0) return false;
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  const std::string extension = lowercase_extension(path);
  if (extension == ".png") {
    static const std::string signature("\x89PNG\r\n\x1a\n", 8);
    static const std::string iend("\0\0\0\0IEND\xae\x42\x60\x82", 12);
    return size >= signature.size() + iend.size() && has_bytes_at(file, 0, std::ios::beg, signature) &&
           has_bytes_at(file, -static_cast<std::streamoff>(iend.size()), std::ios::end, iend);
  }
  if (extension == ".jpg" || extension == ".jpeg")
    return size >= 4 && has_bytes_at(file, 0, std::ios::beg, "\xff\xd8") &&
           has_bytes_at(file, -2, std::ios::end, "\xff\xd9");
  return true;  // a format the batch cannot write: only its presence can be checked
}

std::string partial_output_path(const std::string& output) {
  const fs::path target(output);
  return (target.parent_path() /
          (kPartialPrefix + std::to_string(::getpid()) + "-" + target.filename().string()))
      .string();
}

void write_output_atomically(const std::string& output, const Image& image) {
  const fs::path target(output);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  const std::string partial = partial_output_path(output);  // same extension: the same encoder
  write_image(partial, image);  // itself atomic: a failure leaves no partial file
  std::error_code error;
  fs::rename(partial, target, error);
  if (error) {
    std::error_code ignored;
    fs::remove(partial, ignored);
    throw IoError(output + ": cannot move the finished image into place: " + error.message());
  }
}

int remove_stale_partials(const std::vector<std::string>& folders) {
  int removed = 0;
  for (const std::string& folder : std::set<std::string>(folders.begin(), folders.end())) {
    std::error_code error;
    fs::directory_iterator entries(folder.empty() ? "." : folder, error);
    if (error) continue;
    for (const fs::directory_entry& entry : entries) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(kPartialPrefix, 0) != 0 || !entry.is_regular_file(error) || written_by_live_process(name))
        continue;
      removed += fs::remove(entry.path(), error) ? 1 : 0;
    }
  }
  return removed;
}

}  // namespace flashps::serve
