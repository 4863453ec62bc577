// The Stable Diffusion side of starting an edit (pipeline/inpaint_loop.h runs the phases): the
// template lookup key, the UNet's blocks a hidden replay plans over, its replay restrictions, and
// the work estimate at submission.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "models/unet/unet_block_work.h"
#include "pipeline/prepared_mask.h"
#include "pipeline/stable_diffusion/sd_edit_job.h"
#include "pipeline/stable_diffusion/sd_inpaint_pipeline.h"

namespace flashps {

InpaintLoop::TemplateKey SDInpaintPipeline::template_key(const EditRequest& request) const {
  at::NoGradGuard no_grad;
  SDEditJob job;
  prepare_images(request, job);
  job.guidance = job.request.guidance_scale.value_or(components_.default_guidance);
  return {capture_id(job), job.prepared.mask.tokens};
}

void SDInpaintPipeline::restrict_replay(engine::ReplaySettings& settings) const {
  // Hidden replay only: dense ResNets need every row.
  settings.why_no_kv = "cache mode 'kv' does not apply to UNet models (their ResNets are dense): use 'hidden' or 'auto'";
  settings.token_unit = "latent pixels";
}

engine::ReplayBlocks SDInpaintPipeline::replay_blocks(const InpaintJob& base_job, const engine::TokenMask& mask) const {
  const auto& job = static_cast<const SDEditJob&>(base_job);
  const UNetConfig& config = components_.unet->config();
  // Each transformer block sees its level's grid: the mask max-pooled to it, for both guidance
  // rows. The dense ResNets and samplers are in the speed model's fixed cost.
  engine::ReplayBlocks blocks;
  blocks.work = unet_block_work(config, job.context.size(1), c10::elementSize(components_.unet->dtype()),
                                job.prepared.mask.tokens.grid_height);
  blocks.block_masks = unet_block_masks(config, mask, job.rows());
  for (const engine::TokenMask& block_mask : blocks.block_masks)
    blocks.counts.push_back({0, block_mask.token_count(), block_mask.masked_count()});
  return blocks;
}

void SDInpaintPipeline::estimate_tokens(const EditRequest& request, engine::RequestWork& work) const {
  const int64_t factor = components_.vae->scale_factor();
  const int64_t rows = request.guidance_scale.value_or(components_.default_guidance) > 1.0 ? 2 : 1;
  const int64_t latent_tokens = std::max<int64_t>(1, (request.image.width / factor) * (request.image.height / factor));
  const double ratio = requested_mask_ratio(request);
  work.image_tokens = rows * latent_tokens;
  work.masked_tokens = rows * std::min(latent_tokens, static_cast<int64_t>(std::ceil(ratio * double(latent_tokens))));
  work.text_tokens = 0;  // cross-attention context, not token rows
}

}  // namespace flashps
