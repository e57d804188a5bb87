// podcheck inspect FILE.h5 [--case ID] [--check]: what a fixture or trace file holds (app/inspect.hpp).
#include "cli/commands.hpp"

#include "app/inspect.hpp"

#include <memory>

namespace podcheck::cli {

void add_inspect(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("inspect", "List what a fixture or trace file holds (format, cases, parameters, tensors)");
  auto o = std::make_shared<app::InspectOptions>();
  cmd->add_option("file", o->file, "fixture or trace file (.h5)")->required();
  cmd->add_option("--case", o->case_id, "show one case in full (parameters, tensor shapes and sizes, provenance)");
  cmd->add_flag("--check", o->check, "also read every case fully (all checks a reader makes)");
  cmd->callback([o, &result] { result.exit_code = app::run_inspect(*o); });
}

}  // namespace podcheck::cli
