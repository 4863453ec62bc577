// The panel's cache status and timing text from EditStats alone (no model): a hit names the
// template, the mode and how many variations reused it, with the SDK's notes on what it computed
// anyway; a miss says "computed in full" and why; the time is the generation's own (its longest
// variation: they run together) and the saving is labelled an estimate.
#include <QtTest>
#include <flashps/flashps.hpp>

#include "edit_report.h"

using namespace flashps_paint;
using flashps::sdk::CacheMode;
using flashps::sdk::EditStats;

namespace {

EditStats hit(double seconds) {
  EditStats stats;
  stats.cache_hit = true;
  stats.mode_used = CacheMode::kv;
  stats.template_hash = "0123456789abcdef";
  stats.blocks_from_cache = 10;
  stats.blocks_computed = 2;
  stats.compute_saving = 9.8;
  stats.total_seconds = seconds;
  stats.denoise_seconds = seconds / 2;
  stats.steps_run = 4;
  return stats;
}

EditStats miss(double seconds, std::vector<std::string> notes) {
  EditStats stats;
  stats.mode_used = CacheMode::full;
  stats.total_seconds = seconds;
  stats.steps_run = 4;
  stats.notes = std::move(notes);
  return stats;
}

}  // namespace

class EditReportTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aHitNamesTheTemplateAndWhatItComputedAnyway() {
    EditStats partial = hit(1.39);
    partial.notes = {"image larger than the model's 256px: edited through a 384x384 window around the mask at (0, 0)",
                     "the template was captured with a mask: its 12 tokens outside this edit's mask are computed too"};
    const QString status = cache_status({partial});
    QCOMPARE(status, QString("hit: template 01234567 reused (kv) by 1 of 1 variation(s), 10 of 12 blocks from the "
                             "cache (the template was captured with a mask: its 12 tokens outside this edit's mask "
                             "are computed too)"));
    QCOMPARE(variation_summary(3, partial), QString("seed 3 · cache hit (kv) · 1.39 s"));
  }

  void aMissSaysComputedInFullAndWhy() {
    const EditStats stats = miss(0.27, {"template not registered for these settings: computed in full"});
    QCOMPARE(cache_status({stats}), QString("miss: computed in full (template not registered for these settings)"));
    QCOMPARE(cache_status({miss(0.27, {})}), QString("miss: computed in full (no captured template matched)"));
    QCOMPARE(variation_summary(1, stats), QString("seed 1 · computed in full · 0.27 s"));
    const QString timing = timing_text({stats});
    QVERIFY2(timing.startsWith("this edit: 0.27 s") && timing.endsWith("computed in full, no template reused"),
             qPrintable(timing));
  }

  void mixedVariationsCountTheHits() {
    const std::vector<EditStats> variations{hit(1.2), miss(1.5, {})};
    QVERIFY2(cache_status(variations).startsWith("hit: template 01234567 reused (kv) by 1 of 2 variation(s)"),
             qPrintable(cache_status(variations)));
    // Run together: the generation took its longest variation's time, never a sum or another run's.
    const QString timing = timing_text(variations);
    QVERIFY2(timing.startsWith("2 variations together: 1.50 s"), qPrintable(timing));
    QVERIFY2(timing.contains("about 9.8× less compute per step than this edit in full (an estimate of work"),
             qPrintable(timing));
  }

  void aCaptureDoesNotPromiseHits() {
    EditStats registration;
    registration.template_hash = "fedcba9876543210";
    registration.cache_bytes = 38'300'000;
    registration.total_seconds = 1.19;
    const QString in_store = capture_status(registration, "/tmp/store");
    QCOMPARE(in_store, QString("captured template fedcba98 (38.3 MB, 1.19 s) in the store /tmp/store: later edits of "
                               "this image with these settings can reuse it; each says whether it did"));
    QVERIFY(capture_status(registration, {}).contains("in memory for this session"));
  }

  void aSkippedCaptureSaysWhy() {
    EditStats skipped;  // what a read-only store returns: no hash, a note naming the fix
    skipped.notes = {"/ro is read-only, so templates are not registered (Read-only file system; remount it)"};
    QCOMPARE(capture_status(skipped, "/ro"),
             QString("the template was not captured: /ro is read-only, so templates are not registered "
                     "(Read-only file system; remount it)"));
  }
};

QTEST_MAIN(EditReportTest)
#include "test_edit_report.moc"
