// The Stable Diffusion family: UNet2DConditionModel folders (SD 1.x, 2.x, XL; 4- or 9-channel
// UNets), edited by SDInpaintPipeline.
#pragma once
#include "pipeline/family_registry.h"

namespace flashps {

const FamilyEntry& stable_diffusion_family();

}  // namespace flashps
