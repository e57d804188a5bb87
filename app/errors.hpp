// Errors the jobs throw for the command line to report: a usage error (bad option, unknown tier, a target
// file that may not be written) or an input error (a file that cannot be read). Both exit 2 with one line.
// Input files refused by the readers throw fixtures' FormatError, which is an input error too.
#pragma once

#include <stdexcept>

namespace podcheck::app {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace podcheck::app
