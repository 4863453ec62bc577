// Per-component fixture runners used by run_fixture(). Each runs every case of a fixture set.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "dev/fixture_set.h"

namespace flashps::dev {

FixtureReport run_flux_transformer_fixture(const FixtureSet& set);  // models/flux
// Single-file and GGUF fixtures of Flux transformers: each case loads its `weights` file.
FixtureReport run_flux_checkpoint_fixture(const FixtureSet& set);
FixtureReport run_autoencoder_kl_fixture(const FixtureSet& set);    // models/vae
FixtureReport run_schedulers_fixture(const std::string& dir);       // schedulers/
FixtureReport run_unet_fixture(const FixtureSet& set);              // models/unet
FixtureReport run_clip_text_fixture(const FixtureSet& set);         // models/clip
FixtureReport run_t5_encoder_fixture(const FixtureSet& set);        // models/t5
FixtureReport run_clip_tokenizer_fixture(const FixtureSet& set);    // models/clip
FixtureReport run_t5_tokenizer_fixture(const std::string& dir);     // models/t5 (own cases.json format)

// Compares a case's actual outputs (output name -> tensor) against its expected tensors.
CaseResult compare_case_outputs(const FixtureSet& set, const FixtureCase& fixture_case,
                                const std::map<std::string, at::Tensor>& actual);

// A case that could not run, with the reason.
CaseResult failed_case(const std::string& name, const std::exception& error);

// Runs every case of `set` through `outputs` (its actual outputs by name) and compares them; a case
// whose call is not `call`, or that throws, is reported failed and the others still run.
FixtureReport run_each_case(const FixtureSet& set, const std::string& call,
                            const std::function<std::map<std::string, at::Tensor>(const FixtureCase&)>& outputs);

}  // namespace flashps::dev
