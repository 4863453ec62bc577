#include "models/random/random_text_encoders.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "models/clip/clip_text_model.h"
#include "models/random/random_weights.h"
#include "models/t5/sentencepiece_model.h"
#include "models/t5/t5_encoder_model.h"

namespace flashps {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kClipVocabulary = 1000;  // byte-level ids and the two end tokens fit below it
constexpr int64_t kT5Vocabulary = 256;     // above the character model's pieces, as T5's 32128 is

std::vector<std::pair<std::string, at::Tensor>> parameters_of(torch::nn::Module& module) {
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : module.named_parameters(true)) tensors.emplace_back(item.key(), item.value());
  return tensors;
}

// Round-robin over `shards` files named as transformers names them, with the index mapping keys.
void save_sharded(const fs::path& dir, const std::vector<std::pair<std::string, at::Tensor>>& tensors, int shards) {
  if (shards <= 1) {
    save_safetensors((dir / "model.safetensors").string(), tensors, {{"format", "pt"}});
    return;
  }
  nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  std::vector<std::vector<std::pair<std::string, at::Tensor>>> parts(shards);
  std::vector<std::string> names(shards);
  int64_t total = 0;
  for (int part = 0; part < shards; ++part) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", part + 1, shards);
    names[part] = name;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const size_t part = i % static_cast<size_t>(shards);
    parts[part].push_back(tensors[i]);
    index["weight_map"][tensors[i].first] = names[part];
    total += tensors[i].second.numel() * tensors[i].second.element_size();
  }
  index["metadata"]["total_size"] = total;
  for (int part = 0; part < shards; ++part)
    save_safetensors((dir / names[part]).string(), parts[part], {{"format", "pt"}});
  write_json_file((dir / "model.safetensors.index.json").string(), index);
}

}  // namespace

void write_byte_level_clip_tokenizer(const std::string& dir) {
  fs::create_directories(dir);
  // GPT-2's byte-to-unicode table: printable bytes stand for themselves, the rest from U+0100 on.
  std::vector<bool> printable(256, false);
  for (int b = '!'; b <= '~'; ++b) printable[b] = true;
  for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
  for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
  int extra = 0;
  nlohmann::json vocab;
  for (int b = 0; b < 256; ++b) {
    const int code = printable[b] ? b : 256 + extra++;
    std::string utf8;
    if (code < 0x80)
      utf8 = std::string(1, char(code));
    else
      utf8 = {char(0xC0 | (code >> 6)), char(0x80 | (code & 0x3F))};
    vocab[utf8] = b;
    vocab[utf8 + "</w>"] = 256 + b;
  }
  vocab["<|startoftext|>"] = kClipVocabulary - 2;
  vocab["<|endoftext|>"] = kClipVocabulary - 1;
  write_json_file((fs::path(dir) / "vocab.json").string(), vocab);
  std::ofstream(fs::path(dir) / "merges.txt") << "#version: 0.2\n";
}

std::string character_level_spiece_model() {
  using namespace sentencepiece;
  ModelProto model;
  model.pieces = {{"<pad>", 0, PieceType::control}, {"</s>", 0, PieceType::control}, {"<unk>", 0, PieceType::unknown}};
  const std::string boundary = "\xe2\x96\x81";  // U+2581, SentencePiece's word boundary
  model.pieces.push_back({boundary, -3.0f, PieceType::normal});
  // Whole words score above their letters, so Viterbi prefers them, as in a trained model.
  for (const char* word : {"the", "of", "in", "on", "with", "red", "photo", "cat", "dog", "sky", "tree"})
    model.pieces.push_back({boundary + word, -2.0f, PieceType::normal});
  const std::string characters = "abcdefghijklmnopqrstuvwxyz0123456789.,!?'-";
  for (const char c : characters) {
    model.pieces.push_back({std::string(1, c), -5.0f, PieceType::normal});
    model.pieces.push_back({boundary + std::string(1, c), -5.5f, PieceType::normal});
  }
  model.trainer.model_type = 1;  // unigram
  model.trainer.pad_id = 0;
  model.trainer.eos_id = 1;
  model.trainer.unk_id = 2;
  model.trainer.bos_id = -1;  // T5 has none
  model.normalizer.name = "identity";
  return serialize_model_proto(model);
}

void write_random_flux_text_encoders(const std::string& model_dir, const RandomFluxTextEncodersSpec& spec) {
  const fs::path root(model_dir);
  at::NoGradGuard no_grad;

  ClipTextConfig clip;
  clip.vocab_size = kClipVocabulary;
  clip.hidden_size = spec.clip_hidden_size;
  clip.intermediate_size = 2 * spec.clip_hidden_size;
  clip.num_hidden_layers = 2;
  clip.num_attention_heads = 2;
  clip.max_position_embeddings = 77;
  clip.eos_token_id = 2;  // legacy configs, as openai/clip-vit-large-patch14: pool at the largest id
  fs::create_directories(root / "text_encoder");
  write_json_file((root / "text_encoder" / "config.json").string(),
                  {{"_class_name", "CLIPTextModel"},
                   {"architectures", {"CLIPTextModel"}},
                   {"vocab_size", clip.vocab_size},
                   {"hidden_size", clip.hidden_size},
                   {"intermediate_size", clip.intermediate_size},
                   {"num_hidden_layers", clip.num_hidden_layers},
                   {"num_attention_heads", clip.num_attention_heads},
                   {"max_position_embeddings", clip.max_position_embeddings},
                   {"hidden_act", clip.hidden_act},
                   {"layer_norm_eps", clip.layer_norm_eps},
                   {"eos_token_id", clip.eos_token_id}});
  ClipTextModel clip_model(clip);
  fill_random_weights(*clip_model, spec.seed + 10);
  save_safetensors((root / "text_encoder" / "model.safetensors").string(), parameters_of(*clip_model),
                   {{"format", "pt"}});
  write_byte_level_clip_tokenizer((root / "tokenizer").string());

  const nlohmann::json t5_json = {{"_class_name", "T5EncoderModel"},
                                  {"architectures", {"T5EncoderModel"}},
                                  {"model_type", "t5"},
                                  {"vocab_size", kT5Vocabulary},
                                  {"d_model", spec.t5_d_model},
                                  {"d_kv", spec.t5_d_model / spec.t5_heads},
                                  {"num_heads", spec.t5_heads},
                                  {"d_ff", spec.t5_d_ff},
                                  {"num_layers", spec.t5_layers},
                                  {"relative_attention_num_buckets", 32},
                                  {"relative_attention_max_distance", 128},
                                  {"feed_forward_proj", "gated-gelu"},
                                  {"layer_norm_epsilon", 1e-6},
                                  {"torch_dtype", "float32"}};
  fs::create_directories(root / "text_encoder_2");
  write_json_file((root / "text_encoder_2" / "config.json").string(), t5_json);
  T5EncoderModel t5(T5Config::from_json(t5_json, model_dir + "/text_encoder_2/config.json"));
  fill_random_weights(*t5, spec.seed + 11);
  save_sharded(root / "text_encoder_2", parameters_of(*t5), spec.t5_shards);

  fs::create_directories(root / "tokenizer_2");
  std::ofstream(root / "tokenizer_2" / "spiece.model", std::ios::binary) << character_level_spiece_model();
  write_json_file((root / "tokenizer_2" / "special_tokens_map.json").string(),
                  {{"eos_token", "</s>"}, {"pad_token", "<pad>"}, {"unk_token", "<unk>"}});
}

}  // namespace flashps
