// Where `podcheck validate` finds the golden traces: beside an installed binary (<prefix>/share/podcheck/golden
// for <prefix>/bin/podcheck), else in the source tree this binary was built from (its path is compiled in),
// else nowhere. The working directory plays no part, so a validate run from anywhere judges the same files.
#pragma once

#include <string>

namespace podcheck::app {

struct GoldenLocation {
  std::string dir;    // "" when none was found
  std::string where;  // how it was found: "installed beside the executable", "source tree of this build"
  std::string tried;  // the places looked at, for the message when none was found
};

// `exe` is the running executable's path ("" to use /proc/self/exe).
GoldenLocation find_golden_traces(const std::string& exe = "");

}  // namespace podcheck::app
