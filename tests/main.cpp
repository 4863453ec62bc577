#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

#include "core/runtime/runtime.h"

int main(int argc, char** argv) {
  // As under ctest: a device profile in the user's cache must not change what tests plan.
  setenv("FLASHPS_PROFILE", "none", /*overwrite=*/0);
  flashps::init_runtime();
  return Catch::Session().run(argc, argv);
}
