// The source tree the tests were built from (samples/, ../shared): one function, so only
// source_dir.cpp carries the absolute path on its command line (ccache hits across clones).
#pragma once
#include <string>

namespace flashps::test {

std::string source_dir();

}  // namespace flashps::test
