// `podcheck generate`: materialise cases (inputs from the counter-based generator) and their reference outputs
// (reference_fast, intended semantics) into one HDF5 fixture file. The output is checked before any work.
#pragma once

#include <string>
#include <vector>

namespace podcheck::app {

struct GenerateOptions {
  std::string tier;
  std::vector<std::string> cases;
  std::string shard = "0/1";
  std::string output;
  bool float32 = false;
  bool force = false;
};

int run_generate(const GenerateOptions& options);  // throws UsageError

}  // namespace podcheck::app
