#include "edit_report.h"

#include <QObject>
#include <QStringList>
#include <algorithm>

namespace flashps_paint {

namespace sdk = flashps::sdk;

namespace {

QString seconds(double value) { return QObject::tr("%1 s").arg(value, 0, 'f', 2); }

QString short_hash(const std::string& hash) { return QString::fromStdString(hash.substr(0, 8)); }

QString mode_name(sdk::CacheMode mode) { return QString::fromLatin1(sdk::cache_mode_name(mode)); }

// The SDK's notes about the template cache (why it missed, what a hit computed anyway).
QStringList cache_notes(const sdk::EditStats& stats) {
  QStringList notes;
  for (const std::string& note : stats.notes) {
    QString text = QString::fromStdString(note);
    if (text.endsWith(": computed in full")) text.chop(int(qstrlen(": computed in full")));
    if (text.contains("template") || text.contains("cache") || text.contains("computed")) notes << text;
  }
  return notes;
}

}  // namespace

QString variation_summary(quint64 seed, const sdk::EditStats& stats) {
  const QString ran = stats.cache_hit ? QObject::tr("cache hit (%1)").arg(mode_name(stats.mode_used))
                                      : QObject::tr("computed in full");
  return QObject::tr("seed %1 · %2 · %3").arg(seed).arg(ran, seconds(stats.total_seconds));
}

QString cache_status(const std::vector<sdk::EditStats>& variations) {
  if (variations.empty()) return QObject::tr("nothing ran");
  const auto hits = std::count_if(variations.begin(), variations.end(), [](const auto& s) { return s.cache_hit; });
  const int count = int(variations.size());
  if (hits == 0) {
    const QStringList notes = cache_notes(variations.front());
    return QObject::tr("miss: computed in full (%1)")
        .arg(notes.isEmpty() ? QObject::tr("no captured template matched") : notes.join("; "));
  }
  const sdk::EditStats* hit = nullptr;
  int from_cache = 0, blocks = 0;
  for (const sdk::EditStats& stats : variations) {
    if (!stats.cache_hit) continue;
    if (!hit) hit = &stats;
    from_cache += stats.blocks_from_cache;
    blocks += stats.blocks_from_cache + stats.blocks_computed;
  }
  QString status = QObject::tr("hit: template %1 reused (%2) by %3 of %4 variation(s), %5 of %6 blocks from the cache")
                       .arg(short_hash(hit->template_hash), mode_name(hit->mode_used))
                       .arg(hits)
                       .arg(count)
                       .arg(from_cache)
                       .arg(blocks);
  const QStringList notes = cache_notes(*hit);
  if (!notes.isEmpty()) status += QObject::tr(" (%1)").arg(notes.join("; "));
  return status;
}

QString timing_text(const std::vector<sdk::EditStats>& variations) {
  if (variations.empty()) return {};
  // Variations run together on the engine: the generation took as long as its longest edit.
  const auto longest = std::max_element(variations.begin(), variations.end(), [](const auto& a, const auto& b) {
    return a.total_seconds < b.total_seconds;
  });
  const int count = int(variations.size());
  QString text = count == 1 ? QObject::tr("this edit: %1").arg(seconds(longest->total_seconds))
                            : QObject::tr("%1 variations together: %2").arg(count).arg(seconds(longest->total_seconds));
  text += QObject::tr(" (denoise %1, %2 step(s)%3)")
              .arg(seconds(longest->denoise_seconds))
              .arg(longest->steps_run)
              .arg(count == 1 ? QString() : QObject::tr(" each"));
  const auto hit = std::find_if(variations.begin(), variations.end(), [](const auto& s) { return s.cache_hit; });
  if (hit == variations.end())
    text += QObject::tr("; computed in full, no template reused");
  else
    text += QObject::tr("; cache hit: about %1× less compute per step than this edit in full (an estimate of work, "
                        "not of time)")
                .arg(hit->compute_saving, 0, 'f', 1);
  return text;
}

QString capture_status(const sdk::EditStats& registration, const QString& store_directory) {
  if (registration.template_hash.empty())  // skipped: the store takes no captures (read-only)
    return QObject::tr("the template was not captured: %1")
        .arg(QString::fromStdString(registration.notes.empty() ? std::string("no reason given")
                                                                : registration.notes.front()));
  const QString where = store_directory.isEmpty() ? QObject::tr("in memory for this session")
                                                  : QObject::tr("in the store %1").arg(store_directory);
  return QObject::tr("captured template %1 (%2 MB, %3) %4: later edits of this image with these settings can "
                     "reuse it; each says whether it did")
      .arg(short_hash(registration.template_hash))
      .arg(registration.cache_bytes / 1e6, 0, 'f', 1)
      .arg(seconds(registration.total_seconds), where);
}

}  // namespace flashps_paint
