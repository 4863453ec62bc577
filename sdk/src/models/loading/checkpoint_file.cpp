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

void refuse_pickled_checkpoint(const std::string& path) {
  const std::string extension = lowercase_extension(path);
  unsigned char head[9] = {};
  {
    std::ifstream stream(path, std::ios::binary);
    if (!stream) throw NotFoundError(path + ": file not found or unreadable");
    stream.read(reinterpret_cast<char*>(head), 9);
  }
  // torch.save writes a zip archive ("PK\3\4"); older files are a raw pickle (protocol 2+: 0x80).
  // A safetensors header length can start with the same bytes, but its JSON then starts at byte 8.
  const bool json_at_8 = head[8] == '{';
  const bool zip = !json_at_8 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4;
  const bool pickle = !json_at_8 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
  if (extension == ".ckpt" || extension == ".pt" || extension == ".pth" || extension == ".bin" || zip || pickle) {
    throw UnsupportedError(path + ": a pickled PyTorch checkpoint; FlashPS does not load pickles, because loading "
                           "one runs code stored in the file. Convert it to .safetensors (for example with "
                           "diffusers' scripts or the safetensors package's convert tool) and pass that file");
  }
}

std::unique_ptr<CheckpointTensors> open_checkpoint_file(const std::string& path) {
  refuse_pickled_checkpoint(path);
  const std::string extension = lowercase_extension(path);
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
