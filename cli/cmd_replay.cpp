// podcheck replay: judge recorded traces against the reference, say what is wrong and where.
#include "cli/commands.hpp"
#include "cli/job_options.hpp"

#include "traces/trace_io.hpp"
#include "validation/cli_support.hpp"
#include "validation/job.hpp"

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
    std::string case_id, profile;
    JobCliOptions job;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("replay", "Replay traces against the reference: verdict, metrics, where and why");
  cmd->add_option("files", o->files, "trace files (HDF5)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--case", o->case_id, "only this case id");
  cmd->add_option("--profile", o->profile,
                  "intended | flashinfer | flashinfer-pod (default: the profiles the trace's expectations name, "
                  "else intended)");
  o->job.add_to(cmd);
  cmd->callback([o, &result] {
    v::JobOptions jo;
    o->job.apply(jo);
    try {
      if (!o->profile.empty()) jo.profile = profile_from_name(o->profile);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    jo.case_filter = o->case_id;
    const bool quiet = o->job.quiet;
    jo.progress = [quiet](const v::CaseResult& r, int, int) {
      if (!quiet || r.verdict == v::Verdict::fail) v::print_case(stdout, r);
    };
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = v::replay_files(o->files, job_hooks(), jo);
    const auto s = v::summarize(results, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::printf("%s\n", v::summary_line("replay", s).c_str());
    o->job.reports.write(results, s);
    result.exit_code = s.exit_code();
  });
}

}  // namespace podcheck::cli
