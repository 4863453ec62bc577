// Enum fields as a C caller stored them. C lets a program put any int in an enum field; loading
// it as the C++ enum type when it is none of the enumerators is undefined behaviour (UBSan:
// "load of value 9, which is not a valid value for type ..."), so the API reads enums as ints
// and refuses the values it does not know.
#pragma once
#include <cstring>

namespace flashps::api {

template <typename Enum>
int c_enum_value(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int), "the public enums are int-sized (abi_layout.cpp)");
  int value = 0;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

}  // namespace flashps::api
