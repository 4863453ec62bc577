// The default-model choice shared by the CLI and the desktop app.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "models/default_model.h"

using flashps::choose_model;

TEST_CASE("an explicit model folder wins, then the bundled model's first existing location", "[default_model]") {
  const std::string bundled = std::string(FLASHPS_SOURCE_DIR) + "/samples/models/flashps-fill-small";
  CHECK(choose_model("/some/model", {bundled}).dir == "/some/model");
  if (std::getenv("FLASHPS_MODEL") == nullptr) {
    const flashps::ModelChoice choice = choose_model("", {"/nonexistent/flashps-fill-small", bundled});
    CHECK(choice.dir == bundled);
    CHECK_FALSE(choice.random_weights);
    CHECK(choice.notes.empty());
  }
}
