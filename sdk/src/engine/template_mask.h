// The token mask a template was captured with, kept in its capture. Where the template run
// regenerated tokens (its mask), their captured activations belong to generated content and a
// different conditioning; an edit that keeps those tokens must not replay them, so it computes
// the union of its own mask and this one. Captures without the entry (none masked) replay as
// before.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/capture.h"
#include "engine/token_mask.h"

namespace flashps::engine {

constexpr int kTemplateMaskBlock = -2;  // entry {step 0, kTemplateMaskBlock, Slot::output}: [tokens, 1]

// Stores a non-empty mask; an empty one needs no entry.
void put_template_mask(CaptureWriter& writer, const TokenMask& mask);

// The mask `capture` was taken with, on the given grid (empty when it has none). Error if the
// stored mask has another number of tokens.
TokenMask template_mask(const Capture& capture, int64_t grid_height, int64_t grid_width);

// The tokens an edit with `edit_mask` computes when replaying `capture`.
TokenMask replay_compute_mask(const Capture& capture, const TokenMask& edit_mask);

// replay_compute_mask for a pipeline: adds a note when the template's mask adds tokens
// (`unit` names them: "tokens", "latent pixels"), and returns nothing, with a note, when the
// edit must be computed in full instead (the stored mask is unreadable, or no token is left to
// replay).
std::optional<TokenMask> replay_compute_mask_noted(const Capture& capture, const TokenMask& edit_mask,
                                                   const std::string& unit, std::vector<std::string>& notes);

}  // namespace flashps::engine
