#include "core/diagnostics/phase_profile.h"

namespace flashps {
namespace {
thread_local PhaseTotals* active_totals = nullptr;
}  // namespace

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::cache_wait: return "cache wait";
    case Phase::row_plan: return "row plan";
    case Phase::modulation: return "modulation";
    case Phase::projections: return "qkv projections";
    case Phase::qk_norm_rope: return "qk norm + rope";
    case Phase::attention: return "attention";
    case Phase::output_mlp: return "out proj + mlp";
    case Phase::cache_io: return "capture/replace";
    case Phase::embed_and_out: return "embed + final";
    case Phase::convolution: return "convolution";
    case Phase::group_norm: return "group norm";
    case Phase::count: break;
  }
  return "?";
}

double PhaseTotals::total() const {
  double sum = 0;
  for (double s : seconds) sum += s;
  return sum;
}

PhaseRecording::PhaseRecording(PhaseTotals* totals) : previous_(active_totals) { active_totals = totals; }
PhaseRecording::~PhaseRecording() { active_totals = previous_; }

PhaseTimer::PhaseTimer(Phase phase, double flops) : totals_(active_totals), phase_(phase) {
  if (!totals_) return;
  totals_->flops[static_cast<int>(phase)] += flops;
  start_ = std::chrono::steady_clock::now();
}

void PhaseTimer::stop() {
  if (!totals_) return;
  const auto now = std::chrono::steady_clock::now();
  totals_->seconds[static_cast<int>(phase_)] += std::chrono::duration<double>(now - start_).count();
  start_ = now;
}

void PhaseTimer::switch_to(Phase phase) {
  stop();
  phase_ = phase;
}

}  // namespace flashps
