// `podcheck inspect FILE.h5 [--case ID] [--check]`: what a fixture or trace file holds, without computing
// anything; --check reads every case through every reader check. The file is read in a child process
// (fixtures/isolated_read.hpp): a libhdf5 crash on a corrupt file is an input error, not a signal.
#pragma once

#include <string>

namespace podcheck::app {

struct InspectOptions {
  std::string file;
  std::string case_id;  // "" = list every case; else that one in full
  bool check = false;
};
int run_inspect(const InspectOptions& options);  // throws FormatError for a file the readers refuse

}  // namespace podcheck::app
