// A Stable Diffusion folder (tiny, assembled from the golden fixtures in ../shared/fixtures):
// the prompt fields appear, and a generation with a prompt runs through the Engine. Skipped
// where the fixtures are absent, like the SDK's fixture tests.
#include <QGroupBox>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "document.h"
#include "generation_controller.h"
#include "generation_panel.h"
#include "main_window.h"
#include "staging_strip.h"

using namespace flashps_paint;
namespace fs = std::filesystem;

namespace {

void write_json(const fs::path& path, const nlohmann::json& value) {
  std::ofstream out(path);
  out << value.dump(2) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

fs::path fixtures_root() {
  if (const char* env = std::getenv("FLASHPS_FIXTURES_DIR")) return env;
  return fs::path(FLASHPS_SOURCE_DIR) / ".." / "shared" / "fixtures";
}

void copy_weights(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const char* name : {"config.json", "diffusion_pytorch_model.safetensors", "model.safetensors"})
    if (fs::exists(from / name)) fs::copy_file(from / name, to / name, fs::copy_options::overwrite_existing);
}

// Byte-level CLIP vocabulary without merges (ids below the tiny text encoder's 1000), as
// tests/pipeline/test_sd_pipeline.cpp builds it.
void write_tiny_tokenizer(const fs::path& dir) {
  fs::create_directories(dir);
  nlohmann::json vocab;
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const int code = printable ? b : 256 + extra++;
    const std::string utf8 = code < 0x80 ? std::string(1, char(code))
                                         : std::string{char(0xC0 | (code >> 6)), char(0x80 | (code & 0x3F))};
    vocab[utf8] = b;
    vocab[utf8 + "</w>"] = 256 + b;
  }
  vocab["<|startoftext|>"] = 998;
  vocab["<|endoftext|>"] = 999;
  write_json(dir / "vocab.json", vocab);
  std::ofstream(dir / "merges.txt") << "#version: 0.2\n";
}

void write_tiny_sd_folder(const fs::path& fixtures, const fs::path& root) {
  copy_weights(fixtures / "unet_sd_inpaint_tiny", root / "unet");
  copy_weights(fixtures / "vae_sd_tiny", root / "vae");
  copy_weights(fixtures / "clip_text_tiny", root / "text_encoder");
  write_tiny_tokenizer(root / "tokenizer");
  fs::create_directories(root / "scheduler");
  write_json(root / "scheduler" / "scheduler_config.json",
                           {{"_class_name", "PNDMScheduler"}, {"beta_start", 0.00085}, {"beta_end", 0.012},
                            {"beta_schedule", "scaled_linear"}, {"num_train_timesteps", 1000},
                            {"skip_prk_steps", true}, {"set_alpha_to_one", false}, {"steps_offset", 1}});
  write_json(root / "model_index.json",
                           {{"_class_name", "StableDiffusionInpaintPipeline"},
                            {"unet", {"diffusers", "UNet2DConditionModel"}},
                            {"vae", {"diffusers", "AutoencoderKL"}},
                            {"text_encoder", {"transformers", "CLIPTextModel"}},
                            {"tokenizer", {"transformers", "CLIPTokenizer"}},
                            {"scheduler", {"diffusers", "PNDMScheduler"}}});
}

}  // namespace

class StableDiffusionTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void promptsShowAndGenerateWithAStableDiffusionFolder() {
    const fs::path fixtures = fixtures_root();
    if (!fs::is_directory(fixtures / "unet_sd_inpaint_tiny"))
      QSKIP("../shared/fixtures not found (set FLASHPS_FIXTURES_DIR)");
    QStandardPaths::setTestModeEnabled(true);
    QSettings("FlashPS", "flashps-paint").clear();
    QTemporaryDir dir;
    const fs::path folder = fs::path(dir.path().toStdString()) / "tiny-sd";
    write_tiny_sd_folder(fixtures, folder);
    qputenv("FLASHPS_CACHE_DIR", (dir.path() + "/store").toLocal8Bit());  // captures not in the user's store

    MainWindow window;
    window.resize(1200, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    GenerationSettings settings;
    settings.steps = 3;
    settings.variations = 1;
    settings.prompt = "a red apple";
    settings.model_dir = QString::fromStdString(folder.string());
    // The controller loads the chosen folder and reports a model that takes text: prompts shown.
    QSignalSpy models(&window.controller(), &GenerationController::modelReady);
    window.panel().setSettings(settings);
    QTRY_VERIFY_WITH_TIMEOUT(window.panel().promptBox()->isVisibleTo(&window.panel()), 60000);
    QVERIFY(!window.panel().noTextNote()->isVisibleTo(&window.panel()));
    bool sd_described = false;
    for (const QList<QVariant>& event : models) {
      const auto model = event.at(0).value<ModelSummary>();
      if (model.option == settings.model_dir) sd_described = model.takes_text;
    }
    QVERIFY(sd_described);

    Image image(40, 36, 3);
    for (int y = 0; y < 36; ++y)
      for (int x = 0; x < 40; ++x) {
        image.pixels[(size_t(y) * 40 + x) * 3] = uint8_t(6 * x);
        image.pixels[(size_t(y) * 40 + x) * 3 + 1] = uint8_t(7 * y);
      }
    window.document().setImage(image);
    window.document().fillRectangle(QRect(8, 8, 16, 16), true);
    QSignalSpy finished(&window.controller(), &GenerationController::finished);
    window.generate();
    QVERIFY(finished.wait(120000));
    QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
    QCOMPARE(window.strip().count(), 1);
    QCOMPARE(window.strip().current()->image.size(), QSize(40, 36));
    // The first run captured the template; the next edit of the image replays it.
    QVERIFY2(window.panel().cacheStatusLabel()->text().contains("captured"),
             qPrintable(window.panel().cacheStatusLabel()->text()));
    window.generate();
    QVERIFY(finished.wait(120000));
    QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
    QCOMPARE(window.strip().count(), 2);
    QVERIFY2(window.panel().cacheStatusLabel()->text().contains("hit"),
             qPrintable(window.panel().cacheStatusLabel()->text()));
  }
};

QTEST_MAIN(StableDiffusionTest)
#include "test_stable_diffusion.moc"
