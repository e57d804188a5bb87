// podcheck export fib CASE... -o DIR: cases as a flashinfer-bench dataset folder (traces/fib.hpp). A CASE is a
// canonical case id (built by podcheck's generator) or a fixture / trace file (all its cases, or --case ones).
#include "cli/commands.hpp"
#include "fixtures/fixture_io.hpp"
#include "fixtures/sweep.hpp"
#include "traces/fib.hpp"
#include "traces/trace_io.hpp"

#include <cstdio>
#include <filesystem>
#include <set>

namespace podcheck::cli {

namespace {

std::vector<Case> cases_of(const std::string& arg, const std::set<std::string>& only) {
  std::vector<Case> out;
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) {
    auto keep = [&](const Case& c) { return only.empty() || only.count(c.id); };
    if (is_trace_file(arg)) {
      for (auto& t : read_traces(arg))
        if (keep(t.kase)) out.push_back(std::move(t.kase));
    } else {
      for (auto& f : read_fixtures(arg))
        if (keep(f.kase)) out.push_back(std::move(f.kase));
    }
    return out;
  }
  try {
    out.push_back(make_case(arg));
  } catch (const std::exception& e) {
    throw UsageError("'" + arg + "' is neither a fixture or trace file nor a case id podcheck generates: " + e.what());
  }
  return out;
}

}  // namespace

void add_export(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("export", "Write podcheck cases in other tools' formats");
  cmd->require_subcommand(1);
  auto* fib = cmd->add_subcommand("fib", "cases -> flashinfer-bench definitions, workloads and blobs (+ proposed pod definitions)");
  struct Opts {
    std::vector<std::string> args, only;
    std::string dir;
  };
  auto o = std::make_shared<Opts>();
  fib->add_option("cases", o->args, "case ids, or fixture / trace files")->required();
  fib->add_option("-o,--output", o->dir, "dataset folder to create (must not exist, or be empty)")->required();
  fib->add_option("--case", o->only, "with files: only these case ids");
  fib->callback([o, &result] {
    std::set<std::string> only(o->only.begin(), o->only.end());
    std::vector<Case> cases;
    for (const auto& a : o->args)
      for (auto& c : cases_of(a, only)) cases.push_back(std::move(c));
    if (cases.empty()) throw UsageError("no case to export");
    FibExportResult r;
    try {
      r = export_fib(cases, o->dir);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
    std::printf("exported %zu case(s) into %s (%zu files)\n", cases.size(), o->dir.c_str(), r.files.size());
    result.exit_code = 0;
  });
}

}  // namespace podcheck::cli
