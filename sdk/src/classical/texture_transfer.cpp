#include "classical/texture_transfer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/diagnostics/error.h"
#include "core/mask/mask_ops.h"
#include "classical/smooth_field.h"

namespace flashps {

namespace {

struct Box {
  int64_t y = 0, x = 0, height = 0, width = 0;
};

// The part of the image texture transfer reads: the mask's bounding box and a margin to search
// for sources in, as large as the box (at least four tiles). Everything outside is never read,
// so the cost follows the mask's size, not the photo's.
Box transfer_window(const Box& masked, int64_t height, int64_t width, int64_t tile) {
  const int64_t margin = std::max(4 * tile, std::max(masked.height, masked.width));
  const int64_t top = std::max<int64_t>(0, masked.y - margin),
                bottom = std::min(height, masked.y + masked.height + margin);
  const int64_t left = std::max<int64_t>(0, masked.x - margin),
                right = std::min(width, masked.x + masked.width + margin);
  return {top, left, bottom - top, right - left};
}

// Masked-pixel counts of boxes, clipped to the image, from a summed-area table.
class MaskCounts {
 public:
  explicit MaskCounts(const at::Tensor& masked)  // [H, W] bool
      : height_(masked.size(0)), width_(masked.size(1)), sums_((height_ + 1) * (width_ + 1), 0) {
    const at::Tensor bytes = masked.contiguous();
    const bool* row = bytes.data_ptr<bool>();
    for (int64_t y = 0; y < height_; ++y, row += width_) {
      int32_t* above = &sums_[y * (width_ + 1)];
      int32_t* sums = above + width_ + 1;
      int32_t running = 0;
      for (int64_t x = 0; x < width_; ++x) {
        running += row[x];
        sums[x + 1] = above[x + 1] + running;
      }
    }
  }
  // Rows [y0, y1), columns [x0, x1).
  int64_t in(int64_t y0, int64_t x0, int64_t y1, int64_t x1) const {
    y0 = std::clamp<int64_t>(y0, 0, height_), y1 = std::clamp<int64_t>(y1, 0, height_);
    x0 = std::clamp<int64_t>(x0, 0, width_), x1 = std::clamp<int64_t>(x1, 0, width_);
    if (y1 <= y0 || x1 <= x0) return 0;
    return int64_t{at(y1, x1)} - at(y0, x1) - at(y1, x0) + at(y0, x0);
  }

 private:
  int32_t at(int64_t y, int64_t x) const { return sums_[y * (width_ + 1) + x]; }
  int64_t height_, width_;
  std::vector<int32_t> sums_;  // [H + 1, W + 1]; image sides are at most 16384, so counts fit
};

// Adds each target's blend of source details, windowed, into `detail` (the targets' span, from
// padded position (span_top, span_left)). Plain loops, one channel per thread: a tile is a few
// hundred pixels wide and there are hundreds of targets.
void blend_details(at::Tensor& detail, const at::Tensor& source_detail, const std::vector<int64_t>& target_rows,
                   const std::vector<int64_t>& target_columns, const std::vector<int64_t>& source_rows,
                   const std::vector<int64_t>& source_columns, const at::Tensor& chosen_sources,
                   const at::Tensor& weights, int64_t tile, int64_t span_top, int64_t span_left) {
  const at::Tensor ramp = at::sin(M_PI * (at::arange(tile, at::kFloat) + 0.5) / tile);
  const at::Tensor window_tensor = (ramp.unsqueeze(1) * ramp.unsqueeze(0)).contiguous();
  const float* window = window_tensor.data_ptr<float>();
  const auto chosen = chosen_sources.accessor<int64_t, 2>();
  const auto weight = weights.accessor<float, 2>();
  const int64_t span_width = detail.size(2), source_width = source_detail.size(2);
  at::parallel_for(0, detail.size(0), 1, [&](int64_t first_channel, int64_t end_channel) {
    std::vector<float> row_sum(tile);
    for (int64_t c = first_channel; c < end_channel; ++c) {
      float* out = detail[c].data_ptr<float>();
      const float* in = source_detail[c].data_ptr<float>();
      for (size_t t = 0; t < target_rows.size(); ++t) {
        std::vector<std::pair<const float*, float>> blended;
        for (int64_t k = 0; k < chosen.size(1); ++k) {
          if (weight[t][k] == 0) continue;
          const int64_t s = chosen[t][k];
          // Sources are in padded coordinates and wholly inside the crop.
          blended.emplace_back(in + (source_rows[s] - tile) * source_width + (source_columns[s] - tile), weight[t][k]);
        }
        float* target = out + (target_rows[t] - span_top) * span_width + (target_columns[t] - span_left);
        for (int64_t y = 0; y < tile; ++y) {
          std::fill(row_sum.begin(), row_sum.end(), 0.0f);
          for (const auto& [source, w] : blended) {
            const float* source_row = source + y * source_width;
            for (int64_t x = 0; x < tile; ++x) row_sum[x] += w * source_row[x];
          }
          const float* window_row = window + y * tile;
          float* target_row = target + y * span_width;
          for (int64_t x = 0; x < tile; ++x) target_row[x] += row_sum[x] * window_row[x];
        }
      }
    }
  });
}

// Colour means of the four half-tile cells of the tiles at (rows[k], columns[k]) (top-left
// corners in field coordinates): [K, 4 C], cell by cell.
at::Tensor tile_descriptors(const SmoothField& field, const std::vector<int64_t>& rows,
                            const std::vector<int64_t>& columns, int64_t half) {
  auto cell_starts = [half](const std::vector<int64_t>& starts) {
    std::vector<int64_t> cells;
    for (int64_t start : starts) cells.insert(cells.end(), {start, start + half});
    std::sort(cells.begin(), cells.end());
    cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
    return cells;
  };
  const std::vector<int64_t> row_cells = cell_starts(rows), column_cells = cell_starts(columns);
  const at::Tensor means = field.box_means(row_cells, column_cells, half);  // [C, row cells, column cells]
  const at::Tensor flat = means.permute({1, 2, 0}).reshape({-1, means.size(0)});
  auto position = [](const std::vector<int64_t>& cells, int64_t value) {
    return static_cast<int64_t>(std::lower_bound(cells.begin(), cells.end(), value) - cells.begin());
  };
  std::vector<at::Tensor> cells;
  for (int64_t dy : {int64_t{0}, half})
    for (int64_t dx : {int64_t{0}, half}) {
      std::vector<int64_t> index(rows.size());
      for (size_t k = 0; k < rows.size(); ++k)
        index[k] = position(row_cells, rows[k] + dy) * static_cast<int64_t>(column_cells.size()) +
                   position(column_cells, columns[k] + dx);
      cells.push_back(flat.index_select(0, at::tensor(index, at::kLong)));
    }
  return at::cat(cells, 1);
}

// Matching costs [targets, sources]: mean squared difference of the tiles' smoothed colours,
// plus a cost for distance (near sources continue the local texture best), plus a fixed
// pseudo-random cost per pair of positions so that neighbouring targets of one colour do not all
// take the same tile.
at::Tensor tile_costs(const at::Tensor& target_descriptors, const at::Tensor& target_rows,
                      const at::Tensor& target_columns, const at::Tensor& source_descriptors,
                      const at::Tensor& source_rows, const at::Tensor& source_columns, int64_t tile,
                      const TextureTransferOptions& options) {
  const double descriptor_size = static_cast<double>(target_descriptors.size(1));
  at::Tensor cost = (target_descriptors.pow(2).sum(1, true) + source_descriptors.pow(2).sum(1).unsqueeze(0) -
                     2 * at::matmul(target_descriptors, source_descriptors.t())) /
                    descriptor_size;
  const at::Tensor row_distance = (target_rows.unsqueeze(1) - source_rows.unsqueeze(0)).to(at::kFloat) / tile;
  const at::Tensor column_distance = (target_columns.unsqueeze(1) - source_columns.unsqueeze(0)).to(at::kFloat) / tile;
  cost += options.distance_weight * (row_distance.pow(2) + column_distance.pow(2));
  const at::Tensor pair_hash =
      at::bitwise_xor(at::bitwise_xor(target_rows.unsqueeze(1) * 73856093, target_columns.unsqueeze(1) * 19349663),
                      at::bitwise_xor(source_rows.unsqueeze(0) * 83492791, source_columns.unsqueeze(0) * 50331653));
  cost += options.variety * (at::remainder(pair_hash, 65521).to(at::kFloat) / 65521.0);
  return cost;
}

// Texture transfer on a crop: `fill_smooth` is the fill's blur, `original` [C, H, W] the photo
// (float, contiguous; overwritten with its detail), `masked` [H, W] the mask over the crop and
// `box` the mask's bounding box in it. Returns the textured colours over `box` ([C, box h, box w];
// only its masked pixels are meant), or an undefined tensor when no tile of the surroundings is
// fully kept.
//
// Tiles live in "padded" coordinates, the crop's shifted by a tile: tiles on a half-tile grid
// from there cover every masked pixel twice per axis. Outside the crop is neither kept nor a
// source.
at::Tensor texture_crop(const SmoothField& fill_smooth, at::Tensor original, const at::Tensor& masked, const Box& box,
                        const TextureTransferOptions& options) {
  const int64_t height = original.size(1), width = original.size(2), channels = original.size(0);
  const int64_t tile = options.tile, half = tile / 2;
  const int64_t padded_height = height + 2 * tile, padded_width = width + 2 * tile;

  std::vector<int64_t> target_rows, target_columns, source_rows, source_columns;
  {
    const MaskCounts counts(masked);
    // Targets: grid tiles touching the mask.
    for (int64_t row = 0; row + tile <= padded_height; row += half)
      for (int64_t column = 0; column + tile <= padded_width; column += half)
        if (counts.in(row - tile, column - tile, row, column) > 0) {
          target_rows.push_back(row);
          target_columns.push_back(column);
        }
    // Sources: tiles wholly kept, on a grid sparse enough to stay within max_candidates.
    auto sources_at = [&](int64_t stride) {
      source_rows.clear(), source_columns.clear();
      for (int64_t row = 0; row + tile <= padded_height; row += stride)
        for (int64_t column = 0; column + tile <= padded_width; column += stride)
          if (row >= tile && row <= height && column >= tile && column <= width &&
              counts.in(row - tile, column - tile, row, column) == 0) {
            source_rows.push_back(row);
            source_columns.push_back(column);
          }
    };
    int64_t stride = std::max<int64_t>(1, half / 2);
    sources_at(stride);
    while (static_cast<int64_t>(source_rows.size()) > options.max_candidates) {
      stride = static_cast<int64_t>(
          std::ceil(stride * std::sqrt(static_cast<double>(source_rows.size()) / options.max_candidates)));
      sources_at(stride);
    }
  }
  if (source_rows.empty() || target_rows.empty()) return {};

  // Shape from detail: the fill's smooth part stays; the original's detail is taken around its
  // kept pixels only (normalised blur), so a removed object's edges do not leak into sources.
  const SmoothField original_smooth = SmoothField::normalized(original, ~masked, options.detail_sigma, tile);
  auto to_field = [tile](std::vector<int64_t> positions) {
    for (int64_t& p : positions) p -= tile;
    return positions;
  };
  const at::Tensor target_descriptors =
      tile_descriptors(fill_smooth, to_field(target_rows), to_field(target_columns), half);
  const at::Tensor source_descriptors =
      tile_descriptors(original_smooth, to_field(source_rows), to_field(source_columns), half);
  const at::Tensor target_row_tensor = at::tensor(target_rows, at::kLong),
                   target_column_tensor = at::tensor(target_columns, at::kLong);
  const at::Tensor source_row_tensor = at::tensor(source_rows, at::kLong),
                   source_column_tensor = at::tensor(source_columns, at::kLong);

  // Each target blends its best `blend` sources, weighted exp(-(cost - best) / temperature) minus
  // the weight the next-best source would have had: a source's weight falls to zero before it
  // leaves the chosen few, so the texture changes continuously with the fill. An edit replayed
  // from the activation cache, whose fill differs very slightly from the full computation, then
  // gets very slightly different texture, never a different tile. Costs are computed for a few
  // hundred targets at a time, so a large mask does not hold a targets x sources matrix.
  const int64_t target_count = static_cast<int64_t>(target_rows.size());
  const int64_t source_count = static_cast<int64_t>(source_rows.size());
  const int64_t blend = std::max<int64_t>(1, std::min<int64_t>(options.blend, source_count - 1));
  std::vector<at::Tensor> chunk_weights, chunk_sources;
  for (int64_t first = 0; first < target_count; first += 256) {
    const int64_t count = std::min<int64_t>(256, target_count - first);
    if (source_count == 1) {
      chunk_sources.push_back(at::zeros({count, 1}, at::kLong));
      chunk_weights.push_back(at::ones({count, 1}));
      continue;
    }
    const at::Tensor cost =
        tile_costs(target_descriptors.narrow(0, first, count), target_row_tensor.narrow(0, first, count),
                   target_column_tensor.narrow(0, first, count), source_descriptors, source_row_tensor,
                   source_column_tensor, tile, options);
    const auto [best_costs, best_sources] = cost.topk(blend + 1, 1, /*largest=*/false, /*sorted=*/true);
    const at::Tensor above_best = (best_costs - best_costs.narrow(1, 0, 1)) / options.blend_temperature;
    chunk_weights.push_back(
        (at::exp(-above_best.narrow(1, 0, blend)) - at::exp(-above_best.narrow(1, blend, 1))).clamp_min(0));
    chunk_sources.push_back(best_sources.narrow(1, 0, blend));
  }
  at::Tensor weights = at::cat(chunk_weights), chosen_sources = at::cat(chunk_sources).contiguous();
  // Blended independent details keep the photo's strength when divided by the weights' norm.
  weights = (weights / weights.pow(2).sum(1, true).sqrt().clamp_min(1e-12)).contiguous();

  // The photo's detail, made in place of the photo (band by band: no second full-size image),
  // read by the chosen source tiles (wholly kept, so inside the crop).
  for (int64_t y = 0; y < height; y += 256) {
    const int64_t rows = std::min<int64_t>(256, height - y);
    original.narrow(1, y, rows).sub_(original_smooth.region(y, 0, rows, width));
  }

  // Sine windows at half-tile overlap: their squares sum to one, so independent details blend
  // without losing strength. Detail is only accumulated over the targets' span.
  const int64_t span_top = *std::min_element(target_rows.begin(), target_rows.end());
  const int64_t span_left = *std::min_element(target_columns.begin(), target_columns.end());
  const int64_t span_bottom = *std::max_element(target_rows.begin(), target_rows.end()) + tile;
  const int64_t span_right = *std::max_element(target_columns.begin(), target_columns.end()) + tile;
  at::Tensor detail = at::zeros({channels, span_bottom - span_top, span_right - span_left});
  blend_details(detail, original, target_rows, target_columns, source_rows, source_columns, chosen_sources, weights,
                tile, span_top, span_left);
  original = at::Tensor();

  // Targets cover every masked pixel, so the box lies within the span; the result is made there.
  at::Tensor textured =
      detail.narrow(1, box.y + tile - span_top, box.height).narrow(2, box.x + tile - span_left, box.width);
  textured.mul_(options.detail_strength);
  for (int64_t y = 0; y < box.height; y += 256) {
    const int64_t rows = std::min<int64_t>(256, box.height - y);
    textured.narrow(1, y, rows).add_(fill_smooth.region(box.y + y, box.x, rows, box.width)).clamp_(-1, 1);
  }
  return textured;
}

void check_options(const TextureTransferOptions& options) {
  if (options.tile < 4 || options.tile % 2 != 0 || !(options.detail_sigma > 0) || options.max_candidates < 1)
    throw Error("texture transfer: the tile must be even and at least 4 pixels, the sigma positive");
}

// [3, h, w] in [-1, 1] from the RGB bytes of `image` over `box`, as image_to_tensor converts;
// each plane's row written in one sequential pass.
at::Tensor float_crop(const Image& image, const Box& box) {
  at::Tensor values = at::empty({3, box.height, box.width});
  float* planes = values.data_ptr<float>();
  const int64_t plane = box.height * box.width;
  for (int64_t y = 0; y < box.height; ++y) {
    const uint8_t* row = &image.pixels[(static_cast<size_t>(box.y + y) * image.width + box.x) * 3];
    for (int64_t c = 0; c < 3; ++c) {
      float* out = planes + c * plane + y * box.width;
      for (int64_t x = 0; x < box.width; ++x) out[x] = static_cast<float>(row[3 * x + c]) / 127.5f - 1.0f;
    }
  }
  return values;
}

}  // namespace

TextureTransferOptions texture_transfer_options(int64_t token_pixels, double scale) {
  TextureTransferOptions options;
  const double token = std::max(1.0, static_cast<double>(token_pixels) * scale);
  // Detail finer than about a quarter token is what the model cannot carry.
  options.detail_sigma = std::max(1.0, token / 4);
  options.tile = std::max<int64_t>(8, 2 * static_cast<int64_t>(std::lround(token)));
  return options;
}

at::Tensor transfer_texture(const at::Tensor& fill, const at::Tensor& original, const at::Tensor& pixel_mask,
                            const TextureTransferOptions& options) {
  if (fill.dim() != 3 || !fill.sizes().equals(original.sizes()) || pixel_mask.dim() != 2 ||
      pixel_mask.size(0) != fill.size(1) || pixel_mask.size(1) != fill.size(2))
    throw Error("texture transfer: expected fill and original [C, H, W] and a mask [H, W] of the same size");
  check_options(options);
  const at::Tensor masked = pixel_mask.to(at::kFloat) > 0.5;
  if (!masked.any().item<bool>()) return fill;
  const at::Tensor masked_rows = masked.any(1).nonzero(), masked_columns = masked.any(0).nonzero();
  const int64_t y0 = masked_rows.min().item<int64_t>(), x0 = masked_columns.min().item<int64_t>();
  const Box box{y0, x0, masked_rows.max().item<int64_t>() + 1 - y0, masked_columns.max().item<int64_t>() + 1 - x0};
  const Box window = transfer_window(box, fill.size(1), fill.size(2), options.tile);
  auto crop = [&](const at::Tensor& t, const Box& b) { return t.narrow(-2, b.y, b.height).narrow(-1, b.x, b.width); };
  const Box box_in_window{box.y - window.y, box.x - window.x, box.height, box.width};
  const at::Tensor textured =
      texture_crop(SmoothField::blurred(crop(fill, window).to(at::kFloat), options.detail_sigma, options.tile),
                   crop(original, window).to(at::kFloat).clone(at::MemoryFormat::Contiguous), crop(masked, window),
                   box_in_window, options);
  if (!textured.defined()) return fill;
  at::Tensor result = fill.to(at::kFloat).clone();
  at::Tensor result_box = crop(result, box);
  result_box.copy_(at::where(crop(masked, box).unsqueeze(0), textured, result_box));
  return result.to(fill.scalar_type());
}

Image transfer_texture(const Image& fill, const Image& original, const Image& mask,
                       const TextureTransferOptions& options) {
  if (fill.channels != 3 || original.channels != 3 || fill.width != original.width || fill.height != original.height ||
      mask.width != fill.width || mask.height != fill.height)
    throw Error("texture transfer: expected RGB fill and original images and a mask of the same size");
  check_options(options);
  const Image binary = binarize_mask(mask);
  const PixelBox pixel_box = mask_bounding_box(binary);
  if (pixel_box.empty()) return fill;
  const Box box{pixel_box.y, pixel_box.x, pixel_box.h, pixel_box.w};
  const Box window = transfer_window(box, fill.height, fill.width, options.tile);
  const at::Tensor mask_bytes =
      at::from_blob(const_cast<uint8_t*>(binary.pixels.data()), {binary.height, binary.width}, at::kByte);
  const at::Tensor masked = mask_bytes.narrow(0, window.y, window.height).narrow(1, window.x, window.width) > 127;
  const SmoothField fill_smooth = SmoothField::blurred(float_crop(fill, window), options.detail_sigma, options.tile);
  const Box box_in_window{box.y - window.y, box.x - window.x, box.height, box.width};
  const at::Tensor textured = texture_crop(fill_smooth, float_crop(original, window), masked, box_in_window, options);
  if (!textured.defined()) return fill;
  // Masked pixels only, rounded as tensor_to_image rounds.
  const float* values = textured.data_ptr<float>();  // a view into a larger buffer: use its strides
  const int64_t plane = textured.stride(0), row_stride = textured.stride(1);
  Image result = fill;
  for (int64_t y = 0; y < box.height; ++y)
    for (int64_t x = 0; x < box.width; ++x) {
      const size_t at = static_cast<size_t>(box.y + y) * fill.width + static_cast<size_t>(box.x + x);
      if (binary.pixels[at] < 128) continue;
      for (int64_t c = 0; c < 3; ++c) {
        const float byte = std::clamp((values[c * plane + y * row_stride + x] + 1.0f) * 127.5f, 0.0f, 255.0f);
        result.pixels[at * 3 + c] = static_cast<uint8_t>(std::nearbyint(byte));
      }
    }
  return result;
}

}  // namespace flashps
