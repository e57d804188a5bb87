// podcheck replay: judge recorded traces against the reference, say what is wrong and where.
#include "cli/commands.hpp"

#include "traces/trace_io.hpp"
#include "validation/cli_support.hpp"
#include "validation/job.hpp"

#include <omp.h>

#include <chrono>
#include <cstdio>

namespace podcheck::cli {

namespace v = podcheck::validation;

// Hooks into traces/ and fixtures/ for the validation job (shared with cmd_validate.cpp).
v::JobHooks job_hooks() {
  v::JobHooks h;
  h.read_traces = [](const std::string& p) { return read_traces(p); };
  h.write_failure = [](const std::string& p, const Trace& t) {
    TraceWriteOptions o;
    o.force = true;  // podcheck's own failure folder: the latest failure of a case replaces the previous one
    o.with_reference = true;
    write_traces(p, {t}, o);
  };
  h.list_tier = [](std::string_view tier, Shard s) { return list_tier(tier, s); };
  h.make_case = [](std::string_view id) { return make_case(id); };
  return h;
}

void add_replay(CLI::App& app, CommandResult& result) {
  struct Opts {
    std::vector<std::string> files;
    std::string case_id, policy = "calibrated", profile, artifacts_dir = "podcheck-failures";
    v::ReportFiles reports;
    int jobs = 0;
    bool no_artifacts = false, quiet = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("replay", "Replay traces against the reference: verdict, metrics, where and why");
  cmd->add_option("files", o->files, "trace files (HDF5)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--case", o->case_id, "only this case id");
  cmd->add_option("--policy", o->policy, "tolerance policy: calibrated (default), flashinfer, flashinfer-bench");
  cmd->add_option("--profile", o->profile,
                  "intended | flashinfer | flashinfer-pod (default: the profiles the trace's expectations name, "
                  "else intended)");
  cmd->add_option("--json", o->reports.json, "write a JSON report");
  cmd->add_option("--junit", o->reports.junit, "write a JUnit XML report");
  cmd->add_flag("--force", o->reports.force, "replace existing report files");
  cmd->add_option("-j,--jobs", o->jobs, "threads (default: all cores)");
  cmd->add_flag("--no-artifacts", o->no_artifacts, "do not write failure data");
  cmd->add_option("--artifacts-dir", o->artifacts_dir, "folder for failure data (default podcheck-failures)");
  cmd->add_flag("-q,--quiet", o->quiet, "print failures and the summary only");
  cmd->callback([o, &result] {
    v::JobOptions jo;
    try {
      jo.policy = v::policy_from_name(o->policy);
      if (!o->profile.empty()) jo.profile = profile_from_name(o->profile);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (o->jobs < 0) throw UsageError("-j must be positive");
    if (o->jobs > 0) omp_set_num_threads(o->jobs);
    o->reports.check();
    jo.case_filter = o->case_id;
    jo.artifacts = !o->no_artifacts;
    jo.artifacts_dir = o->artifacts_dir;
    const bool quiet = o->quiet;
    jo.progress = [quiet](const v::CaseResult& r, int, int) {
      if (!quiet || r.verdict == v::Verdict::fail) v::print_case(stdout, r);
    };
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = v::replay_files(o->files, job_hooks(), jo);
    const auto s = v::summarize(results, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::printf("%s\n", v::summary_line("replay", s).c_str());
    o->reports.write(results, s);
    result.exit_code = s.exit_code();
  });
}

}  // namespace podcheck::cli
