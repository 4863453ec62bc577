// What the panel says about a finished generation, from the SDK's EditStats only: whether each
// variation reused a captured template (cache_hit, mode_used) and why not (the SDK's notes), and
// how long this generation took. No time is compared with another run's (they differ in size,
// batching and disk reads); the compute saving is the SDK's estimate for this same edit.
#pragma once
#include <QString>
#include <QtGlobal>
#include <vector>

#include <flashps/flashps.hpp>

namespace flashps_paint {

// One variation's caption, e.g. "seed 3 · cache hit (kv) · 0.41 s" or "seed 3 · computed in full · 0.41 s".
QString variation_summary(quint64 seed, const flashps::sdk::EditStats& stats);
// e.g. "hit: template 1a2b3c4d reused (kv) by 2 of 2 variations, 30 of 38 blocks from the cache"
// or "miss: computed in full (template not registered for these settings: computed in full)".
QString cache_status(const std::vector<flashps::sdk::EditStats>& variations);
// e.g. "2 variations together: 1.39 s (denoise 1.20 s, 4 steps each); cache hit: about 9.8× less
// compute per step than this edit in full (an estimate of work, not of time)".
QString timing_text(const std::vector<flashps::sdk::EditStats>& variations);
// After a registration: what was captured and where, without promising that every later edit hits.
QString capture_status(const flashps::sdk::EditStats& registration, const QString& store_directory);

}  // namespace flashps_paint
