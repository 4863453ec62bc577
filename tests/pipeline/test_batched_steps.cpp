// Stepwise jobs in a packed batch: continuous batching must not change any request's result.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cache/activation_store.h"
#include "core/diagnostics/error.h"
#include "pipeline/flux/flux_edit_job.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "pipeline/flux/flux_packing.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using namespace flashps::test;

namespace {

at::Tensor decoded_pixels(FluxInpaintPipeline& pipeline, EditJob& job) {
  auto& flux = dynamic_cast<FluxEditJob&>(job);
  // Compare in pixel space, [0, 1], as the tolerance is stated.
  at::NoGradGuard no_grad;
  at::Tensor latents = unpack_latents(flux.latents, flux.prepared.latent_height, flux.prepared.latent_width).unsqueeze(0);
  return (pipeline.components().vae->decode_latents(latents)[0].clamp(-1, 1) + 1) / 2;
}

double max_abs(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

TEST_CASE("a request joining a running batch finishes with the image it gives alone", "[pipeline][batching][slow]") {
  TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  // Three requests with different sizes, masks, steps, strengths and cache use.
  EditRequest first = request_for(gradient_image(64, 48), box_mask(64, 48, 8, 8, 24), 1, 5);
  EditRequest second = request_for(gradient_image(48, 64), box_mask(48, 64, 20, 30, 16), 2, 4);
  second.strength = 0.8;
  EditRequest third = request_for(gradient_image(64, 64), box_mask(64, 64, 0, 0, 20), 3, 4);
  pipeline->register_template(third);  // the third replays its template's kv cache

  std::vector<at::Tensor> alone;
  for (const EditRequest* request : {&first, &second, &third}) {
    auto job = pipeline->start_edit(*request);
    while (!job->denoised()) pipeline->step({job.get()});
    alone.push_back(decoded_pixels(*pipeline, *job));
  }

  auto a = pipeline->start_edit(first);
  auto b = pipeline->start_edit(second);
  auto c = pipeline->start_edit(third);
  CHECK(c->stats().cache_hit);
  pipeline->step({a.get()});
  pipeline->step({a.get()});
  pipeline->step({a.get(), b.get()});  // b joins at a's third step
  pipeline->step({a.get(), b.get(), c.get()});
  pipeline->step({a.get(), b.get(), c.get()});
  REQUIRE(a->denoised());
  REQUIRE(b->denoised());  // strength 0.8 of 4 steps: 3 steps
  pipeline->step({c.get()});
  pipeline->step({c.get()});
  REQUIRE(c->denoised());
  CHECK(max_abs(decoded_pixels(*pipeline, *a), alone[0]) <= 1e-3);
  CHECK(max_abs(decoded_pixels(*pipeline, *b), alone[1]) <= 1e-3);
  CHECK(max_abs(decoded_pixels(*pipeline, *c), alone[2]) <= 1e-3);

  EditResult result = pipeline->finish_edit(*b);
  EditResult single = pipeline->edit(second);
  CHECK(max_pixel_difference(result.image, single.image) <= 1);
  CHECK(result.stats.steps_run == 3);
}

TEST_CASE("a job cancelled in a batch leaves its batch-mates running", "[pipeline][batching]") {
  TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  EditRequest keep = request_for(gradient_image(32, 32), box_mask(32, 32, 8, 8, 12), 4, 3);
  EditRequest cancel = keep;
  cancel.seed = 5;
  cancel.progress = [](const ProgressEvent& event) { return event.step < 2; };
  auto kept = pipeline->start_edit(keep);
  auto cancelled = pipeline->start_edit(cancel);
  std::vector<EditJob*> batch{kept.get(), cancelled.get()};
  while (!batch.empty()) {
    pipeline->step(batch);
    batch.erase(std::remove_if(batch.begin(), batch.end(), [](EditJob* job) { return job->denoised(); }), batch.end());
  }
  CHECK(cancelled->failed());
  CHECK(cancelled->steps_done() == 2);
  CHECK_THROWS_AS(pipeline->finish_edit(*cancelled), Cancelled);
  CHECK_FALSE(kept->failed());
  CHECK(max_pixel_difference(pipeline->finish_edit(*kept).image, pipeline->edit(keep).image) == 0);
  CHECK_THROWS_AS(pipeline->step({kept.get()}), Error);  // already denoised
}

TEST_CASE("an unreadable kv cache restarts only its own job of a batch", "[pipeline][batching][cache]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  cache::ActivationStoreOptions options;
  options.directory = dir.file("store");
  EditRequest damaged = request_for(gradient_image(64, 48), box_mask(64, 48, 16, 16, 20), 5);
  damaged.mode = CacheMode::kv;
  EditRequest other = request_for(gradient_image(32, 32), box_mask(32, 32, 0, 8, 16), 6);
  auto pipeline = FluxInpaintPipeline::load(model, at::kFloat, cache::ActivationStore::open(options));
  pipeline->register_template(damaged, /*capture_kv=*/true, /*capture_hidden=*/false);
  EditRequest damaged_full = damaged;
  damaged_full.mode = CacheMode::full;
  const Image expected_damaged = pipeline->edit(damaged_full).image;
  const Image expected_other = pipeline->edit(other).image;
  for (const auto& file : std::filesystem::directory_iterator(dir.file("store") + "/segments")) {
    std::fstream segment(file.path(), std::ios::in | std::ios::out | std::ios::binary);
    for (int64_t offset = 0; offset < static_cast<int64_t>(std::filesystem::file_size(file.path())); offset += 4096) {
      segment.seekp(offset);
      segment.put('\x7f');
    }
  }
  auto fresh = FluxInpaintPipeline::load(model, at::kFloat, cache::ActivationStore::open(options));
  auto a = fresh->start_edit(damaged);
  auto b = fresh->start_edit(other);
  CHECK(a->stats().cache_hit);
  std::vector<EditJob*> batch{a.get(), b.get()};
  while (!batch.empty()) {
    fresh->step(batch);
    batch.erase(std::remove_if(batch.begin(), batch.end(), [](EditJob* job) { return job->denoised(); }), batch.end());
  }
  EditResult result_a = fresh->finish_edit(*a);
  CHECK_FALSE(result_a.stats.cache_hit);
  CHECK(result_a.stats.mode_used == CacheMode::full);
  CHECK(max_pixel_difference(result_a.image, expected_damaged) <= 1);
  CHECK(max_pixel_difference(fresh->finish_edit(*b).image, expected_other) <= 1);
}
