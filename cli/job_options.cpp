#include "cli/job_options.hpp"

#include <omp.h>

#include <stdexcept>

namespace podcheck::cli {

void JudgeCliOptions::add_to(CLI::App* cmd, bool with_artifacts) {
  cmd->add_option("--policy", policy, "tolerance policy: calibrated (default), flashinfer, flashinfer-bench");
  cmd->add_option("--require-outputs", require_outputs,
                  "outputs every case must have recorded, e.g. out_p,out_d,lse_p,lse_d (or all, out, lse): one "
                  "missing fails the case (default: a missing output is reported as not checked)");
  cmd->add_option("--json", reports.json, "write a JSON report");
  cmd->add_option("--junit", reports.junit, "write a JUnit XML report");
  cmd->add_option("--html", reports.html,
                  "write a self-contained HTML report: summary, a sortable and filterable table of every case, and "
                  "heat maps of error / bound for every failing case");
  cmd->add_option("--fib-trace", fib_trace,
                  "write the verdicts as flashinfer-bench Trace lines (JSONL), for its report tooling");
  cmd->add_flag("--force", reports.force, "replace existing report files");
  cmd->add_option("-j,--jobs", jobs, "threads (default: all cores)");
  if (with_artifacts) {
    cmd->add_flag("--no-artifacts", no_artifacts, "do not write failure data");
    cmd->add_option("--artifacts-dir", artifacts_dir, "folder for failure data (default podcheck-failures)");
  }
  cmd->add_flag("-q,--quiet", quiet, "print failures and the summary only");
}

void JudgeCliOptions::apply(app::JudgeJobOptions& jo) const {
  try {
    jo.replay.policy = validation::policy_from_name(policy);
    jo.replay.required = validation::OutputSet::parse(require_outputs.empty() ? "none" : require_outputs);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (jobs < 0) throw UsageError("-j must be positive");
  if (jobs > 0) omp_set_num_threads(jobs);
  jo.replay.artifacts.enabled = !no_artifacts;
  jo.replay.artifacts.dir = artifacts_dir;
  jo.reports = reports;
  jo.fib_trace = fib_trace;
  jo.quiet = quiet;
}

}  // namespace podcheck::cli
