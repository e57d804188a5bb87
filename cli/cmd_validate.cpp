// podcheck validate: the main job. The quick tier's reference self-consistency (fast vs naive on sampled
// rows) plus a replay of every trace under traces/golden/, each judged under the profiles its expectations name.
#include "cli/commands.hpp"
#include "cli/job_options.hpp"

#include "traces/trace_io.hpp"
#include "validation/cli_support.hpp"
#include "validation/job.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace podcheck::cli {

namespace v = podcheck::validation;

v::JobHooks job_hooks();  // cli/cmd_replay.cpp

void add_validate(CLI::App& app, CommandResult& result) {
  struct Opts {
    std::string tier = "quick", traces, shard;
    JobCliOptions job;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("validate", "The main job: reference self-consistency on a tier + replay of the golden traces");
  cmd->add_option("--tier", o->tier, "tier for the reference self-consistency check (default quick; 'none' skips it)");
  cmd->add_option("--traces", o->traces, "folder of traces to replay (default: traces/golden found upward from here "
                                         "or from the executable; 'none' skips)");
  cmd->add_option("--shard", o->shard, "k/n: only cases i with i % n == k");
  o->job.add_to(cmd);
  cmd->callback([o, &result] {
    namespace fs = std::filesystem;
    v::JobOptions jo;
    o->job.apply(jo);
    try {
      if (!o->shard.empty()) jo.shard = parse_shard(o->shard);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::string dir = o->traces;
    if (dir.empty()) {
      std::error_code ec;
      const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
      dir = v::find_golden_dir({fs::current_path().string(), ec ? std::string() : exe.parent_path().string()});
      if (dir.empty())
        std::fprintf(stderr, "validate: no traces/golden folder found above %s or the executable; "
                             "pass --traces DIR (replaying nothing)\n", fs::current_path().c_str());
    } else if (dir != "none" && !fs::is_directory(dir)) {
      throw UsageError("--traces " + dir + ": not a folder");
    }
    const bool quiet = o->job.quiet;
    const auto t0 = std::chrono::steady_clock::now();
    auto progress = [quiet, t0](const char* what) {
      return [quiet, t0, what](const v::CaseResult& r, int done, int total) {
        if (!quiet || r.verdict == v::Verdict::fail) {
          const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::printf("%s %4d/%-4d %5.0fs ", what, done, total, el);
          v::print_case(stdout, r);
        }
      };
    };
    const auto hooks = job_hooks();
    std::vector<v::CaseResult> results;
    if (o->tier != "none") {
      jo.progress = progress("self");
      results = v::selfcheck_tier(o->tier, hooks, jo);
    }
    if (!dir.empty() && dir != "none") {
      const auto files = v::trace_files_under(dir);
      if (files.empty()) std::fprintf(stderr, "validate: no *.h5 traces under %s\n", dir.c_str());
      jo.progress = progress("trace");
      auto replayed = v::replay_files(files, hooks, jo);
      results.insert(results.end(), replayed.begin(), replayed.end());
    }
    const auto s = v::summarize(results, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    // Failures again, together, so that they are not lost in the table.
    if (s.failed > 0) {
      std::printf("failures:\n");
      for (const auto& r : results)
        if (r.verdict == v::Verdict::fail) std::printf("  %s\n", v::console_line(r).c_str());
    }
    std::printf("%s\n", v::summary_line("validate", s).c_str());
    o->job.reports.write(results, s);
    result.exit_code = s.exit_code();
  });
}

}  // namespace podcheck::cli
