// A directory of captures, one safetensors file each (named by the hash of its CaptureId), so a
// template registered by one process is reused by later ones. Files are written atomically and
// memory-mapped for reading. The SQLite-indexed segment store will replace this for large
// deployments; this keeps captures usable across `flashps` invocations today.
#pragma once
#include <string>

#include "engine/capture.h"

namespace flashps {

class FileCaptureStore : public engine::CaptureStore {
 public:
  explicit FileCaptureStore(std::string directory);  // created if missing
  std::shared_ptr<const engine::Capture> find(const engine::CaptureId& id) override;
  std::unique_ptr<engine::CaptureWriter> begin(const engine::CaptureId& id) override;
  std::string path_for(const engine::CaptureId& id) const;
  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;
};

// ~/.cache/flashps/captures (XDG_CACHE_HOME respected), or FLASHPS_CACHE_DIR.
std::string default_capture_directory();

}  // namespace flashps
