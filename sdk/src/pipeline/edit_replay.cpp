#include "pipeline/edit_replay.h"

namespace flashps {

engine::ReplaySettings replay_settings(const EditRequest& request, const engine::DeviceSpeed& speed,
                                       at::Device device, int first_step, int end_step) {
  engine::ReplaySettings settings;
  settings.requested = request.mode;
  settings.use_planner = request.use_planner;
  settings.speed = speed;
  settings.device = device;
  settings.first_step = first_step;
  settings.end_step = end_step;
  return settings;
}

void record_replay_start(EditStats& stats, const engine::ReplaySession* session, const engine::CaptureId& id) {
  stats.cache_hit = session != nullptr;
  stats.mode_used = session ? session->mode() : CacheMode::full;
  stats.compute_saving = session ? session->compute_saving() : 1.0;
  if (session) stats.template_hash = id.template_hash;
}

void record_replay_finish(EditStats& stats, engine::ReplaySession& session) {
  const engine::ReplayStats replay = session.stats();
  stats.blocks_from_cache = replay.blocks_from_cache;
  stats.blocks_computed = replay.blocks_computed;
  stats.entries_failed = replay.entries_failed;
  stats.cache_bytes_loaded = replay.bytes_loaded;
  stats.load_wait_seconds = replay.load_wait_seconds;
  if (const std::string note = session.failed_entries_note(); !note.empty()) stats.notes.push_back(note);
}

void record_replay_dropped(EditStats& stats, const std::string& why) {
  stats.notes.push_back("cache unusable, computed in full: " + why);
  stats.cache_hit = false;
  stats.mode_used = CacheMode::full;
  stats.compute_saving = 1.0;
}

TemplateInfo registered_template(const engine::CaptureId& id, const engine::Capture& capture, const EditStats& stats,
                                 std::chrono::steady_clock::time_point started) {
  TemplateInfo info;
  info.stats = stats;
  info.template_hash = id.template_hash;
  info.stats.template_hash = id.template_hash;
  info.config = id.config;
  info.bytes = capture.bytes();
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  info.stats.total_seconds = info.seconds;
  return info;
}

}  // namespace flashps
