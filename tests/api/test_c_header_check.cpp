// Runs tests/api/c_header_check.c: the public headers compiled as C99 agree with the library on
// struct sizes, and their functions link with C linkage.
#include <catch2/catch.hpp>

extern "C" int flashps_c_header_check(void);

TEST_CASE("the headers compiled as C agree with the library", "[api]") { CHECK(flashps_c_header_check() == 0); }
