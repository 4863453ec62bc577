// A Flux edit in flight (internal to the Flux pipeline): the shared loop's state
// (pipeline/inpaint_job.h) plus the prepared tensors, the Fill conditioning and the transformer
// inputs that stay the same over steps.
#pragma once
#include <ATen/Tensor.h>

#include <vector>

#include "models/flux/flux_transformer.h"
#include "pipeline/flux/flux_inpaint_prepare.h"
#include "pipeline/inpaint_job.h"

namespace flashps {

struct FluxEditJob final : InpaintJob {
  FluxInpaintPipeline::Prepared prepared;
  PreparedImage& prepared_image() override { return prepared; }

  std::vector<double> model_timesteps;  // per step, as the model takes it (sigma in [0, 1])
  at::Tensor fill_conditioning;
  FluxRequest model_inputs;  // the inputs that stay the same over steps
  // The Fill conditioning's share of the model's input projection for the rows the model carries.
  ConditioningEmbeddingCache fill_embedding;
};

}  // namespace flashps
