// Per-component fixture runners used by run_fixture(). Each runs every case of a fixture set.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "dev/fixture_set.h"
#include "models/clip/clip_text_model.h"
#include "models/flux/flux_transformer.h"
#include "models/t5/t5_encoder_model.h"
#include "models/unet/unet_model.h"
#include "models/vae/autoencoder_kl.h"

namespace flashps::dev {

FixtureReport run_flux_transformer_fixture(const FixtureSet& set);  // models/flux
// Single-file and GGUF fixtures (run_checkpoint_fixture.cpp): each case loads its component from
// its `weights` file or the fixture's checkpoint, under the component's key prefix.
FixtureReport run_checkpoint_fixture(const FixtureSet& set);
FixtureReport run_autoencoder_kl_fixture(const FixtureSet& set);    // models/vae
FixtureReport run_schedulers_fixture(const std::string& dir);       // schedulers/
FixtureReport run_unet_fixture(const FixtureSet& set);              // models/unet
FixtureReport run_clip_text_fixture(const FixtureSet& set);         // models/clip
FixtureReport run_t5_encoder_fixture(const FixtureSet& set);        // models/t5
FixtureReport run_clip_tokenizer_fixture(const FixtureSet& set);    // models/clip
FixtureReport run_t5_tokenizer_fixture(const std::string& dir);     // models/t5 (own cases.json format)

// One case's actual outputs (output name -> tensor) from a loaded model, by component. Each throws
// Error for a call the model does not take.
std::map<std::string, at::Tensor> flux_case_outputs(const FluxTransformer& model, const FixtureSet& set,
                                                    const FixtureCase& fixture_case);
std::map<std::string, at::Tensor> unet_case_outputs(const UNet2DConditionModel& model, const FixtureSet& set,
                                                    const FixtureCase& fixture_case);
std::map<std::string, at::Tensor> autoencoder_kl_case_outputs(const AutoencoderKL& model, const FixtureSet& set,
                                                              const FixtureCase& fixture_case);
std::map<std::string, at::Tensor> clip_text_case_outputs(const ClipTextModel& model, const FixtureSet& set,
                                                         const FixtureCase& fixture_case);
std::map<std::string, at::Tensor> t5_encoder_case_outputs(const T5EncoderModel& model, const FixtureSet& set,
                                                          const FixtureCase& fixture_case);

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
