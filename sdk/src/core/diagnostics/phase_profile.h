// Where a forward pass spends its time, by phase (benchmarks only). A PhaseRecording installs a
// totals sink for the calling thread; PhaseTimer scopes in the model code add their wall time to
// it. With no recording installed a scope costs one thread-local read, so the scopes stay in the
// production code and the profile measures exactly the code that runs.
#pragma once
#include <array>
#include <chrono>

namespace flashps {

enum class Phase {
  cache_wait,     // before_block: waiting for the block's cached rows (loader behind)
  row_plan,       // which rows each request computes this block (index tensors)
  modulation,     // AdaLayerNorm: conditioning GEMMs, layer norm, shift/scale
  projections,    // Q/K/V (and the single blocks' MLP-in) GEMMs
  qk_norm_rope,   // per-head RMSNorm and rotary embedding of queries and keys
  attention,      // scores, softmax, weighted values (over cached K/V too)
  output_mlp,     // output projection, feed-forward, gates and residuals, row scatter
  cache_io,       // recording captures, replacing rows from the cache after a block
  embed_and_out,  // input embeddings, final norm and projection, output assembly
  convolution,    // Conv2dLayer (UNet, VAE): the oneDNN convolution, its FLOPs counted
  group_norm,     // GroupNormLayer (UNet, VAE)
  count
};
constexpr int kPhaseCount = static_cast<int>(Phase::count);
const char* phase_name(Phase phase);

struct PhaseTotals {
  std::array<double, kPhaseCount> seconds{};
  std::array<double, kPhaseCount> flops{};  // counted by the timers that know them (convolutions)
  double total() const;
};

// While alive, PhaseTimers on this thread add to `totals` (nested recordings restore the outer).
class PhaseRecording {
 public:
  explicit PhaseRecording(PhaseTotals* totals);
  ~PhaseRecording();
  PhaseRecording(const PhaseRecording&) = delete;
  PhaseRecording& operator=(const PhaseRecording&) = delete;

 private:
  PhaseTotals* previous_;
};

// Times from construction (or the last switch_to) until destruction, charged to the phase.
class PhaseTimer {
 public:
  // `flops`: the work this scope does, added to the phase's count (0 when not known).
  explicit PhaseTimer(Phase phase, double flops = 0);
  ~PhaseTimer() { stop(); }
  void switch_to(Phase phase);  // ends the current phase and starts `phase`
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  void stop();
  PhaseTotals* totals_;
  Phase phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace flashps
