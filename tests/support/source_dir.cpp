#include "support/source_dir.h"

namespace flashps::test {

std::string source_dir() { return FLASHPS_SOURCE_DIR; }

}  // namespace flashps::test
