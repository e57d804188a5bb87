// podcheck run: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_run(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("run", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'run' is not available in this build yet"); });
}

}  // namespace podcheck::cli
