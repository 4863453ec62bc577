#include "training/photo_set.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/files/content_hash.h"
#include "core/diagnostics/error.h"
#include "core/image/image.h"

namespace flashps::training {
namespace {

bool is_photo(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), ::tolower);
  return extension == ".jpg" || extension == ".jpeg" || extension == ".png";
}

// Held out by the file name (not the folder), so the split survives moving the data.
bool held_out(const std::filesystem::path& path, int holdout_every) {
  if (holdout_every <= 1) return false;
  ContentHasher hasher;
  hasher.update(path.filename().string());
  const std::string hex = hasher.hex();
  return std::stoul(hex.substr(0, 8), nullptr, 16) % holdout_every == 0;
}

at::Tensor to_float(const at::Tensor& pixels) { return pixels.to(at::kFloat) / 127.5 - 1.0; }

}  // namespace

at::Tensor resize_image_tensor(const at::Tensor& image, int64_t height, int64_t width) {
  at::Tensor batch = image.to(at::kFloat).unsqueeze(0);
  const bool shrinking = height < image.size(1) || width < image.size(2);
  at::Tensor resized = shrinking ? at::_upsample_bilinear2d_aa(batch, {height, width}, false)
                                 : at::upsample_bilinear2d(batch, {height, width}, false);
  return resized[0];
}

PhotoSet PhotoSet::load(const std::vector<std::string>& folders, PhotoSplit split, const PhotoSetOptions& options,
                        const ProgressCallback& progress) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const std::string& folder : folders) {
    if (!fs::is_directory(folder)) throw Error(folder + ": photo folder does not exist");
    for (const auto& entry : fs::recursive_directory_iterator(folder))
      if (entry.is_regular_file() && is_photo(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());

  PhotoSet set;
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  for (const fs::path& file : files) {
    ++done;
    const bool holdout = held_out(file, options.holdout_every);
    if ((split == PhotoSplit::train && holdout) || (split == PhotoSplit::holdout && !holdout)) continue;
    try {
      Image image = to_rgb(read_image(file.string()));
      const int64_t short_side = std::min(image.width, image.height);
      if (short_side < options.min_short_side) {
        set.skipped_.push_back(file.string() + " (smaller than " + std::to_string(options.min_short_side) + " px)");
        continue;
      }
      at::Tensor pixels = at::from_blob(image.pixels.data(), {image.height, image.width, 3}, at::kByte)
                              .permute({2, 0, 1});
      at::Tensor stored;
      if (short_side > options.max_short_side) {
        const double scale = double(options.max_short_side) / short_side;
        at::Tensor resized = resize_image_tensor(pixels, std::lround(image.height * scale),
                                                 std::lround(image.width * scale));
        stored = resized.round().clamp(0, 255).to(at::kByte).contiguous();
      } else {
        stored = pixels.contiguous().clone();
      }
      set.photos_.push_back(stored);
      set.paths_.push_back(file.string());
    } catch (const Error& error) {
      set.skipped_.push_back(error.what());
    }
    report_progress(progress, {"load photos", done, static_cast<int>(files.size()),
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  }
  return set;
}

at::Tensor PhotoSet::random_crop(int64_t size, std::mt19937_64& rng) const {
  if (photos_.empty()) throw Error("photo set is empty");
  const at::Tensor& photo = photos_[std::uniform_int_distribution<size_t>(0, photos_.size() - 1)(rng)];
  const int64_t height = photo.size(1), width = photo.size(2);
  const int64_t short_side = std::min(height, width);
  // Window side log-uniform between the crop size and the photo's short side: both close-ups
  // with fine texture and wide views with whole objects.
  const double low = std::log(double(std::min(size, short_side))), high = std::log(double(short_side));
  const int64_t window = std::lround(std::exp(std::uniform_real_distribution<double>(low, high)(rng)));
  const int64_t top = std::uniform_int_distribution<int64_t>(0, height - window)(rng);
  const int64_t left = std::uniform_int_distribution<int64_t>(0, width - window)(rng);
  at::Tensor crop = photo.narrow(1, top, window).narrow(2, left, window);
  at::Tensor image = window == size ? crop.to(at::kFloat) : resize_image_tensor(crop, size, size);
  if (std::uniform_int_distribution<int>(0, 1)(rng)) image = image.flip({2});
  return (image / 127.5 - 1.0).clamp(-1, 1).contiguous();
}

at::Tensor PhotoSet::photo(size_t index) const { return to_float(photos_.at(index)); }

}  // namespace flashps::training
