// Options that `podcheck replay` and `podcheck validate` share: policy, reports, threads, failure data.
#pragma once

#include "cli/commands.hpp"
#include "validation/cli_support.hpp"
#include "validation/job.hpp"

#include <string>

namespace podcheck::cli {

struct JobCliOptions {
  std::string policy = "calibrated";
  std::string artifacts_dir = "podcheck-failures";
  validation::ReportFiles reports;
  int jobs = 0;
  bool no_artifacts = false;
  bool quiet = false;

  // --policy --json --junit --force -j --no-artifacts --artifacts-dir -q
  void add_to(CLI::App* cmd);
  // Sets policy, artifacts and the thread count; refuses existing report files without --force.
  // Throws UsageError.
  void apply(validation::JobOptions& jo) const;
};

}  // namespace podcheck::cli
