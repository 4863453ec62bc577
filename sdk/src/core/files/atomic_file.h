// Writing a file so that a crash never leaves a torn file under its final name: the bytes go to
// a temporary file beside it, which is flushed to disk and then renamed into place.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flashps {

// Writes the concatenation of `pieces` to `path`. Throws IoError naming the path and the step
// that failed; the temporary file is removed then.
void write_file_atomically(const std::string& path, const std::vector<std::string_view>& pieces);

}  // namespace flashps
