// podcheck export fib CASE... -o DIR: cases as a flashinfer-bench dataset folder (app/imports.hpp). A CASE is a
// canonical case id (built by podcheck's generator) or a fixture / trace file (all its cases, or --case ones).
#include "cli/commands.hpp"

#include "app/imports.hpp"

#include <memory>

namespace podcheck::cli {

void add_export(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("export", "Write podcheck cases in other tools' formats");
  cmd->require_subcommand(1);
  auto* fib = cmd->add_subcommand("fib", "cases -> flashinfer-bench definitions, workloads and blobs (+ proposed pod definitions)");
  auto o = std::make_shared<app::FibExportJob>();
  fib->add_option("cases", o->args, "case ids, or fixture / trace files")->required();
  fib->add_option("-o,--output", o->dir, "dataset folder to create (must not exist, or be empty)")->required();
  fib->add_option("--case", o->only, "with files: only these case ids");
  fib->callback([o, &result] { result.exit_code = app::export_fib_cases(*o); });
}

}  // namespace podcheck::cli
