// Per-component fixture runners used by run_fixture(). Each runs every case of a fixture set.
#pragma once
#include <map>
#include <string>

#include "dev/fixture_set.h"

namespace flashps::dev {

FixtureReport run_flux_transformer_fixture(const FixtureSet& set);  // models/flux
FixtureReport run_autoencoder_kl_fixture(const FixtureSet& set);    // models/vae
FixtureReport run_schedulers_fixture(const std::string& dir);       // schedulers/

// Compares a case's actual outputs (output name -> tensor) against its expected tensors.
CaseResult compare_case_outputs(const FixtureSet& set, const FixtureCase& fixture_case,
                                const std::map<std::string, at::Tensor>& actual);

}  // namespace flashps::dev
