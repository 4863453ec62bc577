// A batch's output files: when one counts as written (resume), how it is written atomically, and
// the cleanup of temporaries that a killed run (SIGKILL, power loss) left behind.
#pragma once
#include <string>
#include <vector>

#include "core/image/image.h"

namespace flashps::serve {

// A regular, non-empty file that ends as its format's encoder ends it (PNG: the IEND chunk; JPEG:
// the EOI marker), so a 0-byte or truncated file is redone instead of skipped.
bool output_is_complete(const std::string& path);

// "<folder>/.partial-<pid>-<name>": every temporary of a batch output starts with ".partial-"
// (write_image adds its own ".tmp-*" beneath), so a later run can find what a killed one left.
std::string partial_output_path(const std::string& output);

// Writes through partial_output_path and renames into place; on failure nothing is left behind.
void write_output_atomically(const std::string& output, const Image& image);

// Removes ".partial-*" files in `folders` except those of live processes (another batch writing
// there now); returns how many were removed. Unreadable folders are passed over.
int remove_stale_partials(const std::vector<std::string>& folders);

}  // namespace flashps::serve
