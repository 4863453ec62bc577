// Prompt encoding of Stable Diffusion folders, as diffusers' pipelines do it:
//   SD 1.x / 2.x  text_encoder(tokenizer(prompt)).last_hidden_state            [1, 77, D]
//   SDXL          cat(penultimate(text_encoder), penultimate(text_encoder_2))  [1, 77, D1 + D2]
//                 and the pooled text_embeds of text_encoder_2                 [1, P]
// Prompts over 77 tokens are truncated, with a note (diffusers logs a warning).
#pragma once
#include <ATen/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "models/clip/clip_text_model.h"
#include "models/clip/clip_tokenizer.h"

namespace flashps {

struct SDTextEncoders {
  std::optional<ClipTokenizer> tokenizer, tokenizer_2;
  ClipTextModel text_encoder{nullptr}, text_encoder_2{nullptr};
  bool is_xl() const { return static_cast<bool>(text_encoder_2); }
};

struct EncodedPrompt {
  at::Tensor embeds;  // [1, 77, D]
  at::Tensor pooled;  // SDXL: [1, P]
  bool truncated = false;
};

EncodedPrompt encode_prompt(const SDTextEncoders& encoders, const std::string& prompt);

}  // namespace flashps
