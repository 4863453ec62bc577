#include "models/loading/checkpoint_file.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "core/files/safetensors.h"

namespace flashps {
namespace {

std::string lowercase_extension(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  const size_t slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string extension = path.substr(dot);
  std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  return extension;
}

}  // namespace

std::unique_ptr<CheckpointTensors> open_checkpoint_file(const std::string& path) {
  const std::string extension = lowercase_extension(path);
  if (extension == ".ckpt" || extension == ".pt" || extension == ".pth" || extension == ".bin") {
    throw UnsupportedError(path + ": a pickled PyTorch checkpoint; FlashPS does not load pickles, because loading "
                           "one runs code stored in the file. Convert it to .safetensors (for example with "
                           "diffusers' scripts or the safetensors package's convert tool) and pass that file");
  }
  char magic[4] = {};
  {
    std::ifstream stream(path, std::ios::binary);
    if (!stream) throw NotFoundError(path + ": file not found or unreadable");
    stream.read(magic, 4);
  }
  if (std::string(magic, 4) == "GGUF") return gguf_tensors(GgufFile::open(path));
  if (extension == ".gguf") throw CorruptDataError(path + ": named .gguf but it does not start with \"GGUF\"");
  return safetensors_tensors({SafetensorsFile::open(path)});
}

}  // namespace flashps
