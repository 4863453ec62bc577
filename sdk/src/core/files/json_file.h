// Reading and writing JSON files (diffusers config.json, fixtures' cases.json, manifests) with errors that
// name the file and the key.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace flashps {

// Parses a whole file; throws NotFoundError, IoError (unreadable) or CorruptDataError (not valid
// JSON), each "<path>: <problem>".
nlohmann::json read_json_file(const std::string& path);
// Writes indented JSON atomically (temporary file, then rename); IoError naming the path.
void write_json_file(const std::string& path, const nlohmann::json& json);

}  // namespace flashps
