#include "filter_session.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "host_suites.h"

namespace flashps::plugins {
namespace {

constexpr uint32_t kMaxSide = 16384;
constexpr uint64_t kMaxPixels = uint64_t(64) << 20;
constexpr size_t kMaxResults = 16;
constexpr int kMaxCanvasGrowth = 4096;

}  // namespace

void summarize_edits(const std::vector<EditReport>& edits, RunResult& result) {
  bool hit = false, captured = false;
  for (const EditReport& edit : edits) {
    hit = hit || edit.cache_hit;
    captured = captured || edit.captured;
    if (!edit.template_hash.empty()) result.template_hash = edit.template_hash;
  }
  result.cache_hit = hit && !captured;
  if (captured) result.notes.push_back("template captured: later edits of this image reuse it");
}

FilterSession::FilterSession(const flashps_plugin_descriptor& descriptor, const PluginInfo& info, sdk::Image image,
                             sdk::Image selection, ParameterValues values, SessionHooks hooks)
    : descriptor_(descriptor),
      info_(info),
      image_(std::move(image)),
      selection_(std::move(selection)),
      values_(std::move(values)),
      hooks_(std::move(hooks)) {
  memory_used_ = static_cast<int64_t>(image_.pixels.size() + selection_.pixels.size());
}

FilterSession::~FilterSession() {
  for (auto& [memory, bytes] : scratch_) std::free(memory);
}

int32_t FilterSession::call(int32_t selector) {
  flashps_filter_record record{};
  record.struct_size = sizeof(record);
  record.host_abi_version = FLASHPS_PLUGIN_ABI_VERSION;
  record.instance = instance_;
  record.suites = host_suites(hooks_.engine);
  record.host = this;
  const int32_t result = descriptor_.main(selector, &record);
  instance_ = record.instance;
  return result;
}

SessionOutcome FilterSession::run() {
  struct Step {
    int32_t selector;
    Phase phase;
  };
  const Step steps[] = {{FLASHPS_SELECTOR_PREPARE, Phase::prepare},
                        {FLASHPS_SELECTOR_PARAMETERS, Phase::parameters},
                        {FLASHPS_SELECTOR_START, Phase::start}};
  int32_t status = FLASHPS_PLUGIN_OK;
  for (const Step& step : steps) {
    phase_ = step.phase;
    status = aborted() ? int32_t(FLASHPS_PLUGIN_CANCELLED) : call(step.selector);
    if (status != FLASHPS_PLUGIN_OK) break;
  }
  if (status == FLASHPS_PLUGIN_OK) {
    phase_ = Phase::advance;
    while (true) {  // ADVANCE returning OK asks to be called again
      status = aborted() ? int32_t(FLASHPS_PLUGIN_CANCELLED) : call(FLASHPS_SELECTOR_ADVANCE);
      if (status == FLASHPS_PLUGIN_DONE) {
        status = FLASHPS_PLUGIN_OK;
        break;
      }
      if (status != FLASHPS_PLUGIN_OK) break;
    }
  }
  // FINISH runs whatever happened once PREPARE was called, so the plugin frees its state.
  const Phase failed_in = phase_;
  phase_ = Phase::finish;
  const int32_t finish_status = call(FLASHPS_SELECTOR_FINISH);
  phase_ = Phase::idle;
  if (status == FLASHPS_PLUGIN_OK && finish_status == FLASHPS_PLUGIN_ERROR) status = FLASHPS_PLUGIN_ERROR;

  static const char* const phase_names[] = {"", "PREPARE", "PARAMETERS", "START", "ADVANCE", "FINISH"};
  outcome_.status = status;
  if (status == FLASHPS_PLUGIN_CANCELLED || (cancelled_ && status != FLASHPS_PLUGIN_OK)) {
    outcome_.status = FLASHPS_PLUGIN_CANCELLED;
  } else if (status == FLASHPS_PLUGIN_ERROR) {
    outcome_.error = error_.empty() ? std::string("failed in ") + phase_names[int(failed_in)] + " without saying why"
                                    : error_;
  } else if (status != FLASHPS_PLUGIN_OK) {
    outcome_.status = FLASHPS_PLUGIN_ERROR;
    outcome_.error = std::string(phase_names[int(failed_in)]) + " returned " + std::to_string(status) +
                     ", which is not a flashps_plugin_result";
  } else if (outcome_.results.empty()) {
    outcome_.status = FLASHPS_PLUGIN_ERROR;
    outcome_.error = "finished without a result (a filter makes at least one with new_result)";
  }
  if (outcome_.status != FLASHPS_PLUGIN_OK) outcome_.results.clear();
  return std::move(outcome_);
}

bool FilterSession::expand_canvas(int left, int top, int right, int bottom) {
  if (phase_ != Phase::prepare) {
    log(FLASHPS_PLUGIN_LOG_WARNING, "expand_canvas works in PREPARE only");
    return false;
  }
  for (int side : {left, top, right, bottom})
    if (side < 0 || side > kMaxCanvasGrowth) {
      log(FLASHPS_PLUGIN_LOG_WARNING, "expand_canvas: each side must be 0.." + std::to_string(kMaxCanvasGrowth));
      return false;
    }
  const uint64_t width = uint64_t(image_.width) + left + right, height = uint64_t(image_.height) + top + bottom;
  if (width > kMaxSide || height > kMaxSide || width * height > kMaxPixels) {
    log(FLASHPS_PLUGIN_LOG_WARNING, "expand_canvas: " + std::to_string(width) + "x" + std::to_string(height) +
                                        " is larger than the host allows");
    return false;
  }
  sdk::Image padded(uint32_t(width), uint32_t(height), image_.channels);
  sdk::Image border(uint32_t(width), uint32_t(height), 1);
  const uint32_t channels = image_.channels;
  for (uint32_t y = 0; y < height; ++y) {
    // Edge pixels repeat outwards: the model then continues the picture instead of a flat colour.
    const int64_t source_y = std::min<int64_t>(std::max<int64_t>(int64_t(y) - top, 0), image_.height - 1);
    for (uint32_t x = 0; x < width; ++x) {
      const int64_t source_x = std::min<int64_t>(std::max<int64_t>(int64_t(x) - left, 0), image_.width - 1);
      std::memcpy(&padded.pixels[(size_t(y) * width + x) * channels],
                  &image_.pixels[(size_t(source_y) * image_.width + source_x) * channels], channels);
      const bool inside = int64_t(x) >= left && int64_t(x) < left + int64_t(image_.width) && int64_t(y) >= top &&
                          int64_t(y) < top + int64_t(image_.height);
      border.pixels[size_t(y) * width + x] = inside ? 0 : 255;
    }
  }
  memory_used_ += int64_t(padded.pixels.size() + border.pixels.size()) -
                  int64_t(image_.pixels.size() + selection_.pixels.size());
  image_ = std::move(padded);
  selection_ = std::move(border);
  return true;
}

uint8_t* FilterSession::new_result(uint32_t width, uint32_t height) {
  if (width == 0 || height == 0 || width > kMaxSide || height > kMaxSide || uint64_t(width) * height > kMaxPixels) {
    log(FLASHPS_PLUGIN_LOG_WARNING, "new_result: " + std::to_string(width) + "x" + std::to_string(height) +
                                        " is empty or larger than the host allows");
    return nullptr;
  }
  if (outcome_.results.size() >= kMaxResults) {
    log(FLASHPS_PLUGIN_LOG_WARNING, "new_result: at most " + std::to_string(kMaxResults) + " results");
    return nullptr;
  }
  const int64_t bytes = int64_t(width) * height * image_.channels;
  if (memory_used_ + bytes > hooks_.memory_budget_bytes) {
    log(FLASHPS_PLUGIN_LOG_WARNING, "new_result: over the run's memory budget");
    return nullptr;
  }
  memory_used_ += bytes;
  outcome_.results.emplace_back(width, height, image_.channels);
  return outcome_.results.back().data();
}

bool FilterSession::report_progress(const char* stage, int done, int total) {
  if (hooks_.progress && !cancelled_) {
    Progress progress;
    progress.stage = stage ? std::string(stage, strnlen(stage, 64)) : "plugin";
    progress.done = done;
    progress.total = total;
    if (!hooks_.progress(progress)) cancelled_ = true;
  }
  return !aborted();
}

bool FilterSession::aborted() {
  if (!cancelled_ && hooks_.cancelled && hooks_.cancelled()) cancelled_ = true;
  return cancelled_;
}

void FilterSession::log(int level, const std::string& text) {
  if (hooks_.log) hooks_.log(level, text);
}

const ParameterValue* FilterSession::parameter(const char* key) const { return key ? values_.find(key) : nullptr; }

flashps_editor* FilterSession::editor() {
  if (!hooks_.editor) return nullptr;
  std::string error;
  flashps_editor* editor = hooks_.editor(&error);
  if (!editor) log(FLASHPS_PLUGIN_LOG_WARNING, "no model: " + error);
  return editor;
}

void FilterSession::report_edit(const flashps_edit_stats& stats) {
  EditReport report;
  report.cache_hit = stats.cache_hit != 0;
  if (stats.struct_size >= offsetof(flashps_edit_stats, template_hash) + sizeof(stats.template_hash) &&
      stats.template_hash)
    report.template_hash = std::string(stats.template_hash, strnlen(stats.template_hash, 256));
  // A registration reports its template without having reused one.
  report.captured = !report.cache_hit && !report.template_hash.empty();
  report.seconds = stats.total_seconds;
  if (stats.struct_size >= offsetof(flashps_edit_stats, notes) + sizeof(stats.notes) && stats.notes) {
    const std::string notes(stats.notes, strnlen(stats.notes, 64 * 1024));
    size_t start = 0;
    while (start < notes.size()) {
      size_t end = notes.find('\n', start);
      if (end == std::string::npos) end = notes.size();
      if (end > start) outcome_.notes.push_back(notes.substr(start, end - start));
      start = end + 1;
    }
  }
  outcome_.edits.push_back(report);
}

void* FilterSession::allocate(size_t bytes) {
  if (bytes == 0 || int64_t(bytes) < 0 || memory_used_ + int64_t(bytes) > hooks_.memory_budget_bytes) return nullptr;
  void* memory = std::malloc(bytes);
  if (!memory) return nullptr;
  scratch_[memory] = bytes;
  memory_used_ += int64_t(bytes);
  return memory;
}

void FilterSession::release(void* memory) {
  const auto found = scratch_.find(memory);
  if (found == scratch_.end()) return;  // not ours (or freed twice): ignore rather than corrupt the heap
  memory_used_ -= int64_t(found->second);
  std::free(memory);
  scratch_.erase(found);
}

}  // namespace flashps::plugins
