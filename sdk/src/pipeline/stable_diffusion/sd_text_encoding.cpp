#include "pipeline/stable_diffusion/sd_text_encoding.h"

#include <ATen/ATen.h>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

at::Tensor ids_tensor(const TokenizedPrompt& tokens) {
  return at::tensor(std::vector<int64_t>(tokens.input_ids), at::kLong).unsqueeze(0);
}

}  // namespace

EncodedPrompt encode_prompt(const SDTextEncoders& encoders, const std::string& prompt) {
  if (!encoders.tokenizer || !encoders.text_encoder) throw Error("Stable Diffusion pipeline has no text encoder");
  EncodedPrompt encoded;
  const TokenizedPrompt tokens = encoders.tokenizer->tokenize(prompt, 77);
  encoded.truncated = tokens.truncated;
  const ClipTextOutput first = encoders.text_encoder->forward(ids_tensor(tokens));
  if (!encoders.is_xl()) {
    encoded.embeds = first.last_hidden_state;
    return encoded;
  }
  if (!encoders.tokenizer_2) throw Error("SDXL pipeline has text_encoder_2 but no tokenizer_2");
  const TokenizedPrompt tokens_2 = encoders.tokenizer_2->tokenize(prompt, 77);
  const ClipTextOutput second = encoders.text_encoder_2->forward(ids_tensor(tokens_2));
  if (!second.text_embeds.defined()) throw Error("SDXL text_encoder_2 must be a CLIPTextModelWithProjection");
  encoded.embeds = at::cat({first.penultimate, second.penultimate}, -1);
  encoded.pooled = second.text_embeds;
  return encoded;
}

}  // namespace flashps
