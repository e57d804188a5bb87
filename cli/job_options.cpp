#include "cli/job_options.hpp"

#include <omp.h>

#include <stdexcept>

namespace podcheck::cli {

void JobCliOptions::add_to(CLI::App* cmd) {
  cmd->add_option("--policy", policy, "tolerance policy: calibrated (default), flashinfer, flashinfer-bench");
  cmd->add_option("--json", reports.json, "write a JSON report");
  cmd->add_option("--junit", reports.junit, "write a JUnit XML report");
  cmd->add_flag("--force", reports.force, "replace existing report files");
  cmd->add_option("-j,--jobs", jobs, "threads (default: all cores)");
  cmd->add_flag("--no-artifacts", no_artifacts, "do not write failure data");
  cmd->add_option("--artifacts-dir", artifacts_dir, "folder for failure data (default podcheck-failures)");
  cmd->add_flag("-q,--quiet", quiet, "print failures and the summary only");
}

void JobCliOptions::apply(validation::JobOptions& jo) const {
  try {
    jo.policy = validation::policy_from_name(policy);
    reports.check();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (jobs < 0) throw UsageError("-j must be positive");
  if (jobs > 0) omp_set_num_threads(jobs);
  jo.artifacts = !no_artifacts;
  jo.artifacts_dir = artifacts_dir;
}

}  // namespace podcheck::cli
