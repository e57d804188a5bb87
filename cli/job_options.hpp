// Options that `podcheck replay`, `podcheck validate` and `podcheck run --check` share: policy, required
// outputs, reports, threads, failure data.
#pragma once

#include "app/validate.hpp"
#include "cli/commands.hpp"

#include <string>

namespace podcheck::cli {

struct JudgeCliOptions {
  std::string policy = "calibrated";
  std::string require_outputs;  // "" = none
  std::string artifacts_dir = "podcheck-failures";
  app::ReportFiles reports;
  std::string fib_trace;
  int jobs = 0;
  bool no_artifacts = false;
  bool quiet = false;

  // --policy --require-outputs --json --junit --html --force -j --no-artifacts --artifacts-dir -q
  void add_to(CLI::App* cmd, bool with_artifacts = true);
  // Sets policy, required outputs, reports, artifacts and the thread count. Throws UsageError.
  void apply(app::JudgeJobOptions& jo) const;
};

}  // namespace podcheck::cli
