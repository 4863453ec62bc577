#include "models/loading/checkpoint_prefix.h"

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

class PrefixTensors : public CheckpointTensors {
 public:
  PrefixTensors(std::shared_ptr<const CheckpointTensors> file, std::string prefix)
      : file_(std::move(file)), prefix_(std::move(prefix)) {
    source_ = prefix_.empty() ? file_->source() : file_->source() + " (tensors under " + prefix_ + ")";
    const auto& stored = file_->entries();
    for (auto it = stored.lower_bound(prefix_); it != stored.end() && it->first.compare(0, prefix_.size(), prefix_) == 0;
         ++it) {
      CheckpointEntry entry = it->second;
      if (!prefix_.empty()) entry.origin += ": " + it->first;
      entries_.emplace(it->first.substr(prefix_.size()), std::move(entry));
    }
    if (entries_.empty())
      throw NotFoundError(file_->source() + ": no tensor key starts with '" + prefix_ + "'");
  }
  const std::string& source() const override { return source_; }
  const std::map<std::string, CheckpointEntry>& entries() const override { return entries_; }
  at::Tensor read(const std::string& key) const override { return file_->read(stored_key(key)); }
  void release(const std::string& key) const override { file_->release(stored_key(key)); }

 private:
  std::string stored_key(const std::string& key) const {
    if (!entries_.count(key)) throw NotFoundError(source_ + ": no tensor '" + key + "'");
    return prefix_ + key;
  }
  std::shared_ptr<const CheckpointTensors> file_;
  std::string prefix_, source_;
  std::map<std::string, CheckpointEntry> entries_;
};

}  // namespace

std::unique_ptr<CheckpointTensors> tensors_under_prefix(std::shared_ptr<const CheckpointTensors> file,
                                                        const std::string& prefix) {
  return std::make_unique<PrefixTensors>(std::move(file), prefix);
}

}  // namespace flashps
