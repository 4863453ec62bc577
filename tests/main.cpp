#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "core/runtime.h"

int main(int argc, char** argv) {
  flashps::init_runtime();
  return Catch::Session().run(argc, argv);
}
