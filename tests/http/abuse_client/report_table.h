// The benchmark's table: one block per phase, one row per measure, one column per label (a binary
// under test); with two labels, a third column B/A. A label given several reports (runs A B B A)
// shows their mean, the latency maxima their maximum, and counts by kind their sum.
#pragma once
#include <utility>

#include "abuse.h"

namespace abuse {

using LabeledReports = std::vector<std::pair<std::string, std::vector<json>>>;

void print_table(const LabeledReports& labeled);

}  // namespace abuse
