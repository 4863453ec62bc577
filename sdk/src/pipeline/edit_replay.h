// What every family's pipeline shares around the engine's replay session and template
// recording (engine/replay_session.h): the settings a request asks for, and the EditStats and
// TemplateInfo an edit or a registration reports.
#pragma once
#include <chrono>
#include <memory>

#include "engine/capture.h"
#include "engine/replay_session.h"
#include "pipeline/edit_types.h"

namespace flashps {

// The settings of an edit running steps [first_step, end_step) on `device`; a family that cannot
// replay kv, or counts other units than tokens, sets why_no_kv and token_unit on top.
engine::ReplaySettings replay_settings(const EditRequest& request, const engine::DeviceSpeed& speed,
                                       at::Device device, int first_step, int end_step);

// Stats of an edit as it starts: replaying `session` (cache hit) or, when null, in full.
void record_replay_start(EditStats& stats, const engine::ReplaySession* session, const engine::CaptureId& id);
// Stats once the last step ran: blocks, bytes and waits of the session's routers, and a note
// when entries fell back to compute.
void record_replay_finish(EditStats& stats, engine::ReplaySession& session);
// The edit stopped replaying (its own entry was unreadable) and restarts in full.
void record_replay_dropped(EditStats& stats, const std::string& why);

// What register_template returns once `capture` is committed.
TemplateInfo registered_template(const engine::CaptureId& id, const engine::Capture& capture, const EditStats& stats,
                                 std::chrono::steady_clock::time_point started);

}  // namespace flashps
