// Trains a Flux Fill model (the SDK's own FluxTransformer classes) with rectified flow on random
// photo crops and random masks. Reproducible: every step draws its data from a generator seeded
// by (seed, step), so a run resumed from a checkpoint continues exactly as an uninterrupted one.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "training/fill_model_spec.h"
#include "training/photo_set.h"

namespace flashps::training {

struct FillTrainerOptions {
  std::string output_dir;                 // checkpoint/ and model/ are written here
  std::vector<std::string> photo_folders;  // training photos (the held-out split is excluded)
  PhotoSetOptions photo_options;
  std::vector<std::string> trace_files;    // mask-ratio CSVs; empty = a uniform fallback
  FillModelSpec spec = small_fill_spec();
  int64_t steps = 2000;                   // total optimiser steps; resuming continues up to this
  int64_t tokens_per_batch = 4096;        // batch size in image tokens (crops per step vary)
  std::vector<int64_t> crop_sizes = {128, 128, 128, 192, 256};
  double learning_rate = 4e-4;
  int64_t warmup_steps = 100;
  double ema_decay = 0.999;
  double unmasked_loss_weight = 0.3;       // tokens the conditioning already shows are easier
  // What the loss compares, for an x0-predicting model. "velocity": the implied flow velocity,
  // (x_t - x0) / sigma, which weighs low noise levels up to 25x more than high ones. "sample":
  // the clean latents themselves, every noise level alike, so the model learns to ignore the
  // noise at high sigma (a model trained on "velocity" let the first step's noise through).
  std::string loss_target = "velocity";
  // Weight of a loss on the pixel gradients of the predicted x0 (decoded by the linear patch
  // autoencoder) against the photo's: neighbouring 8x8-pixel tokens that disagree make steps at
  // token borders that the per-token loss barely sees. In latent units; needs loss "sample".
  double edge_loss_weight = 0;
  // Weight of training/detail_loss.h on the masked tokens of the decoded x0: their local amount of
  // fine detail must match the photo's, so the fill is not pulled flat. Needs loss "sample".
  double detail_loss_weight = 0;
  // Exponent a of per-value weights var^-a in the "sample" loss, var being each packed latent
  // value's variance over photo crops (normalised to mean 1). The patch autoencoder's principal
  // components differ ~3000x in variance, so an unweighted loss barely sees the chroma and detail
  // components; a = 1 is the loss in whitened latents, 0 the plain one. Tried against the bundled
  // model's seed-dependent colour casts, it did not remove them (its MODEL_CARD.md, Limits).
  double channel_balance = 0;
  // A model folder (flashps-train's model/ or a shipped one) whose transformer, prompt embeddings
  // and autoencoder start a new run (fine-tuning); ignored when a checkpoint exists.
  std::string init_from;
  int64_t checkpoint_every = 50;
  uint64_t seed = 1;
  bool resume = true;
};

struct TrainingProgress {
  int64_t step = 0, total_steps = 0;
  double loss = 0;          // this step's loss
  double average_loss = 0;  // mean over the last steps
  double seconds_per_step = 0;
  int64_t samples_seen = 0;
};

// Returns false to stop (a checkpoint is written first).
using TrainingCallback = std::function<bool(const TrainingProgress&)>;

struct TrainingSummary {
  int64_t first_step = 0, last_step = 0;  // steps run in this call: [first_step, last_step)
  double seconds = 0;
  double final_average_loss = 0;
  bool stopped_early = false;
  std::string model_dir;  // the exported model (EMA weights)
};

TrainingSummary train_fill_model(const FillTrainerOptions& options, const TrainingCallback& callback = {});

}  // namespace flashps::training
