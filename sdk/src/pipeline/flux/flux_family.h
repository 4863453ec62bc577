// The Flux family: FluxTransformer2DModel folders (FLUX.1 dev/schnell/Fill layouts, the bundled
// model), edited by FluxInpaintPipeline.
#pragma once
#include "pipeline/family_registry.h"

namespace flashps {

const FamilyEntry& flux_family();

}  // namespace flashps
